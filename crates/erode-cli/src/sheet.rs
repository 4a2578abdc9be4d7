//! The contact sheet of `erode run`'s variants: each one's height hillshaded in a tile, its
//! values written under it.

use std::path::PathBuf;

use erode::preview::{PreviewStyle, Rgb8Image, fit, render};
use plotters::prelude::*;
use rayon::prelude::*;

use crate::plot::{FONT, font};

/// Pixels along a tile's longer side.
const TILE: usize = 320;
/// Pixels around and between the tiles.
const GAP: usize = 12;
/// Pixels under a tile for its caption's lines.
const LINE: usize = 18;
/// Caption lines under a tile, at most.
const LINES: usize = 2;
/// Pixels across a cell, at least: room for a caption.
const MIN_WIDTH: usize = 200;
/// Pixels a caption's character takes, about.
const CHAR: usize = 7;
/// Tiles across, at most.
const COLUMNS: usize = 6;

/// One tile each `(caption, heightmap)`, in rows, in the order given.
pub fn contact_sheet(tiles: &[(String, PathBuf)]) -> anyhow::Result<Rgb8Image> {
    font();
    let images: Vec<Rgb8Image> = tiles
        .par_iter()
        .map(|(_, path)| -> anyhow::Result<Rgb8Image> {
            let map = erode_io::read(path, &Default::default())?.map;
            let (small, _) = fit(&map, None, TILE)?;
            Ok(render(&small, None, None, &PreviewStyle::default()))
        })
        .collect::<anyhow::Result<_>>()?;
    let n = tiles.len().max(1);
    let columns = ((n as f64).sqrt().ceil() as usize).clamp(1, COLUMNS);
    let rows = n.div_ceil(columns);
    // tiles as large as the largest map, up to TILE; captions need a width of their own
    let tile = images.iter().map(|i| i.width.max(i.height)).max().unwrap_or(TILE).min(TILE);
    let cell_w = tile.max(MIN_WIDTH) + GAP;
    let cell_h = tile + LINES * LINE + GAP;
    let (w, h) = (GAP + columns * cell_w, GAP + rows * cell_h);
    let mut pixels = vec![32u8; w * h * 3];
    for (k, image) in images.iter().enumerate() {
        let (x0, y0) = (GAP + (k % columns) * cell_w, GAP + (k / columns) * cell_h);
        // centred in its cell
        let (iw, ih) = (image.width.min(tile), image.height.min(tile));
        let (dx, dy) = ((cell_w - GAP - iw) / 2, (tile - ih) / 2);
        for row in 0..ih {
            let from = row * image.width * 3;
            let to = ((y0 + dy + row) * w + x0 + dx) * 3;
            let len = iw * 3;
            pixels[to..to + len].copy_from_slice(&image.pixels[from..from + len]);
        }
    }
    {
        let root = BitMapBackend::with_buffer(&mut pixels, (w as u32, h as u32)).into_drawing_area();
        let style = TextStyle::from((FONT, 15).into_font()).color(&RGBColor(230, 230, 230));
        for (k, (caption, _)) in tiles.iter().enumerate() {
            let (x0, y0) = (GAP + (k % columns) * cell_w, GAP + (k / columns) * cell_h + tile + 2);
            for (line, text) in wrap(caption, (cell_w - GAP) / CHAR).iter().take(LINES).enumerate() {
                // centred under the tile
                let width = root.estimate_text_size(text, &style).map_or(0, |(w, _)| w as usize);
                let x = x0 + (cell_w - GAP).saturating_sub(width) / 2;
                root.draw_text(text, &style, (x as i32, (y0 + line * LINE) as i32))
                    .map_err(|e| anyhow::anyhow!("contact sheet: {e}"))?;
            }
        }
        root.present().map_err(|e| anyhow::anyhow!("contact sheet: {e}"))?;
    }
    Ok(Rgb8Image { width: w, height: h, pixels })
}

/// `text` in lines of at most `most` characters, broken after commas where it can be.
fn wrap(text: &str, most: usize) -> Vec<String> {
    let mut lines = vec![String::new()];
    for word in text.split_inclusive(", ") {
        let last = lines.last_mut().map_or(0, |l| l.chars().count());
        if last > 0 && last + word.chars().count() > most {
            lines.push(String::new());
        }
        if let Some(l) = lines.last_mut() {
            l.push_str(word);
        }
    }
    lines.iter().map(|l| l.trim_end_matches(", ").to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::wrap;

    #[test]
    fn captions_break_after_commas() {
        assert_eq!(wrap("seed 3, rain_rate 2e-4", 12), ["seed 3", "rain_rate 2e-4"]);
        assert_eq!(wrap("seed 3, k 1", 40), ["seed 3, k 1"]);
    }
}

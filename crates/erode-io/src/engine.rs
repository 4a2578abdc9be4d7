//! Heightmaps as game engines import them: the sizes their terrains take, the file each reads,
//! and the numbers to type into its import dialog so the terrain keeps its metres.
//!
//! - Unity: a square RAW of 16-bit samples, little-endian ("Byte Order: Windows"), 2^n + 1
//!   samples a side (33 to 4097); the terrain's height is the range sample 65535 stands for.
//! - Unreal: a 16-bit greyscale PNG (or RAW) of one of the landscape sizes its docs recommend
//!   (127, 253, 505, 1009, 2017, 4033, 8129 a side); at Z scale 100 the samples span 512 m
//!   centred on the actor, so Z scale = range / 512 m · 100 and the actor sits at the range's
//!   middle; X and Y scale are the cell size in centimetres.
//! - Godot (Terrain3D): heights in metres as 32-bit float EXR, any size; vertex spacing the cell
//!   size.

use erode::Heightmap;

use crate::Format;

/// An engine erode writes for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// Unity's Terrain.
    Unity,
    /// Unreal Engine's Landscape.
    Unreal,
    /// Godot with Terrain3D.
    Godot,
}

/// Unreal's recommended landscape sizes (samples a side).
const UNREAL_SIZES: [usize; 7] = [127, 253, 505, 1009, 2017, 4033, 8129];

impl Engine {
    /// Every engine, in the order the help lists them.
    pub const ALL: [Engine; 3] = [Engine::Unity, Engine::Unreal, Engine::Godot];

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Unity => "unity",
            Engine::Unreal => "unreal",
            Engine::Godot => "godot",
        }
    }

    /// The engine of a name.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|e| e.name() == name)
    }

    /// The formats it imports, the first its usual one.
    pub fn formats(self) -> &'static [Format] {
        match self {
            Engine::Unity => &[Format::R16],
            Engine::Unreal => &[Format::Png, Format::R16],
            Engine::Godot => &[Format::Exr, Format::R16, Format::Png],
        }
    }

    /// The size (columns, rows) it wants for a map of `width` x `height` samples: Unity the
    /// nearest 2^n + 1 to the longer side, square; Unreal the nearest recommended size per side;
    /// Godot the map's own.
    pub fn size(self, width: usize, height: usize) -> (usize, usize) {
        let nearest =
            |n: usize, sizes: &[usize]| sizes.iter().copied().min_by_key(|&s| (s.abs_diff(n), s)).unwrap_or(n);
        match self {
            Engine::Unity => {
                let sizes: Vec<usize> = (5..=12).map(|k| (1 << k) + 1).collect();
                let n = nearest(width.max(height), &sizes);
                (n, n)
            }
            Engine::Unreal => (nearest(width, &UNREAL_SIZES), nearest(height, &UNREAL_SIZES)),
            Engine::Godot => (width, height),
        }
    }

    /// The sides a square terrain tile of this engine may have, samples (empty: any): Unity's
    /// 2^n + 1 from 33 to 4097, Unreal's landscape sizes.
    pub fn tile_sizes(self) -> Vec<usize> {
        match self {
            Engine::Unity => (5..=12).map(|k| (1 << k) + 1).collect(),
            Engine::Unreal => UNREAL_SIZES.to_vec(),
            Engine::Godot => Vec::new(),
        }
    }

    /// What to type into its import, for `map` (already at its size) written with samples
    /// spanning `range` metres (low, high): (setting, value) pairs.
    pub fn import_settings(self, map: &Heightmap, range: (f64, f64)) -> Vec<(String, String)> {
        let g = &map.heights;
        let cell = g.cell_size();
        let (w, h) = (g.width(), g.height());
        let (low, high) = range;
        let span = high - low;
        let m = |v: f64| format!("{} m", round(v));
        match self {
            Engine::Unity => vec![
                ("Import Raw: Depth".into(), "Bit 16".into()),
                ("Resolution".into(), format!("{w}")),
                ("Byte Order".into(), "Windows".into()),
                ("Terrain Size X".into(), m(cell.x * (w - 1) as f64)),
                ("Terrain Size Y (height)".into(), m(span)),
                ("Terrain Size Z".into(), m(cell.y * (h - 1) as f64)),
                ("Terrain position Y".into(), m(low)),
            ],
            Engine::Unreal => vec![
                ("Heightmap File".into(), "16-bit greyscale".into()),
                ("Overall Resolution".into(), format!("{w} x {h}")),
                ("Scale X".into(), round(cell.x * 100.0)),
                ("Scale Y".into(), round(cell.y * 100.0)),
                ("Scale Z".into(), round(span / 512.0 * 100.0)),
                ("Location Z".into(), format!("{} cm", round((low + span / 2.0) * 100.0))),
            ],
            Engine::Godot => vec![
                ("Terrain3D import".into(), "heights in metres (scale 1, offset 0)".into()),
                ("Vertex spacing".into(), m(cell.x)),
                ("Size".into(), format!("{w} x {h}")),
            ],
        }
    }
}

/// `v` to 6 significant digits, without trailing zeros.
fn round(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let digits = (6 - 1 - v.abs().log10().floor() as i32).max(0) as usize;
    let s = format!("{v:.digits$}");
    if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(Engine::Unity.size(1024, 1024), (1025, 1025));
        assert_eq!(Engine::Unity.size(4096, 3000), (4097, 4097));
        assert_eq!(Engine::Unity.size(10, 10), (33, 33));
        assert_eq!(Engine::Unreal.size(1024, 2000), (1009, 2017));
        assert_eq!(Engine::Godot.size(700, 500), (700, 500));
        assert!(Engine::Unity.tile_sizes().contains(&1025) && !Engine::Unity.tile_sizes().contains(&1024));
        assert!(Engine::Unreal.tile_sizes().contains(&505) && Engine::Godot.tile_sizes().is_empty());
        assert_eq!(round(1234.56789), "1234.57");
        assert_eq!(round(0.5), "0.5");
    }
}

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use erode::Grid;
use erode::texture::{Baker, MASKS, Mask, NormalConvention, Options, Rules};
use erode_io::texture::{Bits, Texture, write_png};
use rayon::prelude::*;

use crate::input::InputArgs;

/// Bake texture maps of a heightmap for engines and texture tools: masks (0..1 by a fixed,
/// documented mapping each), a tangent-space normal map, splat maps and an albedo.
#[derive(clap::Args)]
#[command(after_help = after_help())]
pub struct Args {
    /// The heightmap.
    #[arg(required_unless_present = "print_rules")]
    heightmap: Option<PathBuf>,
    /// A run's output folder (`erode simulate … -o RUN --outputs erosion,deposition,sediment_depth`):
    /// its erosion, deposition and sediment_depth maps make the masks of those names.
    run: Option<PathBuf>,
    /// Output folder (made if missing; files of the names below are replaced).
    #[arg(short, long, required_unless_present = "print_rules")]
    output: Option<PathBuf>,
    /// What to bake, comma-separated: mask names, `normal`, `splat` (default: every mask the
    /// inputs give, the normal map and the splat).
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    only: Vec<String>,
    /// Bits a channel of the PNGs: 8 or 16.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u8).range(8..=16))]
    bits: u8,
    /// The masks' file format: png (8 or 16 bits), tif or exr (32-bit float values 0..1).
    #[arg(long, default_value = "png", value_parser = ["png", "tif", "exr"])]
    format: String,
    /// The normal map's green: opengl (up the image: Blender, Godot, Unity) or directx (down:
    /// Unreal).
    #[arg(long, default_value = "opengl", value_parser = ["opengl", "directx"])]
    normal: String,
    /// The normal map's heights times this (1: true scale).
    #[arg(long, default_value_t = 1.0)]
    normal_strength: f64,
    /// Splat rules (TOML; `--print-rules` shows the default to start from).
    #[arg(long, value_name = "FILE")]
    rules: Option<PathBuf>,
    /// Print the default splat rules as TOML and stop.
    #[arg(long)]
    print_rules: bool,
    /// The change of slope across the curvature radius (σ·∇²z) that maps to 0.5 ∓ 0.38, m/m.
    #[arg(long, default_value_t = Options::default().curvature_scale)]
    curvature_scale: f64,
    /// The scale the curvature is seen at: the σ of its Gaussian blur, cells.
    #[arg(long, default_value_t = Options::default().curvature_radius)]
    curvature_radius: f64,
    /// How far the occlusion looks for the horizon, cells.
    #[arg(long, default_value_t = Options::default().occlusion_radius)]
    occlusion_radius: usize,
    /// The depth of erosion, deposition or loose layer that maps to 0.63, m.
    #[arg(long, default_value_t = Options::default().depth_scale)]
    depth_scale: f64,
    #[command(flatten)]
    input: InputArgs,
}

/// The help's examples and every mask's mapping, from [`MASKS`].
fn after_help() -> String {
    let mut text = String::from(
        "Examples:
  erode masks out/height.tif -o tex                  (every mask the heightmap gives, normal, splat)
  erode masks out/height.tif out -o tex               (and erosion, deposition, sediment from the run)
  erode masks dem.tif -o tex --only flow,occlusion --bits 16
  erode masks t.tif -o tex --normal directx           (Unreal's green)
  erode masks --print-rules > rules.toml              (the default splat, to edit; then --rules rules.toml)

The masks and their mappings (docs/masks.md):",
    );
    for m in MASKS {
        let from = m.run_map.map_or(String::new(), |r| format!(" [from the run's {r}]"));
        text.push_str(&format!("\n  {:<11} {}{from}\n              {}", m.name, m.summary, m.mapping));
    }
    text
}

/// What a bake makes besides the masks.
const EXTRAS: [&str; 2] = ["normal", "splat"];

pub fn run(a: Args) -> anyhow::Result<()> {
    if a.print_rules {
        print!("{}", erode_io::texture::rules_toml(&Rules::default()));
        return Ok(());
    }
    let (Some(heightmap), Some(out)) = (a.heightmap.clone(), a.output.clone()) else {
        bail!("give a heightmap and -o FOLDER");
    };
    if a.bits != 8 && a.bits != 16 {
        bail!("--bits {}: PNG channels are 8 or 16 bits", a.bits);
    }
    let bits = if a.bits == 8 { Bits::Eight } else { Bits::Sixteen };
    let options = Options {
        curvature_scale: a.curvature_scale,
        curvature_radius: a.curvature_radius,
        occlusion_radius: a.occlusion_radius,
        depth_scale: a.depth_scale,
    };
    options.validate()?;
    if !(a.normal_strength.is_finite() && a.normal_strength > 0.0) {
        bail!("--normal-strength {}: a positive number", a.normal_strength);
    }
    for name in &a.only {
        if Mask::from_name(name).is_none() && !EXTRAS.contains(&name.as_str()) {
            let known: Vec<&str> = MASKS.iter().map(|m| m.name).chain(EXTRAS).collect();
            bail!("--only {name}: no such map; the maps are {}", known.join(", "));
        }
    }
    let rules = match &a.rules {
        Some(path) => erode_io::texture::read_rules(path)?,
        None => Rules::default(),
    };
    rules
        .validate()
        .with_context(|| a.rules.as_ref().map_or("the default rules".into(), |p| p.display().to_string()))?;
    let wanted = |name: &str| a.only.is_empty() || a.only.iter().any(|n| n == name);
    // the run's maps: found before the heightmap is read, so a missing one costs no wait
    let run_files = match &a.run {
        Some(dir) => run_maps(dir)?,
        None => Vec::new(),
    };
    for info in MASKS.iter().filter(|m| !a.only.is_empty() && wanted(m.name)) {
        if let Some(map) = info.run_map
            && !run_files.iter().any(|(n, _)| *n == map)
        {
            match &a.run {
                Some(dir) => bail!(
                    "--only {}: {} has no `{map}` map (run the model with `--outputs {map}`)",
                    info.name,
                    dir.display()
                ),
                None => bail!(
                    "--only {}: the mask is made from a run's `{map}` map; give the run's folder after the heightmap",
                    info.name
                ),
            }
        }
    }
    let map = a.input.read(&heightmap)?.map;
    let mut grids: Vec<(&'static str, Grid<f32>)> = Vec::new();
    for (name, path) in &run_files {
        grids.push((name, erode_io::read(path, &Default::default())?.map.heights));
    }
    let mut baker = Baker::new(&map, options).with_context(|| heightmap.display().to_string())?;
    for ((name, grid), (_, path)) in grids.iter().zip(&run_files) {
        baker = baker.with_run_map(name, grid).with_context(|| path.display().to_string())?;
    }
    let masks: Vec<Mask> = baker.available().into_iter().filter(|m| wanted(m.info().name)).collect();
    // every map is made before any file is written
    let (w, h) = (map.heights.width(), map.heights.height());
    let mut files: Vec<(String, Vec<f32>, usize, serde_json::Value)> = Vec::new();
    let ext = a.format.as_str();
    for &m in &masks {
        let info = m.info();
        let values = baker.mask(m)?.to_vec();
        let about = serde_json::json!({ "mask": info.name, "summary": info.summary, "mapping": info.mapping });
        files.push((format!("{}.{ext}", info.name), values, 1, about));
    }
    let convention = if a.normal == "directx" { NormalConvention::DirectX } else { NormalConvention::OpenGl };
    if wanted("normal") {
        let values = baker.normal_map(convention, a.normal_strength)?;
        let about = serde_json::json!({
            "normal": a.normal,
            "strength": a.normal_strength,
            "mapping": format!(
                "tangent space, each component n·0.5 + 0.5: red east, green {}, blue up",
                if convention == NormalConvention::OpenGl { "north (up the image)" } else { "south (down the image)" }
            ),
        });
        files.push(("normal.png".into(), values, 3, about));
    }
    if wanted("splat") {
        let splat = baker
            .splat(&rules)
            .with_context(|| a.rules.as_ref().map_or("the default rules".into(), |p| p.display().to_string()))?;
        for (k, group) in splat.names.chunks(4).enumerate() {
            let mut rgba = vec![0.0f32; w * h * 4];
            for c in 0..group.len() {
                let layer = &splat.weights[k * 4 + c];
                rgba.par_chunks_mut(4).zip(layer.par_iter()).for_each(|(px, &v)| px[c] = v);
            }
            let about = serde_json::json!({ "splat": group, "mapping": "each channel a layer's weight; all channels of all splat maps sum to 1" });
            files.push((format!("splat_{k}.png"), rgba, 4, about));
        }
        for (name, weights) in splat.names.iter().zip(splat.weights) {
            let about = serde_json::json!({ "layer": name, "mapping": "the layer's weight, 0..1" });
            files.push((format!("layer_{name}.png"), weights, 1, about));
        }
        files.push((
            "albedo.png".into(),
            splat.albedo,
            3,
            serde_json::json!({ "albedo": "the layers' colours blended by weight, sRGB" }),
        ));
    }
    std::fs::create_dir_all(&out).with_context(|| format!("{}: cannot make the folder", out.display()))?;
    for (name, ..) in &files {
        erode_io::check_not_input(&out.join(name), &heightmap)?;
    }
    files.par_iter().try_for_each(|(name, values, channels, _)| -> anyhow::Result<()> {
        let path = out.join(name);
        if *channels == 1 && ext != "png" && !name.starts_with("layer_") {
            let grid = Grid::from_vec(w, h, map.heights.cell_size(), values.clone())?;
            erode_io::write(&path, &erode::Heightmap::new(grid)?, &Default::default())?;
        } else {
            write_png(&path, &Texture { width: w, height: h, channels: *channels, values }, bits)?;
        }
        Ok(())
    })?;
    let sidecar = serde_json::json!({
        "heightmap": heightmap.display().to_string(),
        "run": a.run.as_ref().map(|p| p.display().to_string()),
        "size": [w, h],
        "cell_size": [map.heights.cell_size().x, map.heights.cell_size().y],
        "bits": if ext == "png" { a.bits } else { 32 },
        "options": {
            "curvature_scale": a.curvature_scale,
            "curvature_radius": a.curvature_radius,
            "occlusion_radius": a.occlusion_radius,
            "depth_scale": a.depth_scale,
        },
        "files": files.iter().map(|(name, _, _, about)| (name.clone(), about.clone())).collect::<serde_json::Map<_, _>>(),
    });
    erode_io::write_atomic(&out.join("masks.json"), serde_json::to_string_pretty(&sidecar)?.as_bytes())?;
    Ok(())
}

/// The run maps a folder holds: (name, file) for each of `erosion`, `deposition` and
/// `sediment_depth` found (a heightmap file of that stem).
fn run_maps(dir: &Path) -> anyhow::Result<Vec<(&'static str, PathBuf)>> {
    if !dir.is_dir() {
        bail!("{}: not a folder (give a run's output folder after the heightmap)", dir.display());
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| dir.display().to_string())?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| erode_io::Format::from_path(p).is_ok())
        .collect();
    entries.sort();
    let mut found = Vec::new();
    for name in MASKS.iter().filter_map(|m| m.run_map) {
        if let Some(p) = entries.iter().find(|p| p.file_stem().and_then(|s| s.to_str()) == Some(name)) {
            found.push((name, p.clone()));
        }
    }
    if found.is_empty() {
        bail!(
            "{}: no erosion, deposition or sediment_depth map (run the model with `--outputs erosion,deposition,sediment_depth`)",
            dir.display()
        );
    }
    Ok(found)
}

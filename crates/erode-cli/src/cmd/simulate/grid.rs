//! `erode simulate grid`: the virtual-pipe model on a heightmap.

use std::path::PathBuf;

use anyhow::{Context, bail};
use erode::contract::{GridRun, Model, TiledGridRun};
use erode::models::grid::{self, StartMaps, State};

use erode_io::run::{GridFront, Job, TiledGridFront, Until};

use super::heightmap::{Input, MapArgs, MapFiles, name_the_map_file};
use super::outline::Outline;

/// Shallow water in virtual pipes eroding a heightmap (Mei et al. 2007; Jákó & Tóth 2011).
#[derive(clap::Args)]
#[command(
    after_help = "Outputs in OUTDIR: height, water, sediment (suspended), sediment_depth (the loose layer on the bedrock),
hardness, erosion, deposition, flow, velocity
(each in every --format), preview.png and report.json; checkpoints in OUTDIR/checkpoints.

Examples:
  erode simulate grid t.tif -o out --iterations 1000
  erode simulate grid dem.tif --params grid.toml --set rain_rate=0.01 --set pipes=8 -o out
  erode simulate grid t.tif -o out --iterations 300 --checkpoint-every 100
  erode simulate grid t.tif -o out --iterations 600 --resume
  erode simulate grid t.tif -o out --duration 2h
  erode simulate grid big.tif -o out --tiles 2048           (larger than memory; docs/tiles.md)
  erode simulate grid t.tif -o out --backend gpu            (see erode gpu-info)"
)]
pub struct Args {
    #[command(flatten)]
    maps: MapArgs,
    /// Start from a named parameter set: rivers (the default), gentle, badlands, alpine,
    /// classic (see `erode params grid --preset NAME`). --params and --set apply on top.
    #[arg(long, value_name = "NAME")]
    preset: Option<String>,
    /// Iterations in total (with --resume, including those already done).
    #[arg(long, default_value_t = 1000)]
    iterations: u64,
    /// Run until this much storm has been simulated, in seconds (or with a unit: 90s, 30min,
    /// 2h), instead of a number of iterations; the terrain changes as in `morphological_factor`
    /// times as long. With --resume, in total.
    #[arg(long, value_name = "TIME", conflicts_with = "iterations")]
    duration: Option<String>,
    /// Hardness map (0..1, 1 erodes least); sets hardness_mode = "map" (give it again with
    /// --resume: the mode is a parameter).
    #[arg(long)]
    hardness_map: Option<PathBuf>,
    /// Rain map (>= 0): rain_rate times its value on each cell; sets rain_mode = "map" (give it
    /// again with --resume: the mode is a parameter).
    #[arg(long)]
    rain_map: Option<PathBuf>,
    /// Depth of loose material on the bedrock at the start, m (a former run's sediment_depth
    /// map, to go on with its layer; in place of soil_depth everywhere).
    #[arg(long)]
    sediment_depth_map: Option<PathBuf>,
    /// Run tile by tile: each tile's core at most SIZE cells a side, run with --overlap cells
    /// around it for all --iterations in turn, the results blended across the overlaps. For maps
    /// whose state does not fit in memory (~160 B a cell at once; tiled, the map's ~20 B a cell
    /// and one tile's); see docs/tiles.md for what differs from one run.
    #[arg(long, value_name = "SIZE", conflicts_with = "duration")]
    pub(super) tiles: Option<usize>,
    /// Cells each tile runs beyond its core on every side inside the map (with --tiles); the
    /// blend uses the cells at least half of it from a window's edge.
    #[arg(long, value_name = "CELLS", requires = "tiles", default_value_t = DEFAULT_OVERLAP)]
    overlap: usize,
    /// Over MPI ranks (`mpirun -np K`): cut each band of rows into PARTS parts of its columns,
    /// tiles of rows and columns that send less over their halos at many ranks (K a multiple of
    /// PARTS; parts of whole 1024-column segments, the last at least 5 columns; docs/ranks.md).
    /// The same bytes as bands of whole rows; a run of one process has nothing to cut.
    #[arg(long, value_name = "PARTS", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    rank_columns: u64,
    #[command(flatten)]
    pub(super) run: super::RunArgs,
}

/// `--overlap`'s default, cells.
pub const DEFAULT_OVERLAP: usize = 128;

impl Args {
    /// The parameters: the preset (the default's name when none was given), a file and `--set`
    /// on top, the seed and the modes the maps given set; validated.
    fn params(&self) -> anyhow::Result<(grid::Params, String)> {
        let preset = self.preset.clone().unwrap_or_else(|| grid::PRESETS[0].name.to_string());
        let base = grid::preset(&preset).context("--preset")?;
        let mut params: grid::Params = erode_io::params::load_onto(&base, self.run.params.as_deref(), &self.run.sets)?;
        if let Some(seed) = self.maps.seed {
            params.seed = seed;
        }
        if self.hardness_map.is_some() {
            params = params.with_hardness_map().context("--hardness-map")?;
        }
        if self.rain_map.is_some() {
            params = params.with_rain_map().context("--rain-map")?;
        }
        params.validate()?;
        Ok((params, preset))
    }

    /// The maps' files given.
    fn files(&self) -> MapFiles<'_> {
        MapFiles {
            hardness: self.hardness_map.as_deref(),
            rain: self.rain_map.as_deref(),
            sediment_depth: self.sediment_depth_map.as_deref(),
        }
    }
}

/// The maps a run starts from besides the heights: those read with `input`, its nodata.
pub(super) fn start_maps(input: &Input) -> StartMaps<'_> {
    StartMaps {
        hardness: input.hardness.as_ref(),
        rain: input.rain.as_ref(),
        water: None,
        sediment_depth: input.sediment_depth.as_ref(),
        nodata: input.loaded.map.nodata_mask(),
    }
}

/// Validates `a` into a job: parameters, input, maps, checkpoint and backend.
pub fn job(a: Args, quiet: bool) -> anyhow::Result<Job<GridRun, GridFront>> {
    let (formats, wanted) = (crate::output::formats(&a.maps.format)?, a.maps.wanted(&grid::INFO)?);
    let (params, preset) = a.params()?;
    let duration = a.duration.as_deref().map(parse_duration).transpose()?;
    let files = a.files();
    let ranks = crate::ranks::exchange();
    let work = match &ranks {
        // a run over ranks builds no state of the whole map, fresh or resumed (a resume reads the
        // checkpoint a batch at a time)
        Some(ex) => crate::memory::Work::GridRanks {
            ranks: ex.ranks() as u64,
            local: crate::ranks::local() as u64,
            maps: files.named().iter().any(|(_, file)| file.is_some()),
            rain_map: files.rain.is_some(),
        },
        _ => crate::memory::Work::Grid,
    };
    let shape = |m: &GridRun| (m.state().width, m.state().height, m.state().cell_size);
    // the model, the hash of the inputs it began from (a resumed one's, checked to be the
    // checkpoint's by the job), what the run keeps of the input (its footprint: the model holds
    // the heights), the input's name and the checkpoint resumed
    let (mut model, hash, footprint, name, checkpoint) = match &ranks {
        Some(ex) => {
            // rank 0 of `mpirun -np K`: it learns the whole map's outline without holding it
            // (of a TIFF, a batch of rows at a time), and every rank, rank 0 among them, reads
            // its own window's rows
            let mut outline = Outline::read(&a.maps, files, &a.run, work)?;
            let checkpoint = a.run.checkpoint_unread(GridRun::NAME)?;
            if a.maps.backend == super::Backend::Gpu {
                let e = erode::SimError::from(grid::blocks::BlockError::Unsupported("the GPU backend"));
                return Err(anyhow::Error::new(e).context("running over MPI ranks"));
            }
            let model = match &checkpoint {
                // resuming: rank 0 reads the checkpoint as it unpacks and hands every rank its
                // window's rows of it, a batch at a time
                Some(c) => {
                    let model = c
                        .resume_streamed(|open| {
                            GridRun::resume_over_ranks(params.clone(), open, a.run.input.max_cells, ex.clone())
                        })
                        .context("running over MPI ranks")?;
                    let f = &outline.footprint;
                    super::heightmap::fits((f.width, f.height, f.cell_size), c, model, shape)?
                }
                None => {
                    let path = a.maps.input_file.as_deref().unwrap_or(std::path::Path::new(""));
                    let request = super::rows::Request::new(path, &a.run.input, outline.fills(), files).to_bytes();
                    let wrap = params.border == grid::Border::Wrap;
                    let start = outline.leader_window(&request, ex.ranks(), wrap);
                    GridRun::start_over_ranks(params.clone(), start, &request, ex.clone())
                        .map_err(|e| name_the_map_file(e, files))
                        .context("running over MPI ranks")?
                }
            };
            let mut model = model;
            model.tile_ranks(a.rank_columns as usize).context("--rank-columns")?;
            let hash = match &checkpoint {
                Some(_) => outline.input_hash(&a.run.input.options()?, files)?,
                None => model.input_hash(),
            };
            (model, hash, outline.footprint, outline.name, checkpoint)
        }
        None => {
            let input = Input::read(&a.maps, files, &a.run, "grid", work)?;
            let maps = start_maps(&input);
            let checkpoint = a.run.checkpoint(GridRun::NAME)?;
            let (model, hash) = match &checkpoint {
                Some(c) => {
                    let resume = |b: &[u8]| GridRun::resume(params.clone(), b, a.run.input.max_cells);
                    (input.resume(c, resume, shape)?, maps.input_hash(input.terrain()))
                }
                None => {
                    let st = State::new(input.terrain(), &params, maps).map_err(|e| name_the_map_file(e, files))?;
                    let model = GridRun::new(params.clone(), st)?;
                    let hash = model.input_hash();
                    (model, hash)
                }
            };
            let name = input.name.clone();
            (model, hash, input.into_footprint(), name, checkpoint)
        }
    };
    let cell = footprint.cell_size;
    let stamp = super::heightmap::stamp(name, hash, files.named());
    if ranks.is_none() {
        a.maps.backend.place(&mut model, quiet, GridRun::use_gpu)?;
    }
    let derived = model.derived();
    if derived.substeps > 1 && !quiet {
        eprintln!(
            "erode: dt = {} s exceeds the stable step ({:.4} s for these pipes and cells); running {} sub-steps per iteration",
            params.dt, derived.stable_dt, derived.substeps
        );
    }
    let until = match duration {
        Some(total) => Until::Seconds { total, text: a.duration.clone().unwrap_or_default() },
        None => Until::Count(a.iterations),
    };
    super::say_scale(params.scale_note(cell));
    let front = GridFront::new(&model, footprint, formats, wanted, &preset);
    let files = [a.maps.input_file.as_deref(), a.hardness_map.as_deref(), a.rain_map.as_deref()];
    a.run.job(model, front, until, checkpoint, stamp, &files)
}

/// Validates `a` (with `--tiles`) into a job run tile by tile.
pub fn tiled_job(a: Args, tile: usize) -> anyhow::Result<Job<TiledGridRun, TiledGridFront>> {
    use erode::models::grid::tiled::Tiled;
    let (formats, wanted) = (crate::output::formats(&a.maps.format)?, a.maps.wanted(&grid::INFO)?);
    let (params, preset) = a.params()?;
    if a.maps.backend == super::Backend::Gpu {
        bail!("--tiles runs on the CPU: leave out --backend gpu (one GPU run holds a map up to 16384² whole)");
    }
    let files = a.files();
    let window = (tile + 2 * a.overlap) as u64;
    let work = crate::memory::Work::TiledGrid { window_cells: window * window };
    let input = Input::read(&a.maps, files, &a.run, "grid", work)?;
    let maps = start_maps(&input);
    let hash = maps.input_hash(input.terrain());
    let stamp = input.stamp(hash, files.named());
    let names = TiledGridFront::blended_maps(&wanted);
    let tiled = Tiled::new(params, input.terrain().clone(), maps, (tile, a.overlap), a.iterations, &names).map_err(
        |e| match e {
            erode::SimError::Tiles(e) => anyhow::anyhow!("--tiles {tile} --overlap {}: {e}", a.overlap),
            e => name_the_map_file(e, files),
        },
    )?;
    let checkpoint = a.run.checkpoint(GridRun::NAME)?;
    let model = match &checkpoint {
        Some(c) => input.resume(c, |b| TiledGridRun::resume(tiled, b), |m| m.tiled().shape())?,
        None => TiledGridRun::new(tiled),
    };
    super::say_scale(model.tiled().params().scale_note(input.terrain().cell_size()));
    let until = Until::Count(model.tiled().layout().len() as u64 * a.iterations);
    let front = TiledGridFront::new(input.loaded, formats, wanted, &preset);
    let files = [a.maps.input_file.as_deref(), a.hardness_map.as_deref(), a.rain_map.as_deref()];
    a.run.job(model, front, until, checkpoint, stamp, &files)
}

/// Seconds from `90`, `90s`, `30min` or `2h`.
fn parse_duration(text: &str) -> anyhow::Result<f64> {
    let t = text.trim();
    let (number, unit) = match t.find(|c: char| c.is_ascii_alphabetic()) {
        Some(k) => (&t[..k], &t[k..]),
        None => (t, "s"),
    };
    let scale = match unit {
        "s" => 1.0,
        "min" | "m" => 60.0,
        "h" => 3600.0,
        _ => bail!("--duration {text}: unknown unit `{unit}`; use s, min or h"),
    };
    let value: f64 = number.trim().parse().map_err(|_| anyhow::anyhow!("--duration {text}: not a number of {unit}"))?;
    if !(value.is_finite() && value > 0.0) {
        bail!("--duration {text}: must be a positive time");
    }
    Ok(value * scale)
}

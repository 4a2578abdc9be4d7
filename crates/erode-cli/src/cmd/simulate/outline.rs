//! What rank 0 of a run over MPI ranks knows of the whole map (`mpirun -np K erode simulate
//! grid`): its footprint (shape, cell size, nodata cells, what the file said), the value the
//! nodata cells of the heights and of each map take (the mean of their valid cells, a value of
//! the whole map that every rank's rows need), the rain map (which the run's checkpoints carry
//! whole) and, when resuming, the inputs' hash. Of TIFF and BigTIFF inputs it learns them a
//! batch of rows at a time (`erode_io::rows::scan`), as the other ranks read their windows, so no
//! rank reads the whole heightmap; an input in another format is read whole, as one process
//! reads it, and let go.

use std::path::Path;

use anyhow::bail;
use erode::checkpoint::InputsHash;
use erode::models::grid::blocks::{Layout, LeaderWindow};
use erode_io::{Footprint, Format, ReadOptions};

use super::heightmap::{Input, MapArgs, MapFiles, check_shape};

/// Rank 0's outline of a run's inputs.
pub struct Outline {
    /// The input as the user named it (its path).
    pub name: String,
    path: std::path::PathBuf,
    /// The heightmap's footprint.
    pub footprint: Footprint,
    /// The value the nodata cells of the heights, hardness, rain and sediment depth maps take,
    /// of those with any.
    fills: [Option<f32>; 4],
    /// The rain map (its nodata cells filled), if one was given.
    rain: Option<Vec<f32>>,
    /// The inputs' hash, of inputs read whole (those read by rows are hashed by another pass,
    /// when a resume asks: [`Outline::input_hash`]).
    hash: Option<u64>,
}

impl Outline {
    /// The outline of the heightmap and `files` that `maps` and `run` name, checking the memory
    /// `work` needs.
    pub fn read(
        maps: &MapArgs,
        files: MapFiles<'_>,
        run: &super::RunArgs,
        work: crate::memory::Work,
    ) -> anyhow::Result<Self> {
        let Some(path) = &maps.input_file else { bail!("simulate grid: needs an input heightmap") };
        let tiff = |p: &Path| Format::from_path(p).is_ok_and(|f| f == Format::Tiff);
        let by_rows = tiff(path) && files.named().iter().all(|(_, f)| f.is_none_or(tiff));
        if !by_rows {
            return Ok(Self::of_input(Input::read(maps, files, run, "grid", work)?));
        }
        let options = run.input.options()?;
        let (width, height) = erode_io::rows::size_of(path, &options)?;
        crate::memory::check(width, height, work, run.input.max_memory)?;
        let heights = erode_io::rows::scan(path, &options, |_| {})?;
        let mut fills = [heights.fill, None, None, None];
        let mut rain = None;
        for (k, map) in files.reads().into_iter().enumerate() {
            let Some(file) = map.file else { continue };
            let mut values = Vec::new();
            let keep = map.name == "rain";
            let scan = erode_io::rows::scan(file, &map.options, |r| {
                if keep {
                    values.extend_from_slice(r.heights.as_slice());
                }
            })?;
            check_shape(file, map.what, (scan.footprint.width, scan.footprint.height), (width, height))?;
            if let (Some(fill), Some(mask)) = (scan.fill, scan.footprint.nodata_mask()) {
                values.iter_mut().zip(mask).filter(|(_, o)| **o).for_each(|(v, _)| *v = fill);
            }
            fills[k + 1] = scan.fill;
            rain = rain.or(keep.then_some(values));
        }
        Ok(Self {
            name: path.display().to_string(),
            path: path.clone(),
            footprint: heights.footprint,
            fills,
            rain,
            hash: None,
        })
    }

    /// The outline of `input`, read whole (which it lets go).
    fn of_input(input: Input) -> Self {
        let map = &input.loaded.map;
        let fill = map.nodata_mask().and_then(|m| m.iter().position(|&o| o)).map(|i| map.heights.as_slice()[i]);
        let hash = super::grid::start_maps(&input).input_hash(input.terrain());
        let [hardness, rain, depth] = input.fills;
        let rain_map = input.rain.as_ref().map(|g| g.as_slice().to_vec());
        let (name, path) = (input.name.clone(), input.name.clone().into());
        Self {
            name,
            path,
            footprint: input.into_footprint(),
            fills: [fill, hardness, rain, depth],
            rain: rain_map,
            hash: Some(hash),
        }
    }

    /// The value the nodata cells of the heights, hardness, rain and sediment depth maps take.
    pub fn fills(&self) -> [Option<f32>; 4] {
        self.fills
    }

    /// Rank 0's window over `ranks` ranks (`wrap`: the top and bottom rows are neighbours), read
    /// by `request` (a [`super::rows::Request`]'s bytes) as every other rank reads its own, and
    /// what rank 0 keeps of the whole map for the run's checkpoints: the nodata mask and the rain
    /// map (which it hands over).
    pub fn leader_window(&mut self, request: &[u8], ranks: usize, wrap: bool) -> LeaderWindow {
        let (width, height) = (self.footprint.width, self.footprint.height);
        let window = Layout::new(height, ranks, wrap)
            .map_err(erode::SimError::from)
            .and_then(|l| super::rows::read(request, &l.window(0)));
        let nodata = self.footprint.nodata_mask().map(<[bool]>::to_vec);
        LeaderWindow { width, height, window, nodata, rain: self.rain.take() }
    }

    /// The hash of the run's inputs (`StartMaps::input_hash`): the heightmap at the input's path
    /// read with `options`, and `files`; of inputs read by rows, by another pass over them.
    pub fn input_hash(&self, options: &ReadOptions, files: MapFiles<'_>) -> anyhow::Result<u64> {
        if let Some(hash) = self.hash {
            return Ok(hash);
        }
        let (width, height) = (self.footprint.width, self.footprint.height);
        let mut h = InputsHash::heights_start(width, height);
        erode_io::rows::scan(&self.path, options, |r| {
            h = InputsHash::heights(h, r.heights.as_slice(), r.nodata.as_deref());
        })?;
        for (k, map) in files.reads().into_iter().enumerate() {
            let Some(file) = map.file else { continue };
            h = InputsHash::map_start(h, map.name, width, height);
            let fill = self.fills[k + 1];
            erode_io::rows::scan(file, &map.options, |r| {
                let cells: Vec<f32> = match (&r.nodata, fill) {
                    (Some(m), Some(fill)) => {
                        r.heights.as_slice().iter().zip(m).map(|(&v, &o)| if o { fill } else { v }).collect()
                    }
                    _ => r.heights.as_slice().to_vec(),
                };
                h = InputsHash::cells(h, &cells);
            })?;
        }
        Ok(h)
    }
}

//! Runs the default grid model on the bench mountain in one process and in tiles of rows and
//! columns (`Block::tiles`, the ranks as threads of this process), and checks that the tiles
//! give one process's bytes (the state, books included): the tests' check at a size people
//! build. `cargo run --release -p erode-core --example tiles_probe -- [size] [iterations]
//! [bands] [parts]`
use std::sync::Arc;

use erode::models::grid::blocks::Block;
use erode::models::grid::{CpuSim, Params, StartMaps, State};
use erode::ranks::Threads;
use erode::terrain::bench::{Bench, bench};

fn main() {
    let args: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let size = args.first().copied().unwrap_or(2048);
    let iterations = args.get(1).copied().unwrap_or(10) as u64;
    let tiles = (args.get(2).copied().unwrap_or(2), args.get(3).copied().unwrap_or(2));
    let params = Params::default();
    let terrain = bench(Bench::Mountain, size).expect("bench terrain").heights;
    let whole = State::new(&terrain, &params, StartMaps::default()).expect("start");

    let t = std::time::Instant::now();
    let mut one = whole.clone();
    CpuSim::new(params.clone(), &one).expect("simulator").run(&mut one, iterations);
    println!("one process: {iterations} iterations of {size}² in {:.2} s", t.elapsed().as_secs_f64());

    let t = std::time::Instant::now();
    let whole = Arc::new(whole);
    let handles: Vec<_> = Threads::ranks(tiles.0 * tiles.1)
        .into_iter()
        .map(|ex| {
            let (params, whole) = (params.clone(), whole.clone());
            std::thread::spawn(move || {
                let mut block = Block::tiles(params, &whole, tiles, ex.clone()).expect("tile");
                block.run(iterations);
                let mut gathered = (ex.rank() == 0).then(|| (*whole).clone());
                block.gather_into(gathered.as_mut()).expect("gather");
                gathered
            })
        })
        .collect();
    let gathered: Vec<Option<State>> = handles.into_iter().map(|h| h.join().expect("rank")).collect();
    let tiled = gathered.into_iter().flatten().next().expect("rank 0's state");
    println!("{} x {} tiles: the same in {:.2} s (gathered)", tiles.0, tiles.1, t.elapsed().as_secs_f64());
    let same = tiled.to_bytes(1) == one.to_bytes(1);
    println!("the same bytes as one process, books included: {same}");
    if !same {
        std::process::exit(1);
    }
}

//! Fuzz the R32 decoder: any bytes give a heightmap or a typed error, never a panic or a huge
//! allocation. Run: `cargo +nightly fuzz run decode_r32`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let options = erode_io::ReadOptions { max_cells: 1 << 20, ..Default::default() };
    let _ = erode_io::decode(data, erode_io::Format::R32, &options);
});

//! Fuzz the TIFF decoder reading a block of rows (what each rank of a run over MPI reads): any
//! bytes and rows give the rows or a typed error, never a panic or a huge allocation. Run:
//! `cargo +nightly fuzz run decode_tiff_rows`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&[a, b], bytes)) = data.split_first_chunk::<2>() else { return };
    let start = usize::from(a);
    let options = erode_io::ReadOptions { max_cells: 1 << 20, ..Default::default() };
    let _ = erode_io::rows::decode_rows(bytes, start..start + 1 + usize::from(b), &options);
});

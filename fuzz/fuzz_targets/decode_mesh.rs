//! Fuzz the mesh decoders (OBJ, PLY, STL; the first byte picks one): any bytes give a mesh or a
//! typed error, never a panic or an allocation beyond what the bytes hold. Run:
//! `cargo +nightly fuzz run decode_mesh`.
#![no_main]

use erode_io::mesh::{MeshFormat, decode_mesh};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, bytes)) = data.split_first() else { return };
    let format = [MeshFormat::Obj, MeshFormat::Ply, MeshFormat::Stl][usize::from(pick) % 3];
    let _ = decode_mesh(bytes, format);
});

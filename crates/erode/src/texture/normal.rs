//! The normal map: each cell's surface normal in tangent space (the texture lying flat, z up),
//! from Horn's (1981) gradient at true scale (heights and cell sizes in metres), encoded as
//! engines read it: `n·0.5 + 0.5` a component. Two conventions differ in green: OpenGL's
//! (Blender, Godot, Unity) points it up the image, north; DirectX's (Unreal) down, south.

use rayon::prelude::*;

use crate::analysis::surface::{horn, window};
use crate::flow::Domain;

/// Which way green points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NormalConvention {
    /// Green up the image (north): OpenGL, Blender, Godot, Unity.
    OpenGl,
    /// Green down the image (south): DirectX, Unreal.
    DirectX,
}

/// Three components a cell in 0..1 (0.5, 0.5, 1 on flat ground and outside the domain).
pub(super) fn encoded(d: &Domain<'_>, z: &[f32], convention: NormalConvention, strength: f64) -> Vec<f32> {
    let mut out = vec![0.0f32; d.len() * 3];
    out.par_chunks_mut(3).enumerate().with_min_len(4096).for_each(|(i, rgb)| {
        let (gx, gy) = if d.inside(i) { horn(&window(d, z, i), d.cell.x, d.cell.y) } else { (0.0, 0.0) };
        // the surface z = f(x east, y south): its normal (−∂z/∂x, −∂z/∂y, 1) has −gy towards
        // the south, so +gy towards the north
        let (east, north) = (-gx * strength, gy * strength);
        let length = (east * east + north * north + 1.0).sqrt();
        let green = match convention {
            NormalConvention::OpenGl => north,
            NormalConvention::DirectX => -north,
        };
        rgb[0] = (east / length * 0.5 + 0.5) as f32;
        rgb[1] = (green / length * 0.5 + 0.5) as f32;
        rgb[2] = (1.0 / length * 0.5 + 0.5) as f32;
    });
    out
}

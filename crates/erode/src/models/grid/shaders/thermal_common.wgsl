// What thermal_flux and thermal_apply share (thermal.rs): their uniforms and `steep`.

struct ThermalUniforms {
    width: u32,
    height: u32,
    border: u32,
    pad0: u32,
    distance: array<vec4<f32>, 2>,
    rate: f32,
    talus_scale: f32,
    talus_bias: f32,
    // 1 - rock_erodibility: hardness is resistance
    erodibility_loss: f32,
    // talus of loose material (repose_slope)
    repose: f32,
    // 1 with a sediment layer, 0 without
    layer: u32,
    pad1: u32,
    pad2: u32,
}

// thermal.rs `steep`: the drop if it is steeper than the talus, else 0
fn steep(drop: f32, t: f32, dist: f32) -> f32 {
    if (drop > 0.0 && drop > t * dist) {
        return drop;
    }
    return 0.0;
}

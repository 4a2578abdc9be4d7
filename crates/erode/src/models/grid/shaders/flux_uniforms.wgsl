// The parameters of `water_flux` and `scale_by_donor` (Rust: gpu.rs `FluxUniforms`).

struct FluxUniforms {
    width: u32,
    height: u32,
    pipes: u32,
    // 0 closed, 1 open, 2 wrap
    border: u32,
    // 1: the pipe's gain scales with the flow depth (cross_section = depth)
    depth_scaled: u32,
    // 1: the signed net-flux form
    signed: u32,
    pad1: u32,
    pad2: u32,
    gain: array<vec4<f32>, 2>,
    pipe_width: array<vec4<f32>, 2>,
    friction: f32,
    volume_per_dt: f32,
    dt: f32,
    area: f32,
    // the deepest flow a pipe counts, m (params.rs `max_flow_depth`)
    depth_cap: f32,
    pad3: f32,
    pad4: f32,
    pad5: f32,
}


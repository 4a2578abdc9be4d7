//! The light each drawn vertex gets: the sun's shadow and the sky's occlusion, marched over the
//! heightmap in a compute pass (`shade.wgsl`) when the terrain or the sun changes, not in every
//! frame's vertex shader. [`shade`] is the pass's CPU twin, with the same names and arithmetic;
//! [`ShadeConstants`] is the one constants struct the CPU reads and the GPU uploads.

use bytemuck::{Pod, Zeroable};

/// The shading pass's constants; mirrors `ShadeConstants` in `shade.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct ShadeConstants {
    /// Width, height (cells), stride (cells per vertex), vertices per row.
    pub dims: [u32; 4],
    /// Cell size x, y (m), vertical exaggeration; w unused.
    pub cell: [f32; 4],
    /// The direction towards the sun (x east, y up, z south); w unused.
    pub light: [f32; 4],
    /// Rows of vertices, vertices; zw unused.
    pub count: [u32; 4],
}

impl ShadeConstants {
    /// The constants for a grid of `width` x `height` cells drawn every `stride`-th cell, with
    /// `cell` sizes (m), vertical `exaggeration` and the direction towards the `sun`.
    pub fn new(width: usize, height: usize, stride: usize, cell: (f32, f32), exaggeration: f32, sun: [f32; 3]) -> Self {
        let per_row = (width - 1) / stride + 1;
        let rows = (height - 1) / stride + 1;
        Self {
            dims: [width as u32, height as u32, stride as u32, per_row as u32],
            cell: [cell.0, cell.1, exaggeration, 0.0],
            light: [sun[0], sun[1], sun[2], 0.0],
            count: [rows as u32, (rows * per_row) as u32, 0, 0],
        }
    }

    /// Vertices shaded.
    pub fn vertices(&self) -> usize {
        self.count[1] as usize
    }

    /// Workgroups to dispatch (x, y): 64 vertices each, rows of 1024 groups.
    pub fn workgroups(&self) -> (u32, u32) {
        let groups = self.count[1].div_ceil(64);
        (groups.min(1024), groups.div_ceil(1024))
    }

    fn cell_index(&self, c: i32, r: i32) -> usize {
        let (w, h) = (self.dims[0] as i32, self.dims[1] as i32);
        (r.clamp(0, h - 1) * w + c.clamp(0, w - 1)) as usize
    }

    fn ground_at(&self, terrain: &[f32], p: [f32; 2]) -> f32 {
        terrain[self.cell_index(p[0].floor() as i32, p[1].floor() as i32)] * self.cell[2]
    }

    /// `sunlit` of `shade.wgsl`.
    fn sunlit(&self, terrain: &[f32], c: i32, r: i32, y: f32) -> f32 {
        let l = normalize(self.light);
        let flat = (l[0] * l[0] + l[2] * l[2]).sqrt();
        if flat < 1e-4 {
            return 1.0;
        }
        let dir = [l[0] / self.cell[0] / flat, l[2] / self.cell[1] / flat];
        let rise = l[1] / flat;
        let start = [c as f32 + 0.5, r as f32 + 0.5];
        let metre = self.cell[0].min(self.cell[1]);
        let mut along = metre;
        let mut open = 1.0f32;
        for i in 0..40 {
            let p = [start[0] + dir[0] * along, start[1] + dir[1] * along];
            if p[0] < 0.0 || p[1] < 0.0 || p[0] >= self.dims[0] as f32 || p[1] >= self.dims[1] as f32 {
                break;
            }
            let above = y + 0.02 * metre + rise * along - self.ground_at(terrain, p);
            open = open.min((above / (0.08 * along) + 0.5).clamp(0.0, 1.0));
            if open <= 0.0 {
                break;
            }
            along += metre * (1.0 + i as f32 * 0.35);
        }
        open
    }

    /// `sky_seen` of `shade.wgsl`.
    fn sky_seen(&self, terrain: &[f32], c: i32, r: i32, y: f32) -> f32 {
        let mut blocked = 0.0f32;
        let start = [c as f32 + 0.5, r as f32 + 0.5];
        for d in 0..8 {
            let a = d as f32 * std::f32::consts::FRAC_PI_4;
            let step = [a.cos(), a.sin()];
            let mut horizon = 0.0f32;
            let mut dist = 1.0f32;
            for _ in 0..6 {
                let p = [start[0] + step[0] * dist, start[1] + step[1] * dist];
                let metres = dist * (step[0] * self.cell[0]).hypot(step[1] * self.cell[1]);
                let tangent = (self.ground_at(terrain, p) - y) / metres;
                horizon = horizon.max(tangent / (1.0 + tangent * tangent).sqrt());
                dist *= 2.0;
            }
            blocked += horizon;
        }
        (1.0 - blocked / 8.0).clamp(0.0, 1.0)
    }
}

fn normalize(v: [f32; 4]) -> [f32; 3] {
    let n = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt().max(1e-12);
    [v[0] / n, v[1] / n, v[2] / n]
}

/// The shading pass on the CPU: per vertex, the sunlit share of the ground, the sky it sees, the
/// sunlit share of the water's surface, and 1.
pub fn shade(k: &ShadeConstants, terrain: &[f32], water: &[f32]) -> Vec<[f32; 4]> {
    let per_row = k.dims[3] as usize;
    let stride = k.dims[2] as i32;
    (0..k.vertices())
        .map(|vi| {
            let c = ((vi % per_row) as i32 * stride).min(k.dims[0] as i32 - 1);
            let r = ((vi / per_row) as i32 * stride).min(k.dims[1] as i32 - 1);
            let i = k.cell_index(c, r);
            let ground = terrain[i] * k.cell[2];
            let surface = (terrain[i] + water[i]) * k.cell[2];
            [k.sunlit(terrain, c, r, ground), k.sky_seen(terrain, c, r, ground), k.sunlit(terrain, c, r, surface), 1.0]
        })
        .collect()
}

/// The shading pass on the GPU: its pipeline and the per-vertex light it writes, which the
/// terrain's vertex shader reads.
pub struct ShadePass {
    pipeline: wgpu::ComputePipeline,
    layout: wgpu::BindGroupLayout,
    constants: wgpu::Buffer,
    /// The per-vertex light (`[f32; 4]` each).
    pub output: wgpu::Buffer,
}

impl ShadePass {
    /// The pass for `vertices` vertices.
    pub fn new(device: &wgpu::Device, vertices: usize) -> Self {
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("shade.wgsl"),
            source: wgpu::ShaderSource::Wgsl(include_str!("shade.wgsl").into()),
        });
        let entry = |binding: u32, ty: wgpu::BufferBindingType| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer { ty, has_dynamic_offset: false, min_binding_size: None },
            count: None,
        };
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("shade"),
            entries: &[
                entry(0, wgpu::BufferBindingType::Uniform),
                entry(1, wgpu::BufferBindingType::Storage { read_only: true }),
                entry(2, wgpu::BufferBindingType::Storage { read_only: true }),
                entry(3, wgpu::BufferBindingType::Storage { read_only: false }),
            ],
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("shade"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("shade"),
            layout: Some(&pipeline_layout),
            module: &module,
            entry_point: Some("shade"),
            compilation_options: Default::default(),
            cache: None,
        });
        let constants = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("shade constants"),
            size: std::mem::size_of::<ShadeConstants>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let output = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("shade"),
            size: (vertices.max(1) * 16) as u64,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        Self { pipeline, layout, constants, output }
    }

    /// The bind group reading `terrain` and `water` (per-cell `f32` buffers).
    pub fn bind(&self, device: &wgpu::Device, terrain: &wgpu::Buffer, water: &wgpu::Buffer) -> wgpu::BindGroup {
        device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("shade"),
            layout: &self.layout,
            entries: &[
                wgpu::BindGroupEntry { binding: 0, resource: self.constants.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 1, resource: terrain.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 2, resource: water.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 3, resource: self.output.as_entire_binding() },
            ],
        })
    }

    /// Records the pass into `encoder` with constants `k` (uploaded through `queue` first).
    pub fn record(
        &self,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
        bind_group: &wgpu::BindGroup,
        k: &ShadeConstants,
    ) {
        queue.write_buffer(&self.constants, 0, bytemuck::bytes_of(k));
        let mut pass =
            encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("shade"), timestamp_writes: None });
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, bind_group, &[]);
        let (x, y) = k.workgroups();
        pass.dispatch_workgroups(x, y, 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_constants_match_the_shader() {
        let size = crate::render::tests::wgsl_struct_size("shade.wgsl", include_str!("shade.wgsl"), "ShadeConstants");
        assert_eq!(size, std::mem::size_of::<ShadeConstants>());
    }

    #[test]
    fn a_wall_shades_the_ground_behind_it_and_hides_some_sky() {
        // a wall 20 m high and 4 m thick along x = 10..14 on flat ground, the sun low in the east
        // (the march's growing steps may pass over a wall one cell thin)
        let (w, h) = (32, 8);
        let terrain: Vec<f32> = (0..w * h).map(|i| if (10..14).contains(&(i % w)) { 20.0 } else { 0.0 }).collect();
        let water = vec![0.0; w * h];
        let sun = crate::render::Look { sun_azimuth_deg: 90.0, sun_altitude_deg: 20.0, materials: true }.sun();
        let k = ShadeConstants::new(w, h, 1, (1.0, 1.0), 1.0, sun);
        let s = shade(&k, &terrain, &water);
        let at = |c: usize| s[4 * w + c];
        assert!(at(6)[0] < 0.1, "west of the wall, in its shadow: {:?}", at(6));
        assert!(at(20)[0] > 0.9, "east of the wall, in the sun: {:?}", at(20));
        assert!(at(9)[1] < at(25)[1] - 0.05, "beside the wall less sky: {:?} vs {:?}", at(9), at(25));
        // water 30 m deep lifts its surface above the wall's shadow
        let deep = vec![30.0; w * h];
        assert!(shade(&k, &terrain, &deep)[4 * w + 6][2] > 0.9);
    }
}

//! Draws the terrain and the water into an offscreen colour + depth target that the UI shows as
//! an image. The vertex shader reads heights from per-cell storage buffers: the GPU simulator's
//! own buffers when the model runs there (no copy back), else buffers this renderer fills from
//! the CPU state when it changes.

use bytemuck::{Pod, Zeroable};
use wgpu::util::DeviceExt;

use crate::camera::{Camera, Placement};
use crate::shade::{ShadeConstants, ShadePass};

/// The view uniform; mirrors `View` in `terrain.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct ViewUniform {
    view_proj: [[f32; 4]; 4],
    dims: [u32; 4],
    cell: [f32; 4],
    range: [f32; 4],
    brush: [f32; 4],
    light: [f32; 4],
    eye: [f32; 4],
}

/// What one frame shows besides the fields.
#[derive(Clone, Copy, Debug)]
pub struct FrameSettings {
    /// The camera.
    pub camera: Camera,
    /// Where the terrain sits.
    pub placement: Placement,
    /// Lowest and highest terrain, m (colour ramp).
    pub height_range: (f32, f32),
    /// Overlay value range, when an overlay is shown.
    pub overlay_range: Option<(f32, f32)>,
    /// Brush circle: centre x, y and radius, cells.
    pub brush: Option<(f32, f32, f32)>,
    /// Whether water is drawn.
    pub water: bool,
    /// The sun and the ground's look.
    pub look: Look,
    /// The water's clock, s: its ripples move along the flow as it runs (it runs while the
    /// model plays, so a paused view is the same picture every time).
    pub water_clock: f32,
}

/// How the terrain is drawn: the sun's place and the ground's colours.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Look {
    /// The sun's azimuth, degrees clockwise from north.
    pub sun_azimuth_deg: f32,
    /// The sun's height above the horizon, degrees.
    pub sun_altitude_deg: f32,
    /// Ground materials with shadows and sky light (true), or the colour ramp by height.
    pub materials: bool,
}

impl Default for Look {
    /// An afternoon sun from the south-west, 35 degrees up, on materials.
    fn default() -> Self {
        Self { sun_azimuth_deg: 225.0, sun_altitude_deg: 35.0, materials: true }
    }
}

impl Look {
    /// The direction towards the sun in the view's axes (x east, y up, z south).
    pub fn sun(&self) -> [f32; 3] {
        let (az, alt) = (self.sun_azimuth_deg.to_radians(), self.sun_altitude_deg.to_radians());
        [az.sin() * alt.cos(), alt.sin(), -az.cos() * alt.cos()]
    }
}

/// The overlay colour ramp's four stops, linear RGB, from low to high: dark blue, cyan, yellow,
/// red. The shader's `ramp` and the panel's legend both draw these.
pub const OVERLAY_RAMP: [[f32; 3]; 4] = [[0.05, 0.1, 0.5], [0.1, 0.8, 0.9], [1.0, 0.9, 0.2], [0.9, 0.1, 0.05]];

/// The overlay ramp at `t` in 0..1, linear RGB (the shader's `ramp`).
pub fn overlay_ramp(t: f32) -> [f32; 3] {
    let s = t.clamp(0.0, 1.0) * 3.0;
    let k = (s.floor() as usize).min(2);
    let f = s - k as f32;
    std::array::from_fn(|i| OVERLAY_RAMP[k][i] + (OVERLAY_RAMP[k + 1][i] - OVERLAY_RAMP[k][i]) * f)
}

/// `terrain.wgsl` with the overlay ramp's stops written in.
fn shader_source() -> String {
    let stops: String = ["a", "b", "c", "d"]
        .iter()
        .zip(OVERLAY_RAMP)
        .map(|(name, [r, g, b])| format!("let {name} = vec3<f32>({r:?}, {g:?}, {b:?});\n    "))
        .collect();
    include_str!("terrain.wgsl").replace("RAMP_STOPS\n    ", &stops)
}

/// The colour format of the offscreen target (egui shows its bytes as gamma-space colours).
pub const COLOUR: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8Unorm;
const DEPTH: wgpu::TextureFormat = wgpu::TextureFormat::Depth32Float;
/// Most vertices per side of the drawn mesh; larger grids are drawn every `stride`-th cell.
const MAX_VERTICES_PER_SIDE: usize = 1024;
/// While the fields change every frame (the model playing on the GPU), the shading pass runs
/// every this many frames: shadows trail the terrain by a few frames, which nobody sees, and
/// the frame is that much cheaper.
const SHADE_EVERY: u32 = 4;

/// The per-cell buffers the renderer owns (used when the model runs on the CPU).
struct OwnFields {
    terrain: wgpu::Buffer,
    water: wgpu::Buffer,
    sediment: wgpu::Buffer,
}

/// Terrain and water renderer for one grid size.
pub struct TerrainRenderer {
    terrain_pipeline: wgpu::RenderPipeline,
    water_pipeline: wgpu::RenderPipeline,
    layout: wgpu::BindGroupLayout,
    uniform: wgpu::Buffer,
    own: OwnFields,
    overlay: wgpu::Buffer,
    indices: wgpu::Buffer,
    index_count: u32,
    width: usize,
    height: usize,
    stride: usize,
    per_row: usize,
    target: Option<Target>,
    bind_group: Option<(wgpu::BindGroup, bool)>,
    shade: ShadePass,
    shade_group: Option<wgpu::BindGroup>,
    /// The constants of the last shading pass, and whether the fields changed since.
    shaded: Option<ShadeConstants>,
    fields_changed: bool,
    frames_since_shade: u32,
}

/// The offscreen target.
pub struct Target {
    /// Colour texture (shown by the UI).
    pub colour: wgpu::Texture,
    /// Its view.
    pub view: wgpu::TextureView,
    depth: wgpu::TextureView,
    /// Size in pixels.
    pub size: (u32, u32),
}

fn storage(device: &wgpu::Device, label: &str, cells: usize) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: (cells.max(1) * 4) as u64,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

impl TerrainRenderer {
    /// Builds pipelines and buffers for a `width` x `height` grid.
    pub fn new(device: &wgpu::Device, width: usize, height: usize) -> Self {
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("terrain.wgsl"),
            source: wgpu::ShaderSource::Wgsl(shader_source().into()),
        });
        let entry = |binding: u32, ty: wgpu::BufferBindingType| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::VERTEX | wgpu::ShaderStages::FRAGMENT,
            ty: wgpu::BindingType::Buffer { ty, has_dynamic_offset: false, min_binding_size: None },
            count: None,
        };
        let read = wgpu::BufferBindingType::Storage { read_only: true };
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("terrain view"),
            entries: &[
                entry(0, wgpu::BufferBindingType::Uniform),
                entry(1, read),
                entry(2, read),
                entry(3, read),
                entry(4, read),
                entry(5, read),
            ],
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("terrain"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let pipeline = |label: &str, vs: &str, fs: &str, blend: Option<wgpu::BlendState>, write_depth: bool| {
            device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
                label: Some(label),
                layout: Some(&pipeline_layout),
                vertex: wgpu::VertexState {
                    module: &module,
                    entry_point: Some(vs),
                    compilation_options: Default::default(),
                    buffers: &[],
                },
                fragment: Some(wgpu::FragmentState {
                    module: &module,
                    entry_point: Some(fs),
                    compilation_options: Default::default(),
                    targets: &[Some(wgpu::ColorTargetState {
                        format: COLOUR,
                        blend,
                        write_mask: wgpu::ColorWrites::ALL,
                    })],
                }),
                primitive: wgpu::PrimitiveState::default(),
                depth_stencil: Some(wgpu::DepthStencilState {
                    format: DEPTH,
                    depth_write_enabled: Some(write_depth),
                    depth_compare: Some(wgpu::CompareFunction::LessEqual),
                    stencil: Default::default(),
                    bias: Default::default(),
                }),
                multisample: Default::default(),
                multiview_mask: None,
                cache: None,
            })
        };
        let terrain_pipeline = pipeline("terrain", "terrain_vs", "terrain_fs", None, true);
        let water_pipeline = pipeline("water", "water_vs", "water_fs", Some(wgpu::BlendState::ALPHA_BLENDING), false);
        let stride = width.max(height).div_ceil(MAX_VERTICES_PER_SIDE).max(1);
        let per_row = (width - 1) / stride + 1;
        let rows = (height - 1) / stride + 1;
        let mut idx: Vec<u32> = Vec::with_capacity(per_row.saturating_sub(1) * rows.saturating_sub(1) * 6);
        for r in 0..rows.saturating_sub(1) {
            for c in 0..per_row.saturating_sub(1) {
                let a = (r * per_row + c) as u32;
                let b = a + 1;
                let d = a + per_row as u32;
                let e = d + 1;
                idx.extend_from_slice(&[a, d, b, b, d, e]);
            }
        }
        let indices = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("terrain indices"),
            contents: bytemuck::cast_slice(if idx.is_empty() { &[0u32; 3][..] } else { &idx }),
            usage: wgpu::BufferUsages::INDEX,
        });
        let cells = width * height;
        let uniform = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("terrain view uniform"),
            size: std::mem::size_of::<ViewUniform>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        Self {
            terrain_pipeline,
            water_pipeline,
            layout,
            uniform,
            own: OwnFields {
                terrain: storage(device, "view terrain", cells),
                water: storage(device, "view water", cells),
                sediment: storage(device, "view sediment", cells),
            },
            overlay: storage(device, "view overlay", cells),
            indices,
            index_count: idx.len() as u32,
            width,
            height,
            stride,
            per_row,
            target: None,
            bind_group: None,
            shade: ShadePass::new(device, per_row * rows),
            shade_group: None,
            shaded: None,
            fields_changed: true,
            frames_since_shade: 0,
        }
    }

    /// The grid size drawn.
    pub fn size(&self) -> (usize, usize) {
        (self.width, self.height)
    }

    /// Writes the CPU state's fields into the renderer's own buffers.
    pub fn upload_fields(&mut self, queue: &wgpu::Queue, terrain: &[f32], water: &[f32], sediment: &[f32]) {
        queue.write_buffer(&self.own.terrain, 0, bytemuck::cast_slice(terrain));
        queue.write_buffer(&self.own.water, 0, bytemuck::cast_slice(water));
        queue.write_buffer(&self.own.sediment, 0, bytemuck::cast_slice(sediment));
        self.fields_changed = true;
    }

    /// Says the bound fields changed on the device (the GPU model ran): the shading pass runs
    /// again within `SHADE_EVERY` frames.
    pub fn fields_changed(&mut self) {
        self.fields_changed = true;
    }

    /// Writes the overlay values.
    pub fn upload_overlay(&self, queue: &wgpu::Queue, values: &[f32]) {
        queue.write_buffer(&self.overlay, 0, bytemuck::cast_slice(values));
    }

    /// Binds the fields to draw: the GPU simulator's buffers (terrain, water, sediment), or the
    /// renderer's own when `None`. Rebuilt only when the choice changes.
    pub fn bind_fields(&mut self, device: &wgpu::Device, sim: Option<[&wgpu::Buffer; 3]>) {
        let on_gpu = sim.is_some();
        if self.bind_group.as_ref().is_some_and(|(_, g)| *g == on_gpu) && !on_gpu {
            return;
        }
        let [t, w, s] = sim.unwrap_or([&self.own.terrain, &self.own.water, &self.own.sediment]);
        let entries = [
            wgpu::BindGroupEntry { binding: 0, resource: self.uniform.as_entire_binding() },
            wgpu::BindGroupEntry { binding: 1, resource: t.as_entire_binding() },
            wgpu::BindGroupEntry { binding: 2, resource: w.as_entire_binding() },
            wgpu::BindGroupEntry { binding: 3, resource: s.as_entire_binding() },
            wgpu::BindGroupEntry { binding: 4, resource: self.overlay.as_entire_binding() },
            wgpu::BindGroupEntry { binding: 5, resource: self.shade.output.as_entire_binding() },
        ];
        let bg = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("terrain view"),
            layout: &self.layout,
            entries: &entries,
        });
        if self.bind_group.as_ref().is_none_or(|(_, g)| *g != on_gpu) {
            self.fields_changed = true;
        }
        self.bind_group = Some((bg, on_gpu));
        self.shade_group = Some(self.shade.bind(device, t, w));
    }

    /// The offscreen target, (re)made at `size` pixels. Returns whether it was remade.
    pub fn ensure_target(&mut self, device: &wgpu::Device, size: (u32, u32)) -> bool {
        let size = (size.0.clamp(1, 8192), size.1.clamp(1, 8192));
        if self.target.as_ref().is_some_and(|t| t.size == size) {
            return false;
        }
        let extent = wgpu::Extent3d { width: size.0, height: size.1, depth_or_array_layers: 1 };
        let texture = |label: &str, format, usage| {
            device.create_texture(&wgpu::TextureDescriptor {
                label: Some(label),
                size: extent,
                mip_level_count: 1,
                sample_count: 1,
                dimension: wgpu::TextureDimension::D2,
                format,
                usage,
                view_formats: &[],
            })
        };
        let colour = texture(
            "view colour",
            COLOUR,
            wgpu::TextureUsages::RENDER_ATTACHMENT
                | wgpu::TextureUsages::TEXTURE_BINDING
                | wgpu::TextureUsages::COPY_SRC,
        );
        let depth = texture("view depth", DEPTH, wgpu::TextureUsages::RENDER_ATTACHMENT);
        let view = colour.create_view(&Default::default());
        self.target = Some(Target { view, depth: depth.create_view(&Default::default()), colour, size });
        true
    }

    /// The offscreen target, once made.
    pub fn target(&self) -> Option<&Target> {
        self.target.as_ref()
    }

    /// The shading pass's constants for a frame drawn with `s`.
    fn shade_constants(&self, s: &FrameSettings) -> ShadeConstants {
        ShadeConstants::new(
            self.width,
            self.height,
            self.stride,
            s.placement.cell,
            s.placement.exaggeration,
            s.look.sun(),
        )
    }

    /// Draws a frame into the target, running the shading pass first when the sun or the
    /// exaggeration moved, or the fields changed (at most every `SHADE_EVERY` frames while
    /// they keep changing).
    pub fn draw(&mut self, device: &wgpu::Device, queue: &wgpu::Queue, s: &FrameSettings) {
        let (Some(target), Some((bind_group, _)), Some(shade_group)) =
            (&self.target, &self.bind_group, &self.shade_group)
        else {
            return;
        };
        let aspect = target.size.0 as f32 / target.size.1 as f32;
        let overlay = s.overlay_range.unwrap_or((0.0, 1.0));
        let brush = s.brush.unwrap_or((0.0, 0.0, 0.0));
        let u = ViewUniform {
            view_proj: s.camera.view_proj(aspect).to_cols_array_2d(),
            dims: [self.width as u32, self.height as u32, self.stride as u32, self.per_row as u32],
            cell: [
                s.placement.cell.0,
                s.placement.cell.1,
                s.placement.exaggeration,
                if s.overlay_range.is_some() { 1.0 } else { 0.0 },
            ],
            range: [s.height_range.0, s.height_range.1, overlay.0, overlay.1],
            brush: [brush.0, brush.1, brush.2, if s.water { 1.0 } else { 0.0 }],
            light: {
                let [x, y, z] = s.look.sun();
                [x, y, z, if s.look.materials { 0.0 } else { 1.0 }]
            },
            eye: {
                let e = s.camera.eye();
                [e.x, e.y, e.z, s.water_clock]
            },
        };
        queue.write_buffer(&self.uniform, 0, bytemuck::bytes_of(&u));
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("view") });
        let k = self.shade_constants(s);
        self.frames_since_shade += 1;
        let stale = self.fields_changed && (self.frames_since_shade >= SHADE_EVERY || self.shaded.is_none());
        if s.look.materials && (self.shaded != Some(k) || stale) {
            self.shade.record(queue, &mut encoder, shade_group, &k);
            self.shaded = Some(k);
            self.fields_changed = false;
            self.frames_since_shade = 0;
        }
        {
            let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("view"),
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view: &target.view,
                    resolve_target: None,
                    depth_slice: None,
                    ops: wgpu::Operations {
                        load: wgpu::LoadOp::Clear(wgpu::Color { r: 0.55, g: 0.68, b: 0.82, a: 1.0 }),
                        store: wgpu::StoreOp::Store,
                    },
                })],
                depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                    view: &target.depth,
                    depth_ops: Some(wgpu::Operations { load: wgpu::LoadOp::Clear(1.0), store: wgpu::StoreOp::Store }),
                    stencil_ops: None,
                }),
                timestamp_writes: None,
                occlusion_query_set: None,
                multiview_mask: None,
            });
            pass.set_bind_group(0, bind_group, &[]);
            pass.set_index_buffer(self.indices.slice(..), wgpu::IndexFormat::Uint32);
            pass.set_pipeline(&self.terrain_pipeline);
            pass.draw_indexed(0..self.index_count, 0, 0..1);
            if s.water {
                pass.set_pipeline(&self.water_pipeline);
                pass.draw_indexed(0..self.index_count, 0, 0..1);
            }
        }
        queue.submit([encoder.finish()]);
    }
}

#[cfg(test)]
pub(crate) mod tests {
    #[test]
    fn the_sun_stands_where_its_angles_say() {
        let south = super::Look { sun_azimuth_deg: 180.0, sun_altitude_deg: 0.0, materials: true }.sun();
        assert!((south[2] - 1.0).abs() < 1e-6 && south[1].abs() < 1e-6, "{south:?}: z is south");
        let east = super::Look { sun_azimuth_deg: 90.0, sun_altitude_deg: 30.0, materials: true }.sun();
        assert!((east[0] - 30f32.to_radians().cos()).abs() < 1e-6 && (east[1] - 0.5).abs() < 1e-6, "{east:?}");
    }

    /// The size of struct `name` in the WGSL `source` (named `file` in messages), after the
    /// module validates.
    pub(crate) fn wgsl_struct_size(file: &str, source: &str, name: &str) -> usize {
        let module = match naga::front::wgsl::parse_str(source) {
            Ok(m) => m,
            Err(e) => panic!("{file}: {e}"),
        };
        let mut v = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all());
        if let Err(e) = v.validate(&module) {
            panic!("{file} does not validate: {e:?}");
        }
        let (_, ty) = module
            .types
            .iter()
            .find(|(_, t)| t.name.as_deref() == Some(name))
            .unwrap_or_else(|| panic!("{file}: no {name} struct"));
        ty.inner.size(module.to_ctx()) as usize
    }

    #[test]
    fn the_view_uniform_matches_the_shader() {
        let size = wgsl_struct_size("terrain.wgsl", &super::shader_source(), "View");
        assert_eq!(size, std::mem::size_of::<super::ViewUniform>());
    }
}

//! The GPU backend's shared part (feature `gpu`): a [`GpuContext`] (adapter, device, queue),
//! either headless or wrapping a device the caller owns (the viewer shares its own), and the
//! buffer helpers every model's GPU simulator uses.
//!
//! wgpu picks the adapter (`WGPU_BACKEND=vulkan|gl` and `WGPU_ADAPTER_NAME` pin one); on a
//! machine without a GPU, Mesa's software Vulkan (lavapipe, "llvmpipe") serves, which is how the
//! tests run in CI.

use std::fmt;

mod split;

pub use split::{BINDING_STRIDE, FieldSplit};

/// What can go wrong on the GPU path.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    /// No adapter was found.
    #[error("no GPU adapter found (install a Vulkan driver, e.g. Debian's mesa-vulkan-drivers): {0}")]
    NoAdapter(String),
    /// The adapter refused the device.
    #[error("the GPU adapter refused a device: {0}")]
    Device(String),
    /// The grid does not fit the device's limits.
    #[error("a {what} of {bytes} bytes exceeds the device's limit of {limit} bytes ({adapter})")]
    TooLarge {
        /// Which buffer.
        what: &'static str,
        /// Its size.
        bytes: u64,
        /// The device's limit.
        limit: u64,
        /// The adapter's name.
        adapter: String,
    },
    /// A stage needs more storage bindings than the device allows.
    #[error(
        "the GPU stage {stage} needs {needed} storage bindings on this grid, the device allows {limit} ({adapter})"
    )]
    TooManyBindings {
        /// The stage.
        stage: &'static str,
        /// Storage bindings it needs.
        needed: u32,
        /// The device's limit per stage.
        limit: u32,
        /// The adapter's name.
        adapter: String,
    },
    /// The device ran out of memory for the state.
    #[error("the GPU has no room for the {what} ({mib} MiB on {adapter}): use a smaller map or the CPU backend")]
    OutOfMemory {
        /// What was being allocated.
        what: &'static str,
        /// Its size, MiB.
        mib: u64,
        /// The adapter's name.
        adapter: String,
    },
    /// A shader or pipeline failed validation (a bug, named by its stage).
    #[error("GPU validation failed in {stage}: {message}")]
    Validation {
        /// The stage.
        stage: &'static str,
        /// wgpu's message.
        message: String,
    },
    /// Reading a buffer back failed.
    #[error("reading a GPU buffer back failed: {0}")]
    Readback(String),
}

/// One adapter as `erode gpu-info` lists it.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct AdapterSummary {
    /// Name, e.g. "llvmpipe (LLVM 15.0.6, 256 bits)".
    pub name: String,
    /// Backend: Vulkan, Metal, Dx12, Gl.
    pub backend: String,
    /// Discrete, integrated, virtual, CPU (software) or other.
    pub device_type: String,
    /// Driver and its version.
    pub driver: String,
    /// Largest storage buffer binding, bytes: the largest field (cells x 4 bytes) a model can bind.
    pub max_storage_buffer_binding_size: u64,
    /// Largest buffer, bytes.
    pub max_buffer_size: u64,
    /// Workgroups per dimension.
    pub max_compute_workgroups_per_dimension: u32,
}

impl fmt::Display for AdapterSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({}, {}, driver {}): storage binding up to {} MiB, buffers up to {} MiB",
            self.name,
            self.backend,
            self.device_type,
            self.driver,
            self.max_storage_buffer_binding_size >> 20,
            self.max_buffer_size >> 20
        )
    }
}

fn summary(adapter: &wgpu::Adapter) -> AdapterSummary {
    let info = adapter.get_info();
    let limits = adapter.limits();
    AdapterSummary {
        name: info.name,
        backend: format!("{:?}", info.backend),
        device_type: format!("{:?}", info.device_type),
        driver: format!("{} {}", info.driver, info.driver_info).trim().to_string(),
        max_storage_buffer_binding_size: limits.max_storage_buffer_binding_size,
        max_buffer_size: limits.max_buffer_size,
        max_compute_workgroups_per_dimension: limits.max_compute_workgroups_per_dimension,
    }
}

/// An instance on `backends`, or on those `WGPU_BACKEND` names.
fn instance(backends: wgpu::Backends) -> wgpu::Instance {
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
    desc.backends = backends;
    wgpu::Instance::new(desc.with_env())
}

/// The native APIs first (Vulkan, Metal, DX12), OpenGL only where none serves: probing OpenGL
/// without a display prints EGL's complaints (`XDG_RUNTIME_DIR is invalid`) on every run.
const FIRST: [wgpu::Backends; 2] = [wgpu::Backends::PRIMARY, wgpu::Backends::SECONDARY];

/// Every adapter wgpu finds on this machine.
pub fn adapters() -> Vec<AdapterSummary> {
    for backends in FIRST {
        let instance = instance(backends);
        let found: Vec<AdapterSummary> =
            pollster::block_on(instance.enumerate_adapters(backends)).iter().map(summary).collect();
        if !found.is_empty() {
            return found;
        }
    }
    Vec::new()
}

/// An adapter, its device and queue: built once, shared by every GPU simulator.
pub struct GpuContext {
    /// The device.
    pub device: wgpu::Device,
    /// Its queue.
    pub queue: wgpu::Queue,
    /// What the adapter is.
    pub adapter: AdapterSummary,
}

impl GpuContext {
    /// A context of its own on the adapter wgpu prefers (high performance).
    pub fn headless() -> Result<Self, GpuError> {
        let options = wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            ..Default::default()
        };
        let mut found = Err(GpuError::NoAdapter("no backend tried".into()));
        for backends in FIRST {
            found = pollster::block_on(instance(backends).request_adapter(&options))
                .map_err(|e| GpuError::NoAdapter(e.to_string()));
            if found.is_ok() {
                break;
            }
        }
        let adapter = found?;
        // the adapter's own limits: large grids need large storage buffers
        let desc =
            wgpu::DeviceDescriptor { label: Some("erode"), required_limits: adapter.limits(), ..Default::default() };
        let (device, queue) =
            pollster::block_on(adapter.request_device(&desc)).map_err(|e| GpuError::Device(e.to_string()))?;
        Ok(Self { device, queue, adapter: summary(&adapter) })
    }

    /// Wraps a device the caller made (the viewer's), described by `adapter`.
    pub fn from_device(device: wgpu::Device, queue: wgpu::Queue, adapter: &wgpu::Adapter) -> Self {
        Self { device, queue, adapter: summary(adapter) }
    }

    /// The largest storage buffer the device binds, bytes.
    pub fn binding_limit(&self) -> u64 {
        self.device.limits().max_storage_buffer_binding_size.min(self.device.limits().max_buffer_size)
    }

    /// Refuses a stage that needs more than the device's storage bindings per stage.
    pub(crate) fn check_bindings(&self, stage: &'static str, needed: u32) -> Result<(), GpuError> {
        let limit = self.device.limits().max_storage_buffers_per_shader_stage;
        if needed > limit {
            return Err(GpuError::TooManyBindings { stage, needed, limit, adapter: self.adapter.name.clone() });
        }
        Ok(())
    }

    /// Runs `make` (buffer allocations) and turns the device's out-of-memory error into a typed
    /// one naming `what` and its `bytes`.
    pub(crate) fn allocating<T>(
        &self,
        what: &'static str,
        bytes: u64,
        make: impl FnOnce() -> T,
    ) -> Result<T, GpuError> {
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let made = make();
        match pollster::block_on(scope.pop()) {
            Some(_) => Err(GpuError::OutOfMemory { what, mib: bytes >> 20, adapter: self.adapter.name.clone() }),
            None => Ok(made),
        }
    }

    /// Refuses a buffer of `bytes` the device cannot bind.
    pub(crate) fn check_binding(&self, what: &'static str, bytes: u64) -> Result<(), GpuError> {
        let limit = self.binding_limit();
        if bytes > limit {
            return Err(GpuError::TooLarge { what, bytes, limit, adapter: self.adapter.name.clone() });
        }
        Ok(())
    }

    /// A storage buffer holding `data` (f32), readable back.
    pub(crate) fn storage(&self, label: &str, data: &[f32]) -> wgpu::Buffer {
        use wgpu::util::DeviceExt;
        self.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(label),
            contents: bytemuck::cast_slice(data),
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
        })
    }

    /// A uniform buffer holding `value`.
    pub(crate) fn uniform<T: bytemuck::Pod>(&self, label: &str, value: &T) -> wgpu::Buffer {
        use wgpu::util::DeviceExt;
        self.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(label),
            contents: bytemuck::bytes_of(value),
            // storage too: a stage may write another's uniforms (the grid's `time_step`)
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
        })
    }

    /// A compute pipeline for `entry` in `source` (WGSL), with validation errors returned.
    pub(crate) fn pipeline(&self, stage: &'static str, source: &str) -> Result<wgpu::ComputePipeline, GpuError> {
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let module = self.device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(stage),
            source: wgpu::ShaderSource::Wgsl(source.into()),
        });
        let pipeline = self.device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(stage),
            layout: None,
            module: &module,
            entry_point: Some(stage),
            compilation_options: Default::default(),
            cache: None,
        });
        match pollster::block_on(scope.pop()) {
            Some(e) => Err(GpuError::Validation { stage, message: e.to_string() }),
            None => Ok(pipeline),
        }
    }

    /// Reads `buffer` (f32s) back, waiting for the GPU.
    pub fn read(&self, buffer: &wgpu::Buffer) -> Result<Vec<f32>, GpuError> {
        self.read_range(buffer, 0, buffer.size())
    }

    /// Reads `size` bytes of `buffer` from byte `offset` (both multiples of 4) back as f32s,
    /// waiting for the GPU.
    pub(crate) fn read_range(&self, buffer: &wgpu::Buffer, offset: u64, size: u64) -> Result<Vec<f32>, GpuError> {
        Ok(self.read_ranges(&[(buffer, offset, size)])?.pop().unwrap_or_default())
    }

    /// Reads several `(buffer, offset, size)` ranges (bytes, multiples of 4) back as f32s in
    /// one copy and one wait for the GPU: each read's fixed cost (a staging buffer, a
    /// submission, a map) once instead of once per range.
    pub(crate) fn read_ranges(&self, parts: &[(&wgpu::Buffer, u64, u64)]) -> Result<Vec<Vec<f32>>, GpuError> {
        let total: u64 = parts.iter().map(|p| p.2).sum();
        if total == 0 {
            return Ok(parts.iter().map(|_| Vec::new()).collect());
        }
        let staging = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("readback"),
            size: total,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder =
            self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("readback") });
        let mut at = 0;
        for &(buffer, offset, size) in parts {
            if size > 0 {
                encoder.copy_buffer_to_buffer(buffer, offset, &staging, at, size);
            }
            at += size;
        }
        self.queue.submit([encoder.finish()]);
        let (tx, rx) = std::sync::mpsc::channel();
        staging.map_async(wgpu::MapMode::Read, .., move |r| {
            let _ = tx.send(r);
        });
        self.device.poll(wgpu::PollType::wait_indefinitely()).map_err(|e| GpuError::Readback(e.to_string()))?;
        rx.recv().map_err(|e| GpuError::Readback(e.to_string()))?.map_err(|e| GpuError::Readback(e.to_string()))?;
        let view = staging.get_mapped_range(..).map_err(|e| GpuError::Readback(e.to_string()))?;
        let mut out = Vec::with_capacity(parts.len());
        let mut at = 0usize;
        for &(_, _, size) in parts {
            out.push(bytemuck::pod_collect_to_vec(&view[at..at + size as usize]));
            at += size as usize;
        }
        drop(view);
        staging.unmap();
        Ok(out)
    }
}

/// One compute stage: its pipeline and the bind group of the simulator's buffers.
pub(crate) struct Kernel {
    pub(crate) pipeline: wgpu::ComputePipeline,
    pub(crate) bindings: wgpu::BindGroup,
}

/// The pipeline for entry point `stage` of `source` with `buffers` bound in order (binding `k` is
/// `buffers[k]`).
pub(crate) fn kernel(
    ctx: &GpuContext,
    stage: &'static str,
    source: &str,
    buffers: &[&wgpu::Buffer],
) -> Result<Kernel, GpuError> {
    let groups: Vec<&[wgpu::Buffer]> = buffers.iter().map(|b| std::slice::from_ref(*b)).collect();
    kernel_with_groups(ctx, stage, source, &groups)
}

/// [`kernel`] where binding `k` is a field group ([`FieldSplit`]): its buffer `c` binds at
/// `k + BINDING_STRIDE·c` (a lone buffer is a group of one).
pub(crate) fn kernel_with_groups(
    ctx: &GpuContext,
    stage: &'static str,
    source: &str,
    groups: &[&[wgpu::Buffer]],
) -> Result<Kernel, GpuError> {
    let pipeline = ctx.pipeline(stage, source)?;
    let entries: Vec<wgpu::BindGroupEntry<'_>> = groups
        .iter()
        .enumerate()
        .flat_map(|(k, group)| {
            group.iter().enumerate().map(move |(c, b)| wgpu::BindGroupEntry {
                binding: k as u32 + BINDING_STRIDE * c as u32,
                resource: b.as_entire_binding(),
            })
        })
        .collect();
    let bindings = ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some(stage),
        layout: &pipeline.get_bind_group_layout(0),
        entries: &entries,
    });
    Ok(Kernel { pipeline, bindings })
}

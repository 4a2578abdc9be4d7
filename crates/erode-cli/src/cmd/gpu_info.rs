//! `erode gpu-info`: the GPU adapters wgpu finds here and their limits.

use anyhow::bail;

/// List the GPU adapters (Vulkan, Metal, DX12, GL) and the limits that bound grid sizes.
#[derive(clap::Args)]
#[command(after_help = "Example:
  erode gpu-info
  WGPU_BACKEND=vulkan erode gpu-info --json")]
pub struct Args {
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(a: Args) -> anyhow::Result<()> {
    let adapters = erode::gpu::adapters();
    if adapters.is_empty() {
        bail!(
            "no GPU adapter found (on Debian, `apt-get install mesa-vulkan-drivers` gives the software one, \
             llvmpipe)"
        );
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&adapters)?);
    } else {
        for (k, adapter) in adapters.iter().enumerate() {
            println!("{k}: {adapter}");
        }
    }
    Ok(())
}

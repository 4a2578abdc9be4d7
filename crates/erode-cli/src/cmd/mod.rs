//! One module per subcommand: its arguments (with `--help` examples) and its `run`.

pub mod amplify;
pub mod analyze;
pub mod bench;
pub mod convert;
pub mod crop;
pub mod demo;
pub mod generate;
pub mod gpu_info;
pub mod info;
pub mod masks;
pub mod mesh;
pub mod params;
pub mod render;
pub mod resample;
pub mod rescale;
pub mod run;
pub mod simulate;
pub mod view;

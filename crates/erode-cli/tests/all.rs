//! Every integration test of the command line but `ranks.rs` (its own binary: CI runs it again
//! with the `mpi` feature), one module per file beside this one, in one test binary: one link
//! instead of one per file, and the files' tests share the test threads (the Python wheel's
//! downloads and the signal tests' waits overlap other files' work).

mod common;

mod analyze;
mod bad_input;
mod cli;
mod engine;
mod gdal;
mod gpu_bench;
mod interrupt;
mod masks;
mod output_folder;
mod python;
mod recipes;
mod report;
mod simulate;
mod sph;
mod stream_power;
mod transform;
mod view;

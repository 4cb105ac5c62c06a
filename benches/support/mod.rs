//! Landscape generation, the recounting baseline, placement quality and report rendering for
//! `benches/scheduler.rs`; `tests/bench_smoke.rs` runs the same code on small inputs.

pub mod baseline;
pub mod carbon;
pub mod geo;
pub mod landscape;
pub mod memory;
pub mod profiles;
pub mod quality;
pub mod report;
pub mod stats;
pub mod upstream;

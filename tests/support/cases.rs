//! What the tests driven by case files share (`golden`, `upstream`, `reference`): the case
//! directories under a folder, and the name a decision's error goes by in the case files.
//! Included with `#[path]` by each of them.
#![allow(dead_code)]

use std::path::Path;

use gardener_scheduler::schedule::FitError;

/// The names of the directories in `dir`, sorted; `what` names `dir` when it cannot be read.
pub fn subdirectories(dir: &Path, what: &str) -> Vec<String> {
    let mut dirs: Vec<String> = std::fs::read_dir(dir)
        .expect(what)
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    dirs.sort();
    dirs
}

/// The kind of `e` as the case files name it (`noFit`, `invalidShoot`, ...).
pub fn fit_kind(e: &FitError) -> &'static str {
    match e {
        FitError::NoFit { .. } => "noFit",
        FitError::InvalidShoot { .. } => "invalidShoot",
        FitError::InvalidRegionConfig { .. } => "invalidRegionConfig",
        FitError::OverBudget { .. } => "overBudget",
        FitError::Gated { .. } => "gated",
    }
}

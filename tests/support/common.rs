//! What every kind of test here needs: a command's success, with its stderr shown when it
//! failed, and a fresh scratch directory. Included with `#[path]` by the test binaries that are
//! not built on `support/mod.rs`, and there as `support::common`.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::atomic::{AtomicU32, Ordering};

/// Asserts that the command that gave `out` succeeded, showing its stderr when it did not.
#[track_caller]
pub fn assert_success(out: &Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A new, empty directory `<parent>/<stem>-<pid>-<n>`, `n` counting this process's directories.
pub fn fresh_dir(parent: &Path, stem: &str) -> PathBuf {
    static N: AtomicU32 = AtomicU32::new(0);
    let dir = parent.join(format!(
        "{stem}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The elements of the JSON array `v[key]`; panics when that is not an array.
pub fn elements<'a>(
    v: &'a serde_json::Value,
    key: &str,
) -> std::slice::Iter<'a, serde_json::Value> {
    v[key].as_array().unwrap().iter()
}

/// The JSON string `v[key]`, owned; panics when that is not a string.
pub fn string(v: &serde_json::Value, key: &str) -> String {
    v[key].as_str().unwrap().to_string()
}

//! Running the binary as a user runs it, for the command-line tests (`cli`, `plan`,
//! `carbon_cli`, `whatif_cli`, `hostile_inputs`). Included with `#[path]` by each of them, apart
//! from the end-to-end harness in `mod.rs`.
#![allow(dead_code)]

#[path = "common.rs"]
mod common;
#[allow(unused_imports)] // not every command-line test needs each of them
pub use common::{assert_success, elements, fresh_dir, string};

use std::path::PathBuf;
use std::process::{Command, Output};

/// The CloudProfile `aws` of provider type aws, a manifest document between newlines.
pub const AWS_CLOUD_PROFILE: &str = r#"
apiVersion: core.gardener.cloud/v1beta1
kind: CloudProfile
metadata: {name: aws}
spec: {type: aws}
"#;

/// The binary, run from the repository root without a `KUBECONFIG` from the environment.
pub fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_gardener-scheduler"));
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c.env_remove("KUBECONFIG");
    c
}

/// Runs `c` to its end: exit code (-1 when killed by a signal), stdout, stderr.
pub fn run(c: &mut Command) -> (i32, String, String) {
    let Output {
        status,
        stdout,
        stderr,
    } = c.output().expect("binary runs");
    (
        status.code().unwrap_or(-1),
        String::from_utf8_lossy(&stdout).into_owned(),
        String::from_utf8_lossy(&stderr).into_owned(),
    )
}

/// Writes `content` to `name` in a directory of this test binary's own.
pub fn tmp(name: &str, content: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(env!("CARGO_CRATE_NAME"));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, content).unwrap();
    p
}

/// Standard base64 with padding, for `binaryData`.
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Asserts that `text` contains every one of `needles`, showing `text` when one is missing.
#[track_caller]
pub fn assert_has(text: &str, needles: &[&str]) {
    for needle in needles {
        assert!(text.contains(needle), "{needle:?} is missing from: {text}");
    }
}

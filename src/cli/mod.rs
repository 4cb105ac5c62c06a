//! The subcommands of the binary, one file each, and what they share.

pub(crate) mod args;
pub(crate) mod common;
pub(crate) mod plan;
pub(crate) mod run;
pub(crate) mod simulate;

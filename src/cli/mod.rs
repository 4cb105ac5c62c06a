//! The subcommands of the binary, one file each, and what they share.

/// `eprintln!` for messages that may echo input (names, values, file contents): every control,
/// bidi and zero-width character is made visible, so an error never steers the terminal.
macro_rules! say {
    ($($arg:tt)*) => {
        eprintln!("{}", gardener_scheduler::escape::text(&format!($($arg)*)))
    };
}

pub(crate) mod apply;
pub(crate) mod args;
pub(crate) mod common;
pub(crate) mod explain;
pub(crate) mod generate;
pub(crate) mod outage;
pub(crate) mod plan;
pub(crate) mod run;
pub(crate) mod simulate;
pub(crate) mod timeline;

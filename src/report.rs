//! Progress of long runs as `tracing` events, so that the library never
//! writes to the terminal itself. The solver, the searches and the child
//! runners say what they are doing with [`progress!`](crate::progress); the
//! executable's subscriber decides where the lines go (above a spinner on a
//! terminal, plain lines on a log, nowhere when no subscriber is set, as in
//! tests and in a program that uses the library).

/// The `tracing` target of progress lines: the executable prints their
/// message alone, without the timestamp and level of its log lines.
pub const TARGET: &str = "progress";

/// One line of progress, with `format!` arguments: a `tracing` event at
/// level INFO whose target is [`TARGET`]. The arguments are evaluated only
/// when a subscriber wants the line.
#[macro_export]
macro_rules! progress {
    ($($arg:tt)*) => {
        ::tracing::info!(target: "progress", $($arg)*)
    };
}

/// Whether a subscriber wants progress lines: guards work done only to say
/// something (a description built from the rules).
pub fn wanted() -> bool {
    tracing::enabled!(target: "progress", tracing::Level::INFO)
}

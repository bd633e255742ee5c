//! The `ggp-asp` executable: parses the command line, hands the command to its
//! file under [`cli`], prints an error if it fails and ends the process with
//! its exit code. The work lives in the library's modules.

mod cli;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "ggp-asp",
    version,
    about = "General Game Playing with answer set programming"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// One variant per file of [`cli`]; each file's `Args` holds the command's
/// `--help` text.
#[derive(Subcommand)]
enum Command {
    Check(cli::check::Args),
    Inspect(cli::inspect::Args),
    Learn(cli::learn::Args),
    Simulate(cli::simulate::Args),
    Match(cli::referee::Args),
    Serve(cli::serve::Args),
    Encode(cli::encode::Args),
    Solve(cli::solve::Args),
    Bench(cli::bench::Args),
    Store(cli::store::Args),
    #[command(hide = true)]
    Worker(cli::worker::Args),
}

fn main() {
    let cli = parse_command_line();
    if !matches!(cli.command, Command::Serve(_)) {
        // A reader that stops early (`| head`) ends the command quietly, as
        // it ends `cat`, instead of a panic on the failed write. The server
        // keeps Rust's default (SIGPIPE ignored): a client that goes away
        // must not end it.
        // SAFETY: setting a signal's disposition before any thread starts.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        }
    }
    // Log lines (RUST_LOG, default info) with their time and level; progress
    // lines (the library's `progress!`) as their bare message, whatever
    // RUST_LOG says, as the commands have always printed them. Colour only on
    // a terminal: a log file or a pipe gets plain text.
    use tracing_subscriber::prelude::*;
    let log = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(stderr_in_colour())
        .with_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_filter(tracing_subscriber::filter::filter_fn(|m| {
            m.target() != ggp_asp::report::TARGET
        }));
    let progress = ggp_asp::show::progress::ProgressLines.with_filter(
        tracing_subscriber::filter::Targets::new()
            .with_target(ggp_asp::report::TARGET, tracing::Level::INFO),
    );
    tracing_subscriber::registry()
        .with(log)
        .with(progress)
        .init();
    let result = match cli.command {
        Command::Check(args) => args.run(),
        Command::Inspect(args) => args.run(),
        Command::Learn(args) => args.run(),
        Command::Simulate(args) => args.run(),
        Command::Match(args) => args.run(),
        Command::Serve(args) => args.run(),
        Command::Encode(args) => args.run(),
        Command::Solve(args) => args.run(),
        Command::Bench(args) => args.run(),
        Command::Store(args) => args.run(),
        Command::Worker(args) => args.run(),
    };
    let code = match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            1
        }
    };
    exit_now(code)
}

/// Whether log lines may carry colour codes: standard error is a terminal
/// and `NO_COLOR` is unset or empty (<https://no-color.org>).
fn stderr_in_colour() -> bool {
    use std::io::IsTerminal;
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    !no_color && std::io::stderr().is_terminal()
}

/// The command line, or the end of the process: clap's own output for
/// `--help`, `--version` and most errors, but a value its parser refused (a
/// duration of `nan`, say) as one line, exit code 2. clap would add the usage
/// and a hint, which say nothing about why the value is wrong.
fn parse_command_line() -> Cli {
    match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if e.kind() == clap::error::ErrorKind::ValueValidation => {
            let text = e.render().to_string();
            eprintln!("{}", text.lines().next().unwrap_or("error: invalid value"));
            exit_now(2)
        }
        Err(e) => e.exit(),
    }
}

/// Ends the process at once. A clingo thread may still be grounding (the
/// invariant search left behind past its budget, a solver worker after a
/// timeout), and clingo's static destructors, run by a normal exit, crash
/// under its feet; so the output is flushed and the process ends without them.
fn exit_now(code: u8) -> ! {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    // SAFETY: _exit ends the process; nothing runs after it.
    unsafe { libc::_exit(i32::from(code)) }
}

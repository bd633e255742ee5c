//! The `ggp-asp` command line: argument parsing and output only; the work lives
//! in the library's modules.

mod cli;

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};

use ggp_asp::arena::{MatchConfig, PlayerSpec};
use ggp_asp::bench::playouts;
use ggp_asp::bench::solve as bench;
use ggp_asp::gdl;
use ggp_asp::reasoner::Engine;
use ggp_asp::search::Parallel;

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

#[derive(Subcommand)]
enum Command {
    Check(cli::check::Args),
    Simulate(cli::simulate::Args),
    Match(cli::r#match::Args),
    Serve(cli::serve::Args),
    Encode(cli::encode::Args),
    Solve(cli::solve::Args),
    /// Benchmarks.
    Bench {
        #[command(subcommand)]
        what: BenchCommand,
    },
}

#[derive(Subcommand)]
enum BenchCommand {
    /// Random playouts to terminal from the initial state: playouts/s and states/s
    /// (setup excluded), compile time and network size, per game and engine.
    Playouts {
        #[arg(required = true)]
        games: Vec<PathBuf>,
        /// Seconds of playouts per game and engine.
        #[arg(long, default_value_t = 5.0)]
        seconds: f64,
        #[arg(long, default_value_t = 1)]
        threads: usize,
        /// One engine only (default: the prover and the propnet).
        #[arg(long, value_enum)]
        engine: Option<Engine>,
        /// Stop a playout after this many joint moves.
        #[arg(long, default_value_t = 10_000)]
        max_steps: usize,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// One JSON object per line instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Solve every single-player game in the directories (a `manifest.tsv` there
    /// selects its single-player games), each in a child process.
    Solve {
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Seconds per game.
        #[arg(long, default_value_t = 60.0)]
        timeout: f64,
        /// Memory limit per game in MiB.
        #[arg(long, default_value_t = 4096)]
        memory_mb: u64,
        /// Solver threads per game.
        #[arg(long)]
        threads: Option<usize>,
        /// One JSON object per game instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// UCT against random and against mc at equal clocks, seats alternated.
    Arena {
        #[arg(required = true)]
        games: Vec<PathBuf>,
        #[arg(long, default_value_t = 10)]
        matches: usize,
        /// Play clock in seconds (the start clock is the same).
        #[arg(long, default_value_t = 1.0)]
        play: f64,
        /// Opponents (default: random and mc).
        #[arg(long = "opponent")]
        opponents: Vec<PlayerSpec>,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long, value_enum, default_value_t = Engine::Auto)]
        engine: Engine,
        #[arg(long, default_value_t = 1000)]
        max_steps: usize,
        /// One JSON object per game and opponent.
        #[arg(long)]
        json: bool,
    },
    /// Tree search iterations/s against the engine's raw playouts/s, one thread.
    Search {
        #[arg(required = true)]
        games: Vec<PathBuf>,
        #[arg(long, default_value_t = 3.0)]
        seconds: f64,
        /// Threads of the search (the raw playouts stay on one thread).
        #[arg(long, default_value_t = 1)]
        threads: usize,
        /// How the threads share the search: root (a tree each) or tree (one tree).
        #[arg(long, value_enum, default_value_t = Parallel::Root)]
        parallel: Parallel,
        #[arg(long, value_enum, default_value_t = Engine::Auto)]
        engine: Engine,
        #[arg(long)]
        json: bool,
    },
}

fn main() {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    let code = match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            1
        }
    };
    exit_now(code)
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

fn run(cli: Cli) -> Result<u8> {
    match cli.command {
        Command::Check(args) => args.run(),
        Command::Simulate(args) => args.run(),
        Command::Match(args) => args.run(),
        Command::Serve(args) => args.run(),
        Command::Encode(args) => args.run(),
        Command::Solve(args) => args.run(),
        Command::Bench { what } => bench(what),
    }
}

fn bench(what: BenchCommand) -> Result<u8> {
    match what {
        BenchCommand::Playouts {
            games,
            seconds,
            threads,
            engine,
            max_steps,
            seed,
            json,
        } => {
            let engines = match engine {
                Some(e) => vec![e],
                None => vec![Engine::Prover, Engine::Propnet],
            };
            if !json {
                println!(
                    "{:<24} {:<8} {:>12} {:>12} {:>12} {:>9} {:>11} {:>8} {:>8}",
                    "game",
                    "engine",
                    "playouts/s",
                    "states/s",
                    "playouts/cpu",
                    "compile_s",
                    "compile_cpu",
                    "nodes",
                    "avg_len"
                );
            }
            let cfg = playouts::PlayoutsConfig {
                seconds,
                threads,
                seed,
                max_steps,
            };
            let mut failed = false;
            for path in &games {
                let name = path.file_stem().map_or_else(
                    || path.display().to_string(),
                    |s| s.to_string_lossy().into(),
                );
                let g = match gdl::load(path) {
                    Ok(g) => g,
                    Err(e) => {
                        failed = true;
                        eprintln!("{e}");
                        continue;
                    }
                };
                for &e in &engines {
                    let run = match playouts::measure(&g, e, &cfg) {
                        Ok(run) => run,
                        Err(err) => {
                            failed = true;
                            eprintln!("{name}: {err:#}");
                            continue;
                        }
                    };
                    let t = &run.throughput;
                    let avg = run.avg_length();
                    if json {
                        let row = serde_json::json!({
                            "game": name,
                            "engine": run.engine,
                            "why": run.why,
                            "threads": threads,
                            "playouts": t.playouts,
                            "seconds": t.seconds,
                            "playouts_per_s": t.playouts_per_s(),
                            "states_per_s": t.states_per_s(),
                            "cpu_seconds": t.cpu_seconds,
                            "playouts_per_cpu_s": t.playouts_per_cpu_s(),
                            "states_per_cpu_s": t.states_per_cpu_s(),
                            "avg_length": avg,
                            "compile_s": run.compile_s,
                            "compile_cpu_s": run.compile_cpu_s,
                            "network": run.network,
                        });
                        println!("{row}");
                    } else {
                        println!(
                            "{:<24} {:<8} {:>12.0} {:>12.0} {:>12.0} {:>9.3} {:>11.3} {:>8} {:>8.1}",
                            name,
                            run.engine,
                            t.playouts_per_s(),
                            t.states_per_s(),
                            t.playouts_per_cpu_s(),
                            run.compile_s,
                            run.compile_cpu_s,
                            run.network.as_ref().map_or("-".to_string(), |n| n.nodes.to_string()),
                            avg
                        );
                    }
                }
            }
            Ok(if failed { 1 } else { 0 })
        }
        BenchCommand::Solve {
            dirs,
            timeout,
            memory_mb,
            threads,
            json,
        } => {
            let games = bench::single_player_games(&dirs)?;
            let exe = std::env::current_exe().context("cannot find the ggp-asp executable")?;
            let cfg = bench::BenchConfig {
                timeout,
                memory_mb,
                threads,
            };
            let mut rows = Vec::new();
            if !json {
                println!("{}", bench::TABLE_HEADER);
            }
            for path in &games {
                let row = bench::run_one(&exe, path, &cfg);
                if json {
                    println!("{}", serde_json::to_string(&row)?);
                } else {
                    println!("{}", row.table_line());
                }
                rows.push(row);
            }
            let summary = bench::summary(&rows);
            if json {
                println!("{}", serde_json::to_string(&summary)?);
            } else {
                println!();
                println!("{}", summary.text());
            }
            Ok(0)
        }
        BenchCommand::Arena {
            games,
            matches,
            play,
            opponents,
            seed,
            engine,
            max_steps,
            json,
        } => {
            let opponents = if opponents.is_empty() {
                vec![PlayerSpec::Random, PlayerSpec::Mc]
            } else {
                opponents
            };
            let clock = cli::clock(play, "--play")?;
            for path in &games {
                let g = gdl::load(path)?;
                let name = cli::game_name(path);
                for opp in &opponents {
                    let cfg = MatchConfig {
                        start_clock: clock,
                        play_clock: clock,
                        seed,
                        engine,
                        max_steps,
                        ..MatchConfig::default()
                    };
                    let r = ggp_asp::bench::arena::uct_versus(
                        &name,
                        &g,
                        opp,
                        matches,
                        &cfg,
                        |i, seat, rec| {
                            eprintln!(
                            "{name} vs {opp}: match {} uct as {} scored {} ({} steps, {} errors)",
                            i + 1,
                            rec.roles[seat],
                            rec.score(seat),
                            rec.moves.len(),
                            rec.errors.len()
                        );
                            for e in &rec.errors {
                                eprintln!("  error: {}", cli::match_error(e));
                            }
                        },
                    )?;
                    if json {
                        println!("{}", serde_json::to_string(&r)?);
                    } else {
                        let worst: Vec<String> = r
                            .worst_reply_s
                            .iter()
                            .map(|(p, s)| format!("{p} {s:.3} s"))
                            .collect();
                        println!(
                            "{:<24} vs {:<8} matches {:>3}  mean {:>5.1} ± {:>4.1}  uct errors {}  worst reply: {}",
                            r.game,
                            r.opponent,
                            r.matches,
                            r.mean_score,
                            r.ci95,
                            r.uct_errors,
                            worst.join(", ")
                        );
                    }
                }
            }
            Ok(0)
        }
        BenchCommand::Search {
            games,
            seconds,
            threads,
            parallel,
            engine,
            json,
        } => {
            for path in &games {
                let g = gdl::load(path)?;
                let r = ggp_asp::bench::search::search_bench(
                    &cli::game_name(path),
                    g,
                    engine,
                    seconds,
                    threads,
                    parallel,
                )?;
                if json {
                    println!("{}", serde_json::to_string(&r)?);
                } else {
                    println!(
                        "{:<24} {:<8} playouts/s {:>10.1}  iterations/s {:>10.1} ({} threads, {:?} parallel)  ratio {:.2}  nodes {}",
                        r.game, r.engine, r.playouts_per_s, r.iterations_per_s, r.threads, r.parallel, r.ratio, r.nodes
                    );
                }
            }
            Ok(0)
        }
    }
}

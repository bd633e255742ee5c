//! The `ggp-asp` command line: argument parsing and output only; the work lives
//! in the library's modules.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};

use ggp_asp::asp::{self, bench, Mode, SolveOptions, SolveResult, Status};
use ggp_asp::gdl::{self, print::term_to_string, Phase, Severity};
use ggp_asp::reasoner::{Prover, StateMachine};
use ggp_asp::simulate;

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
    /// Parse and validate games: roles, rule and relation counts, warnings.
    Check {
        /// GDL files (.kif).
        #[arg(required = true)]
        games: Vec<PathBuf>,
    },
    /// Random playouts: average length, goals per role, playouts/s and states/s.
    Simulate {
        game: PathBuf,
        #[arg(long, default_value_t = 100)]
        playouts: usize,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Stop a playout after this many joint moves.
        #[arg(long, default_value_t = 1000)]
        max_steps: usize,
        /// Print one JSON line per state instead of statistics.
        #[arg(long)]
        trace: bool,
        /// With --trace: play the joint moves in this file (one per line, role order).
        #[arg(long, requires = "trace")]
        replay: Option<PathBuf>,
    },
    /// Print a single-player game as an answer set program that the clingo
    /// executable alone can solve.
    #[command(group(clap::ArgGroup::new("form").required(true)))]
    Encode {
        game: PathBuf,
        /// Full grounding: plans of at most H moves.
        #[arg(long, group = "form")]
        horizon: Option<usize>,
        /// Multi-shot form for clingo's incremental mode (`#include <incmode>.`).
        #[arg(long, group = "form")]
        incremental: bool,
    },
    /// Solve a single-player game: the shortest plan to goal 100 (else the best
    /// goal), verified on the reference prover.
    Solve {
        game: PathBuf,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
        /// Seconds before giving up (the best verified plan so far is kept).
        #[arg(long)]
        timeout: Option<f64>,
        /// The longest plan looked for.
        #[arg(long, default_value_t = 200)]
        max_steps: usize,
        /// Solver threads (default: the machine's cores; in auto mode the full
        /// worker's, beside one incremental thread).
        #[arg(long)]
        threads: Option<usize>,
        #[arg(long, value_enum, default_value_t = Mode::Auto)]
        mode: Mode,
        /// Resident memory limit in MiB.
        #[arg(long)]
        memory_mb: Option<u64>,
    },
    /// Benchmarks.
    Bench {
        #[command(subcommand)]
        what: BenchCommand,
    },
}

#[derive(Subcommand)]
enum BenchCommand {
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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Check { games } => check(&games),
        Command::Simulate {
            game,
            playouts,
            seed,
            max_steps,
            trace,
            replay,
        } => {
            let g = gdl::load(&game)?;
            let prover = Prover::try_new(g)?;
            if trace {
                let replay_text = match &replay {
                    Some(p) => Some(
                        std::fs::read_to_string(p)
                            .with_context(|| format!("cannot read {}", p.display()))?,
                    ),
                    None => None,
                };
                let stdout = std::io::stdout();
                let mut out = std::io::BufWriter::new(stdout.lock());
                simulate::trace(
                    &prover,
                    &mut out,
                    playouts,
                    seed,
                    max_steps,
                    replay_text.as_deref(),
                )?;
                return Ok(ExitCode::SUCCESS);
            }
            let stats = simulate::random_playouts(&prover, playouts, seed, max_steps)?;
            print_stats(&prover, &stats);
            Ok(ExitCode::SUCCESS)
        }
        Command::Encode {
            game,
            horizon,
            incremental,
        } => {
            let g = gdl::load(&game)?;
            asp::solve::check_single_player(&g).map_err(anyhow::Error::msg)?;
            let program = asp::Program::new(&g);
            if incremental {
                print!("#include <incmode>.\n{}", program.incremental());
            } else if let Some(h) = horizon {
                print!(
                    "{}\n% The horizon, and the query switched on for the clingo executable.\nhorizon({h}).\nquery.\n",
                    program.full()
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Solve {
            game,
            json,
            timeout,
            max_steps,
            threads,
            mode,
            memory_mb,
        } => {
            let mut opts = SolveOptions {
                mode,
                timeout: timeout.map(Duration::from_secs_f64),
                max_steps,
                memory_mb,
                progress: true,
                ..SolveOptions::default()
            };
            if let Some(t) = threads {
                opts.threads = t;
            }
            let result = gdl::load(&game)
                .map_err(anyhow::Error::from)
                .and_then(|g| asp::solve(&g, &opts).map_err(anyhow::Error::from));
            let result = match result {
                Ok(r) => r,
                Err(e) if json => bench::error_result(format!("{e:#}")),
                Err(e) => return Err(e),
            };
            if json {
                println!("{}", serde_json::to_string(&result)?);
            } else {
                print_solution(&result);
            }
            // Solver threads may still be grounding after a timeout: end the
            // process at once, without running clingo's static destructors
            // under their feet.
            use std::io::Write;
            let _ = std::io::stdout().flush();
            let _ = std::io::stderr().flush();
            let code = if result.status == Status::Error { 1 } else { 0 };
            // SAFETY: _exit ends the process; nothing runs after it.
            unsafe { libc::_exit(code) }
        }
        Command::Bench {
            what:
                BenchCommand::Solve {
                    dirs,
                    timeout,
                    memory_mb,
                    threads,
                    json,
                },
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
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn print_solution(r: &SolveResult) {
    match r.status {
        Status::Solved => {
            println!(
                "solved: goal {} in {} moves (proven: {}, mode: {})",
                r.goal.unwrap_or(0),
                r.steps.unwrap_or(0),
                serde_json::to_value(r.proven)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default(),
                r.mode.map_or("-", Mode::name)
            );
            for (i, m) in r.plan.iter().enumerate() {
                println!("{:4} {m}", i + 1);
            }
        }
        Status::NoPlan => println!("no plan: {}", r.message),
        Status::Timeout => println!("timeout: {}", r.message),
        Status::Error => println!("error: {}", r.message),
    }
    if r.status == Status::Solved {
        println!("{}", r.message);
    }
    println!(
        "ground {:.2} s, solve {:.2} s, total {:.2} s, peak memory {:.0} MiB",
        r.ground_s, r.solve_s, r.total_s, r.peak_mb
    );
}

fn check(games: &[PathBuf]) -> Result<ExitCode> {
    let mut failed = false;
    for path in games {
        match gdl::load(path) {
            Ok(g) => {
                let count = |p: Phase| g.relations.values().filter(|&&x| x == p).count();
                let names = |p: Phase| {
                    let mut v: Vec<String> = g
                        .relations
                        .iter()
                        .filter(|(_, &x)| x == p)
                        .map(|(r, _)| r.display(&g.symbols))
                        .collect();
                    v.sort();
                    v.join(" ")
                };
                println!("{}: ok", path.display());
                println!("  roles: {}", g.role_names().join(" "));
                println!(
                    "  rules: {} ({} facts)",
                    g.rules.len(),
                    g.rules.iter().filter(|r| r.is_fact()).count()
                );
                println!("  relations: {}", g.relations.len());
                println!(
                    "  static ({}): {}",
                    count(Phase::Static),
                    names(Phase::Static)
                );
                println!(
                    "  state-dependent ({}): {}",
                    count(Phase::State),
                    names(Phase::State)
                );
                println!(
                    "  move-dependent ({}): {}",
                    count(Phase::Move),
                    names(Phase::Move)
                );
                for w in &g.warnings {
                    println!("{w}");
                }
            }
            Err(e) => {
                failed = true;
                for d in &e.diagnostics {
                    debug_assert_eq!(d.severity, Severity::Error);
                    eprintln!("{d}");
                }
            }
        }
    }
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn print_stats<M: StateMachine>(m: &M, s: &simulate::Stats) {
    let g = m.game();
    println!(
        "playouts: {} ({} terminal), average length {:.2}",
        s.playouts,
        s.terminal,
        s.steps as f64 / s.playouts.max(1) as f64
    );
    println!(
        "speed: {:.1} playouts/s, {:.1} states/s",
        s.playouts_per_s(),
        s.states_per_s()
    );
    for (r, dist) in g.roles.iter().zip(&s.goals) {
        let parts: Vec<String> = dist
            .iter()
            .map(|(v, n)| format!("{}: {}", v.map_or("none".to_string(), |v| v.to_string()), n))
            .collect();
        println!(
            "goals of {}: {}",
            term_to_string(r, &g.symbols),
            parts.join(", ")
        );
    }
}

//! The `ggp-asp` command line: argument parsing and output only; the work lives
//! in the library's modules.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};

use ggp_asp::gdl::{self, print::term_to_string, Phase, Severity};
use ggp_asp::reasoner::{AnyMachine, Engine, MachineVisitor, StateMachine};
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
        /// The engine that runs the rules.
        #[arg(long, value_enum, default_value_t = Engine::Auto)]
        engine: Engine,
    },
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
            engine,
        } => {
            let g = gdl::load(&game)?;
            let (machine, why) = AnyMachine::build(g, engine)?;
            eprintln!("engine: {why}");
            let replay_text = match &replay {
                Some(p) => Some(
                    std::fs::read_to_string(p)
                        .with_context(|| format!("cannot read {}", p.display()))?,
                ),
                None => None,
            };
            machine.visit(SimulateRun {
                playouts,
                seed,
                max_steps,
                trace,
                replay: replay_text,
            })?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Bench {
            what:
                BenchCommand::Playouts {
                    games,
                    seconds,
                    threads,
                    engine,
                    max_steps,
                    seed,
                    json,
                },
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
                    let t0 = std::time::Instant::now();
                    let cpu0 = simulate::thread_cpu_seconds();
                    let built = AnyMachine::build(g.clone(), e);
                    let compile_s = t0.elapsed().as_secs_f64();
                    let compile_cpu_s = simulate::thread_cpu_seconds() - cpu0;
                    let (machine, why) = match built {
                        Ok(x) => x,
                        Err(err) => {
                            failed = true;
                            eprintln!("{name}: {:#}", anyhow::Error::from(err));
                            continue;
                        }
                    };
                    let t = machine.visit(TimedRun {
                        seconds,
                        threads,
                        seed,
                        max_steps,
                    });
                    let nodes = match &machine {
                        AnyMachine::Propnet(n) => Some(n.stats().clone()),
                        AnyMachine::Prover(_) => None,
                    };
                    let avg = t.steps as f64 / t.playouts.max(1) as f64;
                    if json {
                        let row = serde_json::json!({
                            "game": name,
                            "engine": machine.name(),
                            "why": why,
                            "threads": threads,
                            "playouts": t.playouts,
                            "seconds": t.seconds,
                            "playouts_per_s": t.playouts_per_s(),
                            "states_per_s": t.states_per_s(),
                            "cpu_seconds": t.cpu_seconds,
                            "playouts_per_cpu_s": t.playouts_per_cpu_s(),
                            "states_per_cpu_s": t.states_per_cpu_s(),
                            "avg_length": avg,
                            "compile_s": compile_s,
                            "compile_cpu_s": compile_cpu_s,
                            "network": nodes,
                        });
                        println!("{row}");
                    } else {
                        println!(
                            "{:<24} {:<8} {:>12.0} {:>12.0} {:>12.0} {:>9.3} {:>11.3} {:>8} {:>8.1}",
                            name,
                            machine.name(),
                            t.playouts_per_s(),
                            t.states_per_s(),
                            t.playouts_per_cpu_s(),
                            compile_s,
                            compile_cpu_s,
                            nodes.map_or("-".to_string(), |n| n.nodes.to_string()),
                            avg
                        );
                    }
                }
            }
            Ok(if failed {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            })
        }
    }
}

/// Timed playouts on whichever engine was built.
struct TimedRun {
    seconds: f64,
    threads: usize,
    seed: u64,
    max_steps: usize,
}

impl MachineVisitor for TimedRun {
    type Output = simulate::Throughput;
    fn visit<M: StateMachine + 'static>(self, m: Arc<M>) -> simulate::Throughput {
        simulate::timed_playouts(&*m, self.seconds, self.threads, self.seed, self.max_steps)
    }
}

/// `simulate` on whichever engine was built.
struct SimulateRun {
    playouts: usize,
    seed: u64,
    max_steps: usize,
    trace: bool,
    replay: Option<String>,
}

impl MachineVisitor for SimulateRun {
    type Output = Result<()>;
    fn visit<M: StateMachine + 'static>(self, m: Arc<M>) -> Result<()> {
        if self.trace {
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::new(stdout.lock());
            simulate::trace(
                &*m,
                &mut out,
                self.playouts,
                self.seed,
                self.max_steps,
                self.replay.as_deref(),
            )?;
            return Ok(());
        }
        let stats = simulate::random_playouts(&*m, self.playouts, self.seed, self.max_steps)?;
        print_stats(&*m, &stats);
        Ok(())
    }
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

//! The `ggp-asp` command line: argument parsing and output only; the work lives
//! in the library's modules.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};

use ggp_asp::gdl::{self, print::term_to_string, Phase, Severity};
use ggp_asp::player::solver::SolverConfig;
use ggp_asp::player::{server, MatchConfig, ServerConfig};
use ggp_asp::reasoner::{Engine, Prover, StateMachine};
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
    /// Play GGP matches: an HTTP player speaking the match protocol.
    Serve {
        #[arg(long, default_value_t = 9147)]
        port: u16,
        #[arg(long, default_value = "127.0.0.1")]
        bind: std::net::IpAddr,
        /// The name INFO reports.
        #[arg(long, default_value = "ggp-asp")]
        name: String,
        /// Search threads per match.
        #[arg(long, default_value_t = 1)]
        threads: usize,
        /// Milliseconds kept back from every clock for the reply to travel.
        #[arg(long, default_value_t = 500)]
        margin_ms: u64,
        #[arg(long, value_enum, default_value_t = Engine::Auto)]
        engine: Engine,
        /// Do not run the ASP solver on one-player games.
        #[arg(long)]
        no_solver: bool,
        /// Seconds the solver may take for one run.
        #[arg(long, default_value_t = 300.0)]
        solver_timeout: f64,
        /// The solver's memory limit in MB.
        #[arg(long, default_value_t = 4096)]
        solver_memory_mb: u64,
        /// Seconds a client may take to send a request.
        #[arg(long, default_value_t = 10.0)]
        read_timeout: f64,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
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
        Command::Serve {
            port,
            bind,
            name,
            threads,
            margin_ms,
            engine,
            no_solver,
            solver_timeout,
            solver_memory_mb,
            read_timeout,
        } => {
            let solver = if no_solver {
                None
            } else {
                Some(SolverConfig {
                    exe: std::env::current_exe().context("cannot find our own executable")?,
                    timeout: Duration::from_secs_f64(solver_timeout),
                    memory_mb: solver_memory_mb,
                    threads,
                })
            };
            let cfg = ServerConfig {
                name,
                matches: MatchConfig {
                    margin: Duration::from_millis(margin_ms),
                    threads,
                    engine,
                    solver,
                    ponder: true,
                    seed: 1,
                },
                read_timeout: Duration::from_secs_f64(read_timeout),
                max_body: 4 << 20,
            };
            server::run(cfg, std::net::SocketAddr::new(bind, port))?;
            Ok(ExitCode::SUCCESS)
        }
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

//! `ggp-asp bench`: one subcommand per measurement of [`ggp_asp::bench`]
//! (playouts, solve, arena, search); the measuring is done there, this file
//! parses the arguments and prints the rows as a table or as JSON lines.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Subcommand;

use ggp_asp::arena::{MatchRecord, PlayerSpec, RefereeConfig};
use ggp_asp::bench::arena::{versus, ArenaResult};
use ggp_asp::bench::playouts::{self, EngineRun, PlayoutsConfig};
use ggp_asp::bench::search::{search_bench, SearchBench, SearchSetup};
use ggp_asp::bench::solve;
use ggp_asp::clock;
use ggp_asp::gdl;
use ggp_asp::learn::Model;
use ggp_asp::reasoner::Engine;
use ggp_asp::search::{Enhancements, Parallel};
use ggp_asp::show::plot::{self, Series, TimeAxis};
use ggp_asp::show::Progress;

use super::{game_name, match_error};

/// Benchmarks.
#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    what: BenchCommand,
}

#[derive(Subcommand)]
enum BenchCommand {
    Playouts(PlayoutsArgs),
    Solve(SolveArgs),
    Arena(ArenaArgs),
    Search(SearchArgs),
    Plot(PlotArgs),
}

impl Args {
    pub fn run(self) -> Result<u8> {
        match self.what {
            BenchCommand::Playouts(args) => args.run(),
            BenchCommand::Solve(args) => args.run(),
            BenchCommand::Arena(args) => args.run(),
            BenchCommand::Search(args) => args.run(),
            BenchCommand::Plot(args) => args.run(),
        }
    }
}

/// Random playouts to terminal from the initial state: playouts/s and states/s
/// (setup excluded), compile time and network size, per game and engine.
#[derive(clap::Args)]
struct PlayoutsArgs {
    #[arg(required = true)]
    games: Vec<PathBuf>,
    /// Seconds of playouts per game and engine.
    #[arg(long, value_name = "SECONDS", value_parser = clock::seconds, allow_negative_numbers = true, default_value = "5")]
    seconds: Duration,
    /// Thread counts, comma-separated (`1,2,4,8`): one row each, with the
    /// speed-up over the first and the CPU time per playout against it.
    #[arg(long, value_delimiter = ',', default_value = "1")]
    threads: Vec<usize>,
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
}

impl PlayoutsArgs {
    /// Exit code 1 when a game does not load or an engine does not build; the
    /// other games and engines are still measured.
    fn run(self) -> Result<u8> {
        let engines = match self.engine {
            Some(e) => vec![e],
            None => vec![Engine::Prover, Engine::Propnet],
        };
        if !self.json {
            println!(
                "{:<24} {:<8} {:>7} {:>12} {:>8} {:>9} {:>12} {:>12} {:>9} {:>11} {:>8} {:>8}",
                "game",
                "engine",
                "threads",
                "playouts/s",
                "speed-up",
                "cpu/playout",
                "states/s",
                "playouts/cpu",
                "compile_s",
                "compile_cpu",
                "nodes",
                "avg_len"
            );
        }
        let cfg = PlayoutsConfig {
            seconds: self.seconds.as_secs_f64(),
            threads: self.threads.first().copied().unwrap_or(1),
            seed: self.seed,
            max_steps: self.max_steps,
        };
        let mut failed = false;
        let mut progress = Progress::new((self.games.len() * engines.len()) as u64, "runs");
        for path in &self.games {
            let name = game_name(path);
            let g = match gdl::load(path) {
                Ok(g) => g,
                Err(e) => {
                    failed = true;
                    progress.note(&e.to_string());
                    for _ in &engines {
                        progress.done(&format!("{name}: does not load"));
                    }
                    continue;
                }
            };
            for &e in &engines {
                progress.working_on(&format!("{name} on the {e:?} engine"));
                match playouts::measure_threads(&g, e, &cfg, &self.threads) {
                    Ok(runs) => {
                        for run in &runs {
                            self.print_row(&name, run, &runs[0]);
                        }
                        let best = runs
                            .iter()
                            .map(|r| r.throughput.playouts_per_s())
                            .fold(0.0, f64::max);
                        progress.done(&format!("{name}, {e:?}: {best:.0} playouts/s"));
                    }
                    Err(err) => {
                        failed = true;
                        progress.note(&format!("{name}: {err:#}"));
                        progress.done(&format!("{name}, {e:?}: failed"));
                    }
                }
            }
        }
        Ok(if failed { 1 } else { 0 })
    }

    /// One run; `first` is the run of the first thread count, which the
    /// speed-up and the CPU time per playout are relative to.
    fn print_row(&self, name: &str, run: &EngineRun, first: &EngineRun) {
        let t = &run.throughput;
        let avg = run.avg_length();
        let speedup = t.playouts_per_s() / first.throughput.playouts_per_s().max(1e-9);
        // CPU per playout against the first run's: above 1 the threads cost
        // each other (locks, shared cache lines, the allocator).
        let cpu_per_playout =
            first.throughput.playouts_per_cpu_s() / t.playouts_per_cpu_s().max(1e-9);
        if self.json {
            let row = serde_json::json!({
                "game": name,
                "engine": run.engine,
                "why": run.why,
                "threads": run.threads,
                "speedup": speedup,
                "cpu_per_playout_relative": cpu_per_playout,
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
                "{:<24} {:<8} {:>7} {:>12.0} {:>7.2}x {:>8.2}x {:>12.0} {:>12.0} {:>9.3} {:>11.3} {:>8} {:>8.1}",
                name,
                run.engine,
                run.threads,
                t.playouts_per_s(),
                speedup,
                cpu_per_playout,
                t.states_per_s(),
                t.playouts_per_cpu_s(),
                run.compile_s,
                run.compile_cpu_s,
                run.network
                    .as_ref()
                    .map_or("-".to_string(), |n| n.nodes.to_string()),
                avg
            );
        }
    }
}

/// Solve every single-player game in the directories (a `manifest.tsv` there
/// selects its single-player games), each in a child process.
#[derive(clap::Args)]
struct SolveArgs {
    #[arg(required = true)]
    dirs: Vec<PathBuf>,
    /// Seconds per game.
    #[arg(long, value_name = "SECONDS", value_parser = clock::seconds, allow_negative_numbers = true, default_value = "60")]
    timeout: Duration,
    /// Memory limit per game in MiB.
    #[arg(long, default_value_t = 4096)]
    memory_mb: u64,
    /// Solver threads per game.
    #[arg(long)]
    threads: Option<usize>,
    /// One JSON object per game instead of a table.
    #[arg(long)]
    json: bool,
    /// Also draw the run's cactus plot (games solved against time) to this
    /// SVG file: one line for the run and one per mode when several solved.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    /// The cactus plot's y axis.
    #[arg(long, value_enum, default_value_t = TimeAxis::Cumulative)]
    time_axis: TimeAxis,
    /// Look every game up in this plan store first and write what is found
    /// to it (`--store` alone: the default store); without it every game is
    /// solved and nothing is stored.
    #[arg(long, value_name = "PATH", num_args = 0..=1, default_missing_value = "")]
    store: Option<PathBuf>,
}

impl SolveArgs {
    fn run(self) -> Result<u8> {
        let games = solve::single_player_games(&self.dirs)?;
        // The children are this executable, running `solve --json`.
        let exe = std::env::current_exe().context("cannot find the ggp-asp executable")?;
        let cfg = solve::BenchConfig {
            timeout: self.timeout.as_secs_f64(),
            memory_mb: self.memory_mb,
            threads: self.threads,
            store: match self.store {
                Some(p) if p.as_os_str().is_empty() => {
                    Some(ggp_asp::store::default_path().context(
                        "--store: no default store ($GGP_ASP_STORE is off); give a PATH",
                    )?)
                }
                other => other,
            },
        };
        let mut rows = Vec::new();
        if !self.json {
            println!("{}", solve::TABLE_HEADER);
        }
        let mut progress = Progress::new(games.len() as u64, "games");
        for path in &games {
            progress.working_on(&game_name(path));
            let row = solve::run_one(&exe, path, &cfg);
            if self.json {
                println!("{}", serde_json::to_string(&row)?);
            } else {
                println!("{}", row.table_line());
            }
            progress.done(&format!(
                "{}: {} in {:.1} s",
                row.game,
                row.status().name(),
                row.total_s()
            ));
            rows.push(row);
        }
        drop(progress);
        if let Some(out) = &self.plot {
            let saved: Vec<solve::SavedRow> = rows.iter().map(solve::BenchRow::saved).collect();
            let solved = solve::solved(&saved);
            let mut series = vec![Series::new("all games", &solved)];
            let modes = Series::per_mode(&solved);
            if modes.len() > 1 {
                series.extend(modes);
            }
            plot::cactus(&series, self.time_axis, "bench solve", out)?;
        }
        let summary = solve::summary(&rows);
        if self.json {
            println!("{}", serde_json::to_string(&summary)?);
        } else {
            println!();
            println!("{}", summary.text());
        }
        Ok(0)
    }
}

/// A player (UCT unless --player says otherwise) against random and mc, or
/// the opponents given, at equal clocks, seats alternated.
#[derive(clap::Args)]
struct ArenaArgs {
    #[arg(required = true)]
    games: Vec<PathBuf>,
    #[arg(long, default_value_t = 10)]
    matches: usize,
    /// The player measured: uct, uct+rave, uct+rave+mast, alphabeta, ...
    #[arg(long, default_value = "uct")]
    player: PlayerSpec,
    /// Play clock in seconds.
    #[arg(long, value_name = "SECONDS", value_parser = clock::seconds, allow_negative_numbers = true, default_value = "1")]
    play: Duration,
    /// Start clock in seconds (default: the play clock).
    #[arg(long, value_name = "SECONDS", value_parser = clock::seconds, allow_negative_numbers = true)]
    start: Option<Duration>,
    /// Opponents (default: random and mc): in-process strategies, or
    /// players over HTTP (`http://HOST:PORT`, e.g. another GGP player).
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
    /// The learned model nn-uct, nn-mix, nn-prior, nn-alphabeta and uct-tuned play with.
    #[arg(long)]
    model: Option<PathBuf>,
    /// Also draw the mean scores with their 95% intervals to this SVG file.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
}

impl ArenaArgs {
    fn run(self) -> Result<u8> {
        let default = [PlayerSpec::Random, PlayerSpec::Mc];
        let opponents = if self.opponents.is_empty() {
            &default[..]
        } else {
            &self.opponents[..]
        };
        let cfg = RefereeConfig {
            start_clock: self.start.unwrap_or(self.play),
            play_clock: self.play,
            seed: self.seed,
            engine: self.engine,
            max_steps: self.max_steps,
            model: super::load_model(self.model.as_deref())?,
            ..RefereeConfig::default()
        };
        let total = self.games.len() * opponents.len() * self.matches;
        let mut progress = Progress::new(total as u64, "matches");
        let mut results = Vec::new();
        for path in &self.games {
            let g = gdl::load(path)?;
            let name = game_name(path);
            for opp in opponents {
                progress.working_on(&format!("{name}: {} vs {opp}", self.player));
                // Each match is reported as it ends: a series takes minutes.
                let r = versus(
                    &name,
                    &g,
                    &self.player,
                    opp,
                    self.matches,
                    &cfg,
                    |i, seat, rec| {
                        arena_match_done(&mut progress, &name, &self.player, opp, i, seat, rec)
                    },
                )?;
                if self.json {
                    println!("{}", serde_json::to_string(&r)?);
                } else {
                    print_arena_row(&r);
                }
                results.push(r);
            }
        }
        drop(progress);
        if let Some(out) = &self.plot {
            let title = format!("{} at {} s a move", self.player, self.play.as_secs_f64());
            let bars: Vec<plot::Bar> = results.iter().map(ArenaResult::bar).collect();
            plot::arena_bars(&bars, &title, out)?;
        }
        Ok(0)
    }
}

/// One finished match of a series, on stderr.
fn arena_match_done(
    progress: &mut Progress,
    name: &str,
    player: &PlayerSpec,
    opp: &PlayerSpec,
    i: usize,
    seat: usize,
    rec: &MatchRecord,
) {
    for e in &rec.errors {
        progress.note(&format!(
            "{name}: match {}: error: {}",
            i + 1,
            match_error(e)
        ));
    }
    progress.done(&format!(
        "{name}: {player} vs {opp}: match {} {player} as {} scored {} ({} steps, {} errors)",
        i + 1,
        rec.roles[seat],
        rec.score(seat),
        rec.moves.len(),
        rec.errors.len()
    ));
}

fn print_arena_row(r: &ArenaResult) {
    let worst: Vec<String> = r
        .worst_reply_s
        .iter()
        .map(|(p, s)| format!("{p} {s:.3} s"))
        .collect();
    let pairwise = match (r.pairwise, r.pairwise_ci95) {
        (Some(p), Some(c)) => format!("  head to head {p:>5.1} ± {c:>4.1}"),
        _ => String::new(),
    };
    println!(
        "{:<24} {} vs {:<8} matches {:>3}  mean {:>5.1} ± {:>4.1}{pairwise}  errors {}  worst reply: {}",
        r.game,
        r.player,
        r.opponent,
        r.matches,
        r.mean_score,
        r.ci95,
        r.player_errors,
        worst.join(", ")
    );
}

/// Draws saved benchmark results: `bench solve --json` runs as one cactus
/// plot (a line per file), or `bench arena --json` results as a bar chart.
#[derive(clap::Args)]
struct PlotArgs {
    /// Files written by `bench solve` (its table or `--json` lines) or by
    /// `bench arena --json`; a cactus plot's lines are named after them.
    #[arg(required = true)]
    runs: Vec<PathBuf>,
    /// The SVG file to write.
    #[arg(long, value_name = "FILE.svg")]
    out: PathBuf,
    /// The cactus plot's y axis.
    #[arg(long, value_enum, default_value_t = TimeAxis::Cumulative)]
    time_axis: TimeAxis,
    /// The plot's title.
    #[arg(long)]
    title: Option<String>,
}

impl PlotArgs {
    fn run(self) -> Result<u8> {
        let mut series = Vec::new();
        let mut arena = Vec::new();
        for path in &self.runs {
            let saved = ggp_asp::bench::read_saved(path)?;
            if !saved.rows.is_empty() {
                series.push(Series::new(&game_name(path), &solve::solved(&saved.rows)));
            }
            arena.extend(saved.arena);
        }
        match (series.is_empty(), arena.is_empty()) {
            (false, true) => {
                let title = self.title.as_deref().unwrap_or("bench solve");
                plot::cactus(&series, self.time_axis, title, &self.out)?;
            }
            (true, false) => {
                let title = self.title.as_deref().unwrap_or("bench arena");
                let bars: Vec<plot::Bar> = arena.iter().map(ArenaResult::bar).collect();
                plot::arena_bars(&bars, title, &self.out)?;
            }
            (false, false) => {
                anyhow::bail!("the files mix bench solve and bench arena results: plot them apart")
            }
            (true, true) => anyhow::bail!("no bench solve or bench arena results in the files"),
        }
        Ok(0)
    }
}

/// Tree search iterations/s against the engine's raw playouts/s, one thread.
#[derive(clap::Args)]
struct SearchArgs {
    #[arg(required = true)]
    games: Vec<PathBuf>,
    #[arg(long, value_name = "SECONDS", value_parser = clock::seconds, allow_negative_numbers = true, default_value = "3")]
    seconds: Duration,
    /// Threads of the search, comma-separated (`1,2,4`): one row each, with
    /// the speed-up over the first (the raw playouts stay on one thread).
    #[arg(long, value_delimiter = ',', default_value = "1")]
    threads: Vec<usize>,
    /// How the threads share the search: root (a tree each) or tree (one tree).
    #[arg(long, value_enum, default_value_t = Parallel::Root)]
    parallel: Parallel,
    /// Search enhancements: rave, widen, mast, gifl, decisive, heuristic, prior, tt, imb, finish, cutoff (cutoff:N), joined by +.
    #[arg(long, default_value = "")]
    enhance: Enhancements,
    #[arg(long, value_enum, default_value_t = Engine::Auto)]
    engine: Engine,
    /// A model of `ggp-asp learn` whose value scores the leaves instead of
    /// the playouts (as `nn-uct` plays), for what the network costs.
    #[arg(long)]
    model: Option<PathBuf>,
    /// With `--model`: the model's weight against the playout's (as `nn-mix`
    /// plays at 0.5).
    #[arg(long, requires = "model")]
    mix: Option<f64>,
    #[arg(long)]
    json: bool,
    /// Search on every rank of an MPI job (`mpirun -n N ggp-asp bench search
    /// GAME --cluster`), each rank its own tree of the same root, and report
    /// the job's iterations against rank 0's alone (a build with `--features
    /// mpi`).
    #[arg(long)]
    cluster: bool,
}

impl SearchArgs {
    fn setup(&self, threads: usize, model: &Option<Arc<Model>>) -> SearchSetup {
        SearchSetup {
            engine: self.engine,
            seconds: self.seconds.as_secs_f64(),
            threads,
            parallel: self.parallel,
            enhancements: self.enhance,
            seed: ggp_asp::search::SearchConfig::default().seed,
            model: model.as_ref().map(|m| (Arc::clone(m), self.mix)),
        }
    }

    fn run(self) -> Result<u8> {
        if let Some(w) = self.mix.filter(|w| !(0.0..=1.0).contains(w)) {
            anyhow::bail!("--mix {w}: the model's weight is between 0 and 1");
        }
        let model = match &self.model {
            Some(p) => Some(Arc::new(Model::load(p)?)),
            None => None,
        };
        if self.cluster {
            return self.run_cluster(&model);
        }
        for path in &self.games {
            let g = gdl::load(path)?;
            let mut first: Option<f64> = None;
            for &threads in &self.threads {
                let r = search_bench(&game_name(path), g.clone(), self.setup(threads, &model))?;
                let base = *first.get_or_insert(r.iterations_per_s);
                let speedup = r.iterations_per_s / base.max(1e-9);
                if self.json {
                    let mut v = serde_json::to_value(&r)?;
                    v["speedup"] = serde_json::json!(speedup);
                    println!("{v}");
                } else {
                    print_search_row(&r, speedup);
                }
            }
        }
        Ok(0)
    }

    #[cfg(not(feature = "mpi"))]
    fn run_cluster(self, _model: &Option<Arc<Model>>) -> Result<u8> {
        anyhow::bail!(
            "--cluster needs a build with MPI: cargo build --release --features mpi (README.md says what to install), then mpirun -n N ggp-asp bench search GAME --cluster"
        )
    }

    #[cfg(feature = "mpi")]
    fn run_cluster(self, model: &Option<Arc<Model>>) -> Result<u8> {
        let cluster = ggp_asp::cluster::Cluster::start()?;
        for path in &self.games {
            let g = gdl::load(path)?;
            for &threads in &self.threads {
                let r = ggp_asp::bench::search::cluster_search_bench(
                    &cluster,
                    &game_name(path),
                    g.clone(),
                    self.setup(threads, model),
                )?;
                let Some(r) = r else { continue };
                if self.json {
                    println!("{}", serde_json::to_string(&r)?);
                } else {
                    println!(
                        "{:<24} {:<8} {} ranks x {} threads{}: iterations/s {:>10.1} (rank 0 alone {:.1}, {:.2}x); best move {} ({} of {} root visits)",
                        r.game,
                        r.engine,
                        r.ranks,
                        r.threads,
                        if r.enhancements.is_empty() {
                            String::new()
                        } else {
                            format!(", uct+{}", r.enhancements)
                        },
                        r.iterations_per_s,
                        r.one_rank_iterations_per_s,
                        r.speedup,
                        r.best,
                        r.root.iter().find(|m| m.text == r.best).map_or(0, |m| m.visits),
                        r.root.iter().map(|m| m.visits).sum::<u64>(),
                    );
                }
            }
        }
        Ok(0)
    }
}

fn print_search_row(r: &SearchBench, speedup: f64) {
    println!(
        "{:<24} {:<8} playouts/s {:>10.1}  iterations/s {:>10.1} ({} threads, {:?} parallel{}{}, {speedup:.2}x)  CPU us/iteration {:.2}  ratio {:.2}  nodes {}",
        r.game,
        r.engine,
        r.playouts_per_s,
        r.iterations_per_s,
        r.threads,
        r.parallel,
        if r.enhancements.is_empty() {
            String::new()
        } else {
            format!(", uct+{}", r.enhancements)
        },
        r.model
            .as_ref()
            .map_or(String::new(), |m| format!(", model {m}")),
        r.cpu_us_per_iteration,
        r.ratio,
        r.nodes
    );
}

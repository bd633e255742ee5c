//! `ggp-asp solve`: solves a single-player game with [`asp::solve`] and prints
//! the verified plan, as text or as the JSON object that `bench solve` and the
//! player's solver read.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;

use ggp_asp::asp::{self, Mode, SolveOptions, SolveResult, Status};
use ggp_asp::clock;
use ggp_asp::gdl;
use ggp_asp::show::progress::Spinner;
use ggp_asp::show::{Replay, Style, View};
use ggp_asp::store::plans::Lookup;
use ggp_asp::store::{self, Plans};

/// Solve a single-player game: the shortest plan to goal 100 (else the best
/// goal), verified on the reference prover.
#[derive(clap::Args)]
pub struct Args {
    game: PathBuf,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
    /// Seconds before giving up (the best verified plan so far is kept).
    #[arg(long, value_name = "SECONDS", value_parser = clock::seconds, allow_negative_numbers = true)]
    timeout: Option<Duration>,
    /// The longest plan looked for.
    #[arg(long, default_value_t = 200)]
    max_steps: usize,
    /// Solver threads (default: the machine's cores; in auto mode one is the
    /// incremental worker's and the others, at least one, the full worker's).
    #[arg(long)]
    threads: Option<usize>,
    #[arg(long, value_enum, default_value_t = Mode::Auto)]
    mode: Mode,
    /// Resident memory limit in MiB.
    #[arg(long)]
    memory_mb: Option<u64>,
    /// Solve without the state invariants (proven with clingo, added as
    /// constraints) and without the linear invariants' goal ceiling.
    #[arg(long)]
    no_invariants: bool,
    /// Answer with the first verified plan after a short grace instead of
    /// waiting (up to `--timeout`, else a minute) for a proof that it is
    /// shortest.
    #[arg(long)]
    first: bool,
    /// An option for clingo, after ours (repeat for several), e.g.
    /// `--clingo=--configuration=trendy`.
    #[arg(long = "clingo", value_name = "ARG", allow_hyphen_values = true)]
    clingo_args: Vec<String>,
    /// Draw every state of the plan after it: as a board when the game has
    /// one (colour on a terminal unless NO_COLOR is set), else its fluents.
    #[arg(long, conflicts_with = "json")]
    show: bool,
    /// The plan store to look the game up in and write the answer to
    /// (default: $GGP_ASP_STORE, else plans.sqlite in the user's data
    /// folder, e.g. ~/.local/share/ggp-asp).
    #[arg(long, value_name = "PATH", conflicts_with = "no_store")]
    store: Option<PathBuf>,
    /// Neither look the game up in the plan store nor write to it.
    #[arg(long)]
    no_store: bool,
    /// Solve even when the store has the answer (what is found is still
    /// written to it).
    #[arg(long)]
    fresh: bool,
}

impl Args {
    /// Exit code 1 when the answer is an error. With `--json` a game that
    /// cannot be loaded or solved at all still gets its JSON answer, so that
    /// the process reading it always has one.
    pub fn run(self) -> Result<u8> {
        let mut opts = SolveOptions {
            mode: self.mode,
            timeout: self.timeout,
            max_steps: self.max_steps,
            memory_mb: self.memory_mb,
            invariants: !self.no_invariants,
            clingo_args: self.clingo_args.clone(),
            first: self.first,
            // The clingo workers in processes of their own, so that they
            // never wait on each other for clingo.
            worker_exe: std::env::current_exe().ok(),
            ..SolveOptions::default()
        };
        if let Some(t) = self.threads {
            opts.threads = t;
        }
        let loaded = gdl::load_described(&self.game).map_err(anyhow::Error::from);
        let store = self.open_store()?;
        let stored = match (&store, &loaded) {
            (Some(store), Ok((desc, game))) => self.answer_from_store(store, desc, game, &mut opts),
            _ => None,
        };
        let result = match stored {
            Some(r) => Ok(r),
            None => {
                let spinner = Spinner::start(&format!("solving {}", self.game.display()));
                let result = loaded
                    .as_ref()
                    .map_err(|e| anyhow::anyhow!("{e:#}"))
                    .and_then(|(_, g)| asp::solve(g, &opts).map_err(anyhow::Error::from));
                drop(spinner);
                if let (Some(store), Ok((desc, _)), Ok(r)) = (&store, &loaded, &result) {
                    remember(store, desc, &super::game_name(&self.game), r);
                }
                result
            }
        };
        let game = loaded.map(|(_, g)| g);
        let result = match result {
            Ok(r) => r,
            Err(e) if self.json => SolveResult::error(format!("{e:#}")),
            Err(e) => return Err(e),
        };
        if self.json {
            println!("{}", serde_json::to_string(&result)?);
        } else {
            print_solution(&result);
            if let (true, Ok(game)) = (self.show && !result.plan.is_empty(), &game) {
                show_plan(game, &result.plan)?;
            }
        }
        // Solver threads may still be grounding after a timeout: `main`
        // ends the process without clingo's static destructors.
        Ok(if result.status == Status::Error { 1 } else { 0 })
    }
}

impl Args {
    /// The store this solve uses: none with `--no-store`; the one `--store`
    /// names, an error when it cannot be used; else the default one, a
    /// warning when it cannot be used.
    fn open_store(&self) -> Result<Option<Plans>> {
        if self.no_store {
            return Ok(None);
        }
        match &self.store {
            Some(path) if !store::is_off(path) => Ok(Some(Plans::open(path)?)),
            path => Ok(Plans::open_or_warn(path.as_deref())),
        }
    }

    /// The store's answer for the game, replayed on the prover, when it is
    /// final and `--fresh` is not given; else `None`, after taking the
    /// store's proven bound into `opts` (the proof starts from there).
    fn answer_from_store(
        &self,
        store: &Plans,
        desc: &gdl::Description,
        game: &gdl::Game,
        opts: &mut SolveOptions,
    ) -> Option<SolveResult> {
        if self.fresh {
            return None;
        }
        match store.lookup(desc, game, self.max_steps, self.timeout) {
            Lookup::Answer(_, r) => {
                ggp_asp::progress!(
                    "answer from the plan store {}: {}",
                    store.location(),
                    r.message
                );
                Some(r)
            }
            Lookup::Bound(bound) => {
                ggp_asp::progress!(
                    "the plan store proves no plan to goal 100 of fewer than {bound} moves: the proof starts there"
                );
                opts.refuted = bound - 1;
                None
            }
            Lookup::Nothing => None,
        }
    }
}

/// Writes a solve's answer to the store; a warning when that fails.
fn remember(store: &Plans, desc: &gdl::Description, name: &str, r: &SolveResult) {
    match store.remember(desc, name, r) {
        Ok(true) => ggp_asp::progress!("written to the plan store {}", store.location()),
        Ok(false) => {}
        Err(e) => tracing::warn!("{e}; the answer is not stored"),
    }
}

/// The plan's states, the initial one first, each under the move that led
/// to it.
fn show_plan(game: &gdl::Game, plan: &[String]) -> Result<()> {
    let moves = gdl::parser::parse_ground_terms(&format!("({})", plan.join(" ")), &game.symbols)
        .map_err(|e| anyhow::anyhow!("cannot read the plan back: {e}"))?;
    let joints: Vec<Vec<gdl::Term>> = moves.into_iter().map(|m| vec![m]).collect();
    let states = Replay::states(game, &joints)?;
    let view = View::of(game, &states);
    let style = Style::for_stdout();
    for (i, state) in states.iter().enumerate() {
        println!();
        match i {
            0 => println!("initial state"),
            _ => println!("after step {i}: {}", plan[i - 1]),
        }
        print!("{}", view.render(game, state, style));
    }
    Ok(())
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
                r.mode.map_or("-", asp::WorkerKind::name)
            );
            for (i, m) in r.plan.iter().enumerate() {
                println!("{:4} {m}", i + 1);
            }
        }
        Status::NoPlan => println!("no plan: {}", r.message),
        Status::Timeout => {
            println!("timeout: {}", r.message);
            for (i, m) in r.plan.iter().enumerate() {
                println!("{:4} {m}", i + 1);
            }
        }
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

//! `ggp-asp match`: referees one match between the given players with the
//! [`arena`](ggp_asp::arena) and prints its moves and result, as text or one
//! JSON object.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};

use ggp_asp::arena::{self, MatchEnd, MatchRecord, PlayerSpec, RefereeConfig};
use ggp_asp::clock;
use ggp_asp::gdl;
use ggp_asp::reasoner::Engine;
use ggp_asp::show::{Replay, Style, View};

use super::match_error;

/// Referee one match between players, one per role in role order.
#[derive(clap::Args)]
pub struct Args {
    game: PathBuf,
    /// random, legal, mc, mcm (mc with memory), uct, uct+ENHANCEMENTS (rave,
    /// widen, mast, gifl, decisive, heuristic, prior, tt, imb, finish, cutoff, joined by +:
    /// uct+rave+mast), alphabeta, maxn, auto (meta-choice), auto+trials (its pick put to
    /// trial matches in half the start clock) or http://HOST:PORT; once per role, in role order.
    #[arg(long = "player", required = true)]
    players: Vec<PlayerSpec>,
    /// Start clock in seconds.
    #[arg(long, value_name = "SECONDS", value_parser = clock::seconds, allow_negative_numbers = true, default_value = "10")]
    start: Duration,
    /// Play clock in seconds.
    #[arg(long, value_name = "SECONDS", value_parser = clock::seconds, allow_negative_numbers = true, default_value = "10")]
    play: Duration,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[arg(long, value_enum, default_value_t = Engine::Auto)]
    engine: Engine,
    /// Threads of each in-process UCT player.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// In-process search players run exactly N iterations per move (uct;
    /// mc: N playouts) instead of searching to the clock (reproducible
    /// matches). The clocks are still enforced: give ones that fit.
    #[arg(long)]
    iterations: Option<u64>,
    /// In-process UCT players cut playouts off after N joint moves.
    #[arg(long, default_value_t = ggp_asp::search::SearchConfig::default().max_playout_steps)]
    playout_steps: usize,
    /// The match id sent to remote players (default: `ggp-asp.MILLIS.SEED`).
    #[arg(long)]
    match_id: Option<String>,
    /// Stop the match after this many joint moves.
    #[arg(long, default_value_t = 1000)]
    max_steps: usize,
    /// Print one JSON object (roles, moves, errors, goals, every answer's time
    /// beside the clocks) instead of text.
    #[arg(long)]
    json: bool,
    /// The learned model nn-uct, nn-mix, nn-prior, nn-alphabeta and uct-tuned play with (`ggp-asp learn`).
    #[arg(long)]
    model: Option<PathBuf>,
    /// Draw each state as the match goes: as a board when the game has one
    /// (colour on a terminal unless NO_COLOR is set), else its fluents.
    #[arg(long, conflicts_with = "json")]
    show: bool,
}

impl Args {
    pub fn run(self) -> Result<u8> {
        let kif = std::fs::read_to_string(&self.game)
            .with_context(|| format!("cannot read {}", self.game.display()))?;
        let g = gdl::load(&self.game)?;
        // In text mode each joint move is printed as the referee plays it.
        let observer: Option<arena::StepObserver> = if self.json {
            None
        } else if self.show {
            Some(show_states(&g)?)
        } else {
            Some(std::sync::Arc::new(|step, joint: &[String]| {
                println!("step {}: ({})", step + 1, joint.join(" "));
            }))
        };
        let cfg = RefereeConfig {
            start_clock: self.start,
            play_clock: self.play,
            seed: self.seed,
            engine: self.engine,
            max_steps: self.max_steps,
            uct_threads: self.threads,
            iterations: self.iterations,
            uct_playout_steps: self.playout_steps,
            kif: Some(kif),
            match_id: self.match_id,
            observer,
            model: super::load_model(self.model.as_deref())?,
        };
        let rec = arena::run_match(&g, self.players, &cfg)?;
        if self.json {
            println!("{}", serde_json::to_string(&rec)?);
        } else {
            print_match(&rec);
        }
        Ok(0)
    }
}

/// An observer that prints each joint move and draws the state it leads
/// to, after drawing the initial state now. The states are replayed on the
/// reference prover beside the referee's engine.
fn show_states(g: &gdl::Game) -> Result<arena::StepObserver> {
    let replay = Replay::new(g)?;
    let view = View::of(g, std::slice::from_ref(&replay.initial));
    let style = Style::for_stdout();
    println!("initial state");
    print!("{}", view.render(g, &replay.initial, style));
    let game = g.clone();
    let replay = std::sync::Mutex::new(replay);
    Ok(std::sync::Arc::new(move |step, joint: &[String]| {
        println!();
        println!("step {}: ({})", step + 1, joint.join(" "));
        let moves =
            gdl::parser::parse_ground_terms(&format!("({})", joint.join(" ")), &game.symbols);
        let state = moves.and_then(|m| replay.lock().unwrap_or_else(|p| p.into_inner()).play(&m));
        match state {
            Ok(state) => print!("{}", view.render(&game, &state, style)),
            Err(e) => println!("(cannot draw the state: {e})"),
        }
    }))
}

/// The end of a match in text: its errors, how it ended, the goals.
fn print_match(rec: &MatchRecord) {
    for e in &rec.errors {
        println!("error: {}", match_error(e));
    }
    let goals: Vec<String> = rec
        .goals
        .iter()
        .map(|(r, g)| format!("{r}={}", g.map_or("none".to_string(), |v| v.to_string())))
        .collect();
    let engines: Vec<String> = match rec.engines.as_slice() {
        [one] => vec![one.engine.clone()],
        all => all
            .iter()
            .map(|e| format!("{} from step {}", e.engine, e.from_step))
            .collect(),
    };
    println!(
        "end: {} after {} steps ({:.1} s, engine {})",
        match rec.end {
            MatchEnd::Terminal => "terminal",
            MatchEnd::MaxSteps => "max-steps",
        },
        rec.moves.len(),
        rec.seconds,
        engines.join(", ")
    );
    println!("goals: {}", goals.join(" "));
}

//! A local game manager: referees one match between players and records it.
//!
//! Players sit behind the [`Player`] trait and speak in ground terms, exactly what
//! a GGP game manager exchanges with a remote player, so in-process strategies
//! ([`strategies`]: random, legal, flat Monte Carlo, UCT) and HTTP players are
//! refereed the same way. The referee asks all players at once (as a real manager
//! does), enforces the clocks and legality — a late, illegal or failed answer is
//! replaced by a random legal move and recorded in [`MatchRecord::errors`] — and
//! computes every state itself with the chosen engine. With a remote player, as
//! the player does, it does not hold a match for a slow engine build: when the chosen engine is not
//! built within a quarter of the start clock, the match starts on the prover
//! built lazily ([`crate::reasoner::anytime`]) and moves to the chosen engine
//! between two steps once it is built and faster ([`MatchRecord::engines`]
//! says which engine served which steps). In-process players are built on the
//! engine the referee holds at START.
//!
//! [`crate::bench::arena`] plays series of matches to measure strength.

pub mod http;
mod record;
mod spec;
pub mod strategies;

pub use record::{EngineSpan, MatchEnd, MatchRecord, ReplyError, ReplyTimes};
pub use spec::PlayerSpec;
use spec::{NN_MIX_WEIGHT, NN_PRIOR_VISITS};

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;

use crate::gdl::print::term_to_string;
use crate::gdl::{Game, Term};
use crate::reasoner::anytime::{self, Building, Built};
use crate::reasoner::{AnyMachine, Engine, MachineVisitor, RoleIdx, StateMachine};
use crate::strategy::{self, ModelUse, UctSetup};

/// What a player knows about its match.
#[derive(Clone, Debug)]
pub struct MatchInfo {
    pub match_id: String,
    pub game: Arc<Game>,
    /// The rules as KIF text, as sent in a START message.
    pub kif: Arc<str>,
    /// This player's role.
    pub role: RoleIdx,
    pub role_name: String,
    pub start_clock: Duration,
    pub play_clock: Duration,
}

impl MatchInfo {
    /// The deadline an in-process player aims for when a clock of `clock` started
    /// at `started`: the clock less [`Margin::InProcess`](crate::clock::Margin).
    pub fn deadline(started: Instant, clock: Duration) -> Instant {
        started + crate::clock::answer_within(clock, crate::clock::Margin::InProcess)
    }
}

/// A match participant, in-process or remote.
pub trait Player: Send {
    /// `info`: match id, the game (Arc<Game>) and its KIF text, our role index, clocks.
    fn start(&mut self, info: &MatchInfo) -> Result<()>;
    /// `previous`: the last joint move (None on the first move), as ground terms in role order.
    fn play(&mut self, previous: Option<&[Term]>, info: &MatchInfo) -> Result<Term>;
    fn stop(&mut self, previous: &[Term], info: &MatchInfo);
    fn name(&self) -> String;
    /// What the player thought of the move it answered last, when it can
    /// say (in-process searches): a lost match is read move by move.
    fn report(&self) -> Option<MoveReport> {
        None
    }
}

/// An in-process player's account of one of its moves (`match --json`'s
/// `move_reports`). The step and role are the referee's.
#[derive(Clone, Debug, Default, Serialize)]
pub struct MoveReport {
    pub step: usize,
    pub role: String,
    /// The configuration that chose it (`uct+mast`, ...).
    pub player: String,
    #[serde(rename = "move")]
    pub mv: String,
    /// The move's visits at the root, and its mean value for the player
    /// (0-100).
    pub visits: u64,
    pub value: f64,
    /// What the search expects: joint moves from this state, each in role
    /// order.
    pub line: Vec<Vec<String>>,
    /// Iterations of this move's search, the tree's nodes after it.
    pub iterations: u64,
    pub nodes: usize,
    /// The heuristic scoring the search's states, in words, when one does.
    pub heuristic: Option<String>,
    pub seconds: f64,
}

/// Called after every step with the step number and the joint move as KIF.
pub type StepObserver = Arc<dyn Fn(usize, &[String]) + Send + Sync>;

/// How a match is run.
#[derive(Clone)]
pub struct RefereeConfig {
    pub start_clock: Duration,
    pub play_clock: Duration,
    /// Seeds the referee's random replacement moves and the in-process players.
    pub seed: u64,
    pub engine: Engine,
    /// The match stops (goals read as they are) after this many joint moves.
    pub max_steps: usize,
    /// Threads of each in-process UCT player.
    pub uct_threads: usize,
    /// When set, in-process search players run exactly this many iterations per
    /// move (`uct`: one thread, no search at start; `mc`: playouts) instead of
    /// searching to the clock: a reproducible match, for tests. The referee
    /// still enforces the clocks, so give clocks that fit the work.
    pub iterations: Option<u64>,
    /// Joint moves after which an in-process UCT player's playout is cut off and scored.
    pub uct_playout_steps: usize,
    /// The rules as sent to remote players; printed from the game when absent.
    pub kif: Option<String>,
    pub match_id: Option<String>,
    pub observer: Option<StepObserver>,
    /// The learned model `nn-uct` and `nn-alphabeta` play with.
    pub model: Option<Arc<crate::learn::Model>>,
}

impl Default for RefereeConfig {
    fn default() -> Self {
        RefereeConfig {
            start_clock: Duration::from_secs(10),
            play_clock: Duration::from_secs(10),
            seed: 1,
            engine: Engine::Auto,
            max_steps: 1000,
            uct_threads: 1,
            iterations: None,
            uct_playout_steps: crate::search::SearchConfig::default().max_playout_steps,
            kif: None,
            match_id: None,
            observer: None,
            model: None,
        }
    }
}

/// A player entered in a match: one to build from its spec (`--player`), or
/// one built already (e.g. a test's misbehaving player).
pub enum Entrant {
    Spec(PlayerSpec),
    Custom(Box<dyn Player>),
}

/// Referees one match: `players` in role order.
pub fn run_match(
    game: &Game,
    players: Vec<PlayerSpec>,
    cfg: &RefereeConfig,
) -> Result<MatchRecord> {
    run_match_entrants(game, players.into_iter().map(Entrant::Spec).collect(), cfg)
}

/// [`run_match`] with entrants that may hold ready-made players.
pub fn run_match_entrants(
    game: &Game,
    players: Vec<Entrant>,
    cfg: &RefereeConfig,
) -> Result<MatchRecord> {
    if players.len() != game.roles.len() {
        bail!(
            "the game has {} roles ({}) but {} players were given",
            game.roles.len(),
            game.role_names().join(" "),
            players.len()
        );
    }
    // In-process players are built on the referee's engine before START, so
    // only a match with a remote player, whose clock runs from START, needs
    // an engine at once.
    let remote = players
        .iter()
        .any(|p| matches!(p, Entrant::Spec(PlayerSpec::Http(_))));
    let (machine, why, building) = if remote {
        referee_engine(game, cfg)?
    } else {
        let (machine, why) = AnyMachine::build(game.clone(), cfg.engine)?;
        (machine, why, None)
    };
    tracing::info!("engine: {why}");
    machine.visit(Referee {
        entrants: players,
        cfg,
        game: Arc::new(game.clone()),
        engine: machine.name(),
        building,
    })
}

/// The referee's engine: the one `cfg.engine` chooses when it is built
/// within a quarter of the start clock (2 s at most) and runs faster than
/// the first engine ([`anytime::first_engine`], the prover); else that
/// prover, with the build going on
/// (only when no prover builds at once does the referee wait for it).
fn referee_engine(
    game: &Game,
    cfg: &RefereeConfig,
) -> Result<(AnyMachine, String, Option<Building>)> {
    let patience = (cfg.start_clock / 4).min(Duration::from_secs(2));
    let until = Instant::now() + patience;
    let mut building = Building::start(game.clone(), cfg.engine, patience);
    let first = anytime::first_engine(game, until);
    Ok(match (building.wait(until), first) {
        (Some(Ok(built)), Ok((m, why))) if !built.faster() => (
            m,
            format!("{why}; the chosen engine is slower ({})", built.race()),
            None,
        ),
        (Some(Ok(built)), _) => (built.machine, built.note, None),
        (Some(Err(e)), Ok((m, why))) => (
            m,
            format!("{why}; the chosen engine does not build: {e}"),
            None,
        ),
        (None, Ok((m, why))) => (m, why, Some(building)),
        (Some(Err(e)), Err(_)) => return Err(e.into()),
        (None, Err(_)) => match building.wait(Instant::now() + Duration::from_secs(24 * 3600)) {
            Some(Ok(built)) => (built.machine, built.note, None),
            Some(Err(e)) => return Err(e.into()),
            None => bail!("the engine build ended without an answer"),
        },
    })
}

/// Builds an in-process player on `machine` (seeded with `seed`, UCT settings from
/// `cfg`), or says why the spec needs another module.
pub fn build_player<M: StateMachine + 'static>(
    spec: &PlayerSpec,
    machine: &Arc<M>,
    seed: u64,
    cfg: &RefereeConfig,
) -> Result<Box<dyn Player>> {
    use strategies::*;
    Ok(match spec {
        PlayerSpec::Random => Box::new(RandomPlayer::new(Arc::clone(machine), seed)),
        PlayerSpec::Legal => Box::new(LegalPlayer::new(Arc::clone(machine))),
        PlayerSpec::Mc | PlayerSpec::McMemory => {
            let mut p = McPlayer::new(Arc::clone(machine), seed);
            if *spec == PlayerSpec::McMemory {
                p = p.with_memory();
            }
            if let Some(n) = cfg.iterations {
                p = p.with_playouts(n);
            }
            Box::new(p)
        }
        PlayerSpec::Uct | PlayerSpec::UctWith(_) => {
            let e = match spec {
                PlayerSpec::UctWith(e) => *e,
                _ => Default::default(),
            };
            let setup = uct_setup(seed, cfg)
                .with_playout_steps(cfg.uct_playout_steps)
                .with_enhancements(e);
            Box::new(UctPlayer::new(Arc::clone(machine), setup))
        }
        PlayerSpec::AlphaBeta | PlayerSpec::MaxN => {
            let kind = if *spec == PlayerSpec::AlphaBeta {
                crate::search::minimax::Kind::Paranoid
            } else {
                crate::search::minimax::Kind::MaxN
            };
            let mut p = MinimaxPlayer::new(Arc::clone(machine), kind);
            if let Some(n) = cfg.iterations {
                p = p.with_nodes(n);
            }
            Box::new(p)
        }
        PlayerSpec::Auto | PlayerSpec::AutoTrials => {
            let uct = uct_setup(seed, cfg).with_playout_steps(cfg.uct_playout_steps);
            let trials = *spec == PlayerSpec::AutoTrials;
            Box::new(AutoPlayer::new(Arc::clone(machine), uct).with_trials(trials))
        }
        PlayerSpec::NnUct
        | PlayerSpec::NnAlphaBeta
        | PlayerSpec::TunedUct
        | PlayerSpec::NnMix
        | PlayerSpec::NnPrior => {
            let Some(model) = &cfg.model else {
                bail!("{spec} plays with a learned model: give one with --model FILE (ggp-asp learn makes one)");
            };
            if let Err(e) = model.check_game(machine.game()) {
                tracing::warn!("{spec}: {e}; playing plain UCT instead");
                return build_player(&PlayerSpec::Uct, machine, seed, cfg);
            }
            if *spec == PlayerSpec::NnAlphaBeta {
                let leaf = strategy::model_leaf(model, &**machine);
                let mut p =
                    MinimaxPlayer::new(Arc::clone(machine), crate::search::minimax::Kind::Paranoid)
                        .with_leaf(leaf);
                if let Some(n) = cfg.iterations {
                    p = p.with_nodes(n);
                }
                return Ok(Box::new(p));
            }
            let used = match spec {
                PlayerSpec::TunedUct => ModelUse::Exploration,
                PlayerSpec::NnMix => ModelUse::Mix(NN_MIX_WEIGHT),
                PlayerSpec::NnPrior => ModelUse::Prior(NN_PRIOR_VISITS),
                _ => ModelUse::Leaves,
            };
            let setup = uct_setup(seed, cfg).with_model(Arc::clone(model), used);
            Box::new(UctPlayer::new(Arc::clone(machine), setup))
        }
        PlayerSpec::Http(url) => Box::new(http::HttpPlayer::new(url)?),
    })
}

/// UCT on the in-process players' threads, seeded with `seed`; with
/// `cfg.iterations`, that many iterations a move (one thread).
fn uct_setup(seed: u64, cfg: &RefereeConfig) -> UctSetup {
    let setup = UctSetup::new(cfg.uct_threads, seed);
    match cfg.iterations {
        Some(n) => setup.with_iterations(n),
        None => setup,
    }
}

struct Referee<'a> {
    entrants: Vec<Entrant>,
    cfg: &'a RefereeConfig,
    game: Arc<Game>,
    /// The engine's name (the one visited).
    engine: &'static str,
    building: Option<Building>,
}

impl MachineVisitor for Referee<'_> {
    type Output = Result<MatchRecord>;

    fn visit<M: StateMachine + 'static>(self, m: Arc<M>) -> Result<MatchRecord> {
        let cfg = self.cfg;
        let roles = self.game.role_names();
        let mut players = entrant_players(self.entrants, &m, cfg, &roles)?;
        let match_id = cfg.match_id.clone().unwrap_or_else(|| {
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis());
            format!("ggp-asp.{t}.{}", cfg.seed)
        });
        let infos = match_infos(cfg, &match_id, &self.game, &roles);
        let started = Instant::now();
        let mut log = Log::new(Arc::clone(&self.game), cfg.seed);
        let replies = all_at_once(&mut players, &infos, |p, info| p.start(info));
        log.start_replies(replies, cfg.start_clock);
        let mut run = MatchRun {
            players,
            infos,
            cfg,
            log,
            moves: Vec::new(),
            history: Vec::new(),
            reports: Vec::new(),
            building: self.building,
            engines: vec![EngineSpan {
                engine: self.engine.to_string(),
                from_step: 0,
            }],
        };
        let (end, goals) = match run.play(&*m, m.initial_state())? {
            Stepped::Ended(end, state) => (end, goals_of(&*m, &state)),
            Stepped::Switch(built) => {
                let name = built.machine.name();
                built.machine.visit(GoOn {
                    run: &mut run,
                    name,
                })?
            }
        };
        let MatchRun {
            mut players,
            infos,
            log,
            moves,
            history,
            engines,
            reports,
            ..
        } = run;
        let last = history.last().cloned().unwrap_or_default();
        for (p, info) in players.iter_mut().zip(&infos) {
            p.stop(&last, info);
        }
        let goals = roles.iter().cloned().zip(goals).collect();
        let worst_reply_s = roles
            .iter()
            .zip(&log.worst)
            .map(|(r, d)| (r.clone(), d.as_secs_f64()))
            .collect();
        let reply_times = log.reply_times(cfg);
        Ok(MatchRecord {
            match_id,
            roles,
            players: players.iter().map(|p| p.name()).collect(),
            moves,
            errors: log.errors,
            goals,
            worst_reply_s,
            reply_times,
            end,
            engine: engines.last().map(|e| e.engine.clone()).unwrap_or_default(),
            engines,
            move_reports: reports,
            seconds: started.elapsed().as_secs_f64(),
        })
    }
}

/// Every role's goal in `state`.
fn goals_of<M: StateMachine>(m: &M, state: &M::State) -> Vec<Option<u8>> {
    (0..m.num_roles()).map(|r| m.goal(state, r)).collect()
}

/// The match on the engine the referee moved to: its moves so far replayed
/// there, then played on to the end.
struct GoOn<'a, 'b> {
    run: &'a mut MatchRun<'b>,
    name: &'static str,
}

impl MachineVisitor for GoOn<'_, '_> {
    type Output = Result<(MatchEnd, Vec<Option<u8>>)>;

    fn visit<M: StateMachine + 'static>(self, m: Arc<M>) -> Self::Output {
        let mut state = m.initial_state();
        for (step, joint) in self.run.history.iter().enumerate() {
            let moves = joint
                .iter()
                .map(|t| m.parse_move(t))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| anyhow!("step {step}: a move is not one of the chosen engine's"))?;
            state = m.next_state(&state, &moves);
        }
        self.run.engines.push(EngineSpan {
            engine: self.name.to_string(),
            from_step: self.run.history.len(),
        });
        match self.run.play(&*m, state)? {
            Stepped::Ended(end, state) => Ok((end, goals_of(&*m, &state))),
            Stepped::Switch(_) => bail!("the referee moved engines twice"),
        }
    }
}

/// The players of `entrants` in role order, in-process ones built on `m`.
fn entrant_players<M: StateMachine + 'static>(
    entrants: Vec<Entrant>,
    m: &Arc<M>,
    cfg: &RefereeConfig,
    roles: &[String],
) -> Result<Vec<Box<dyn Player>>> {
    let mut players: Vec<Box<dyn Player>> = Vec::with_capacity(entrants.len());
    for (i, entrant) in entrants.into_iter().enumerate() {
        let p = match entrant {
            Entrant::Custom(p) => p,
            Entrant::Spec(spec) => build_player(&spec, m, cfg.seed.wrapping_add(1 + i as u64), cfg)
                .with_context(|| format!("player {} ({})", i + 1, roles[i]))?,
        };
        players.push(p);
    }
    Ok(players)
}

/// What each role's player is told about the match.
fn match_infos(
    cfg: &RefereeConfig,
    match_id: &str,
    game: &Arc<Game>,
    roles: &[String],
) -> Vec<MatchInfo> {
    let kif: Arc<str> = cfg.kif.clone().unwrap_or_else(|| game.to_kif()).into();
    roles
        .iter()
        .enumerate()
        .map(|(r, name)| MatchInfo {
            match_id: match_id.to_string(),
            game: Arc::clone(game),
            kif: Arc::clone(&kif),
            role: r,
            role_name: name.clone(),
            start_clock: cfg.start_clock,
            play_clock: cfg.play_clock,
        })
        .collect()
}

/// What the referee keeps while a match runs: the problems it recorded, each
/// role's answer times and slowest answer, and the random source of its
/// replacement moves.
struct Log {
    game: Arc<Game>,
    roles: Vec<String>,
    errors: Vec<ReplyError>,
    worst: Vec<Duration>,
    /// Per role: its START answer, then its PLAY answers by step.
    times: Vec<Vec<Duration>>,
    rng: SmallRng,
}

impl Log {
    fn new(game: Arc<Game>, seed: u64) -> Log {
        let roles = game.role_names();
        Log {
            worst: vec![Duration::ZERO; roles.len()],
            times: vec![Vec::new(); roles.len()],
            game,
            roles,
            errors: Vec::new(),
            rng: SmallRng::seed_from_u64(seed),
        }
    }

    fn record(&mut self, r: RoleIdx, step: usize, kind: &str, detail: String) {
        self.errors.push(err(&self.roles[r], step, kind, detail));
    }

    /// Records the answers to START: failures and late ones.
    fn start_replies(&mut self, replies: Vec<(Result<()>, Duration)>, clock: Duration) {
        for (r, (res, took)) in replies.into_iter().enumerate() {
            self.worst[r] = self.worst[r].max(took);
            self.times[r].push(took);
            if let Err(e) = res {
                self.record(r, 0, "error", format!("start: {e:#}"));
            } else if took > clock {
                self.record(r, 0, "timeout", late("start", took, clock));
            }
        }
    }

    /// The answer times recorded, under `cfg`'s clocks.
    fn reply_times(&self, cfg: &RefereeConfig) -> ReplyTimes {
        let s = |d: &Duration| (d.as_secs_f64() * 1000.0).round() / 1000.0;
        let per_role = self.roles.iter().cloned().zip(&self.times);
        ReplyTimes {
            start_clock_s: cfg.start_clock.as_secs_f64(),
            play_clock_s: cfg.play_clock.as_secs_f64(),
            start_s: per_role
                .clone()
                .map(|(r, t)| (r, t.first().map_or(0.0, s)))
                .collect(),
            play_s: per_role
                .map(|(r, t)| (r, t.iter().skip(1).map(s).collect()))
                .collect(),
        }
    }

    /// Role `r`'s move at `step`: its answer when it came in time and is among
    /// `legal`, else (recorded) a random legal move.
    fn judge<M: StateMachine>(
        &mut self,
        m: &M,
        (r, step): (RoleIdx, usize),
        (res, took): (Result<Term>, Duration),
        clock: Duration,
        legal: &[M::Move],
    ) -> M::Move {
        self.worst[r] = self.worst[r].max(took);
        self.times[r].push(took);
        let chosen = match res {
            Err(e) => {
                self.record(r, step, "error", format!("{e:#}"));
                None
            }
            Ok(_) if took > clock => {
                self.record(r, step, "timeout", late("play", took, clock));
                None
            }
            Ok(t) => {
                let mv = m.parse_move(&t).filter(|mv| legal.contains(mv));
                if mv.is_none() {
                    let t = term_to_string(&t, &self.game.symbols);
                    self.record(r, step, "illegal", format!("{t} is not legal"));
                }
                mv
            }
        };
        chosen.unwrap_or_else(|| legal[self.rng.gen_range(0..legal.len())].clone())
    }
}

/// A match in play, engine aside: the players, what the referee recorded,
/// the moves so far (as KIF and as terms), the chosen engine's build while
/// the first engine serves, and which engine served which steps.
struct MatchRun<'a> {
    players: Vec<Box<dyn Player>>,
    infos: Vec<MatchInfo>,
    cfg: &'a RefereeConfig,
    log: Log,
    moves: Vec<Vec<String>>,
    history: Vec<Vec<Term>>,
    reports: Vec<MoveReport>,
    building: Option<Building>,
    engines: Vec<EngineSpan>,
}

/// How a stretch of play on one engine ended.
enum Stepped<S> {
    /// The match is over: why, and the final state.
    Ended(MatchEnd, S),
    /// The chosen engine is built and faster: the match goes on over it.
    Switch(Built),
}

impl MatchRun<'_> {
    /// The chosen engine, once built and faster than the first; a build that
    /// fails or is slower is dropped (and logged).
    fn poll_build(&mut self) -> Option<Built> {
        let built = match self.building.as_mut()?.poll() {
            Some(Ok(built)) => built,
            Some(Err(e)) => {
                tracing::warn!("the chosen engine does not build ({e}); the prover referees on");
                self.building = None;
                return None;
            }
            None => return None,
        };
        self.building = None;
        if built.worth_switching() {
            tracing::info!(
                "the chosen engine is built after {:.3}s and faster ({}): {}",
                built.took.as_secs_f64(),
                built.race(),
                built.note
            );
            return Some(built);
        }
        tracing::info!(
            "the chosen engine is built but not enough faster to switch ({}); the prover referees on",
            built.race()
        );
        None
    }

    /// Plays on from `state` (after the moves so far) until the match ends,
    /// reaches the step limit, or the chosen engine is ready to take over.
    fn play<M: StateMachine>(&mut self, m: &M, mut state: M::State) -> Result<Stepped<M::State>> {
        let cfg = self.cfg;
        let mut buf = Vec::new();
        let end = loop {
            if m.is_terminal(&state) {
                break MatchEnd::Terminal;
            }
            let step = self.moves.len();
            if step >= cfg.max_steps {
                break MatchEnd::MaxSteps;
            }
            if let Some(built) = self.poll_build() {
                return Ok(Stepped::Switch(built));
            }
            let prev = self.history.last().cloned();
            let replies = all_at_once(&mut self.players, &self.infos, |p, info| {
                p.play(prev.as_deref(), info)
            });
            let mut joint = Vec::with_capacity(replies.len());
            for (r, reply) in replies.into_iter().enumerate() {
                m.legal_moves(&state, r, &mut buf);
                if buf.is_empty() {
                    bail!(
                        "step {step}: role {} has no legal move in a non-terminal state",
                        self.log.roles[r]
                    );
                }
                joint.push(self.log.judge(m, (r, step), reply, cfg.play_clock, &buf));
            }
            let terms: Vec<Term> = joint.iter().map(|mv| m.move_term(mv)).collect();
            let texts: Vec<String> = terms
                .iter()
                .map(|t| term_to_string(t, &self.log.game.symbols))
                .collect();
            if let Some(obs) = &cfg.observer {
                obs(step, &texts);
            }
            for (r, p) in self.players.iter().enumerate() {
                if let Some(report) = p.report() {
                    self.reports.push(MoveReport {
                        step,
                        role: self.log.roles[r].clone(),
                        ..report
                    });
                }
            }
            self.moves.push(texts);
            state = m.next_state(&state, &joint);
            self.history.push(terms);
        };
        Ok(Stepped::Ended(end, state))
    }
}

fn err(role: &str, step: usize, kind: &str, detail: String) -> ReplyError {
    ReplyError {
        role: role.to_string(),
        step,
        kind: kind.to_string(),
        detail,
    }
}

fn late(what: &str, took: Duration, clock: Duration) -> String {
    format!(
        "{what} answered after {:.3} s, clock {:.3} s",
        took.as_secs_f64(),
        clock.as_secs_f64()
    )
}

/// Asks every player at once, one thread each (as a manager sends its messages
/// together), and times each answer.
fn all_at_once<T: Send>(
    players: &mut [Box<dyn Player>],
    infos: &[MatchInfo],
    ask: impl Fn(&mut dyn Player, &MatchInfo) -> Result<T> + Sync,
) -> Vec<(Result<T>, Duration)> {
    let ask = &ask;
    std::thread::scope(|s| {
        let handles: Vec<_> = players
            .iter_mut()
            .zip(infos)
            .map(|(p, info)| {
                s.spawn(move || {
                    let t0 = Instant::now();
                    let res = ask(p.as_mut(), info);
                    (res, t0.elapsed())
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| (Err(anyhow!("the player panicked")), Duration::ZERO))
            })
            .collect()
    })
}

//! Engine choice: which [`StateMachine`] runs a game's rules (`--engine
//! auto|prover|propnet`). [`StateMachine`] has associated state and move types, so
//! code that works on "whatever engine was chosen" is written once as a
//! [`MachineVisitor`] and [`AnyMachine::visit`] monomorphises it per engine.

use std::sync::Arc;
use std::time::Duration;

use crate::cputime::ThreadWatch;
use crate::gdl::Game;

use super::ground::{GroundError, GroundProgram};
use super::prover::Strategy;
use super::{hybrid, prepare, Hybrid, Propnet, PropnetError, Prover, ProverError, StateMachine};

/// The engine asked for on the command line.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, clap::ValueEnum)]
pub enum Engine {
    /// The compiled engine when the game compiles within its limits and runs
    /// fast, else the prover (when a short trial finds it faster).
    #[default]
    Auto,
    /// The reference prover, bottom-up or goal-directed, whichever does less
    /// work on a short trial.
    Prover,
    /// The reference prover, evaluating bottom-up (every relation a question
    /// depends on).
    BottomUp,
    /// The reference prover, evaluating goal-directed (only the calls a
    /// question makes).
    GoalDirected,
    /// The compiled propositional network (fails when the game does not compile).
    Propnet,
}

impl Engine {
    /// The engine for rules [`prepare`] has chosen: the prover when it alone
    /// runs them (nothing grounds, so no propnet is worth trying), else
    /// `auto`'s choice. The solver decides by it once per solve.
    pub fn for_prepared(prepared: &prepare::Prepared) -> Engine {
        if prepared.prover_only {
            Engine::Prover
        } else {
            Engine::Auto
        }
    }
}

/// Generic code over the chosen engine.
pub trait MachineVisitor {
    type Output;
    fn visit<M: StateMachine + 'static>(self, machine: Arc<M>) -> Self::Output;
}

/// A built engine, shared between threads.
#[derive(Clone)]
pub enum AnyMachine {
    Prover(Arc<Prover>),
    Propnet(Arc<Propnet>),
    /// A propnet for the questions that ground, the prover for the rest.
    Hybrid(Arc<Hybrid>),
}

/// Why no engine could be built.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Prover(#[from] ProverError),
    #[error("the propnet does not compile")]
    Propnet(#[from] PropnetError),
}

impl AnyMachine {
    /// Builds the engine `engine` asks for. The second value says what was chosen
    /// and why (e.g. why `auto` fell back to the prover), for logs.
    ///
    /// A propnet built on the rules as written is taken at once (it grounds
    /// with more room than [`prepare`] gives, and grounding twice would cost
    /// start-up time). Otherwise the rules [`prepare`] chooses are tried
    /// too: a rewrite that grounds, or the rewrite the prover runs when
    /// nothing else runs the game. When both the rules as written and a
    /// rewrite give an engine, a short race picks the faster (a prover that
    /// answers goal-directed on the rules as written can beat a propnet of a
    /// rewrite); the plays are the same, the moves spelled the same.
    pub fn build(game: Game, engine: Engine) -> Result<(AnyMachine, String), EngineError> {
        let watch = ThreadWatch::start();
        let (first, ground_failed) = AnyMachine::as_written(game.clone(), engine, None);
        tracing::debug!(
            "engine on the rules as written: {:.3} s, {}",
            watch.elapsed().as_secs_f64(),
            first
                .as_ref()
                .map_or_else(|e| e.to_string(), |(_, why)| why.clone())
        );
        if let Ok((AnyMachine::Propnet(_), _)) = first {
            return first;
        }
        let prover_builds = match &first {
            Ok(_) => Some(true),
            Err(EngineError::Prover(_)) => Some(false),
            Err(_) => None,
        };
        let watch = ThreadWatch::start();
        let prepared = prepare::prepare_knowing(&game, None, prover_builds, ground_failed.as_ref());
        tracing::debug!("rewrites tried: {:.3} s", watch.elapsed().as_secs_f64());
        let rewritten = match (prepared.note, prepared.prover) {
            (Some(note), Some(prover)) if prepared.prover_only => {
                (engine != Engine::Propnet).then(|| {
                    let strategy = prover.strategy().name();
                    let machine = AnyMachine::Prover(Arc::new(prover));
                    (
                        machine,
                        format!("prover ({strategy}), on rewritten rules: {note}"),
                    )
                })
            }
            (Some(note), _) if prepared.too_big.is_none() => {
                AnyMachine::build_on_ground(prepared.game, engine, prepared.ground)
                    .ok()
                    .map(|(machine, why)| (machine, format!("{why}, on rewritten rules: {note}")))
            }
            _ => None,
        };
        match (first, rewritten) {
            (first, None) => first,
            (Err(_), Some(second)) => Ok(second),
            (Ok((a, why_a)), Some((b, why_b))) => {
                let (rate_a, rate_b) = (a.trial_rate(), b.trial_rate());
                let (m, why, lost, rate_lost) = if rate_b > rate_a {
                    (b, why_b, why_a, rate_a)
                } else {
                    (a, why_a, why_b, rate_b)
                };
                let rate = rate_a.max(rate_b);
                Ok((
                    m,
                    format!("{why} ({rate:.0} states/s in a trial; {lost}: {rate_lost:.0})"),
                ))
            }
        }
    }

    /// States per CPU second on the engine-choice trial; a prover whose
    /// rules do not finish a state within [`RACE_WORK`] join steps counts 0.
    pub(super) fn trial_rate(&self) -> f64 {
        match self {
            AnyMachine::Prover(p) => p.bounded(RACE_WORK, states_per_second).unwrap_or(0.0),
            AnyMachine::Propnet(n) => states_per_second(&**n),
            // The budget of join steps is the whole walk's: a hybrid walks
            // many more states than the prover alone in the same time, so
            // it walks at most as many as the prover's budget allows.
            AnyMachine::Hybrid(h) => h
                .prover()
                .bounded(RACE_WORK, |_| rate(&**h, HYBRID_TRIAL_STEPS, TRIAL))
                .unwrap_or(0.0),
        }
    }

    /// [`AnyMachine::build`] without the rewrites: the engine on the rules as
    /// given, compiled from `game`'s ground program when the caller has it
    /// (the solver's preparation grounds the rules it chooses), not ground
    /// again.
    pub fn build_on_ground(
        game: Game,
        engine: Engine,
        ground: Option<GroundProgram>,
    ) -> Result<(AnyMachine, String), EngineError> {
        Self::as_written(game, engine, ground).0
    }

    /// [`AnyMachine::build_on_ground`], and how grounding the rules stopped
    /// when a propnet was tried and they did not ground (so that the
    /// rewrites' trials need not find out again).
    fn as_written(
        game: Game,
        engine: Engine,
        ground: Option<GroundProgram>,
    ) -> (
        Result<(AnyMachine, String), EngineError>,
        Option<GroundError>,
    ) {
        let compiled = match engine {
            Engine::Propnet | Engine::Auto => {
                let watch = ThreadWatch::start();
                let net = match ground {
                    Some(gp) => Propnet::from_ground(game.clone(), gp),
                    None => Propnet::new(game.clone()),
                };
                tracing::debug!(
                    "propnet compile: {:.3} s, {}",
                    watch.elapsed().as_secs_f64(),
                    net.as_ref()
                        .map_or_else(|e| e.to_string(), |_| "compiled".into())
                );
                Some(net)
            }
            _ => None,
        };
        let ground_failed = match &compiled {
            Some(Err(PropnetError::Ground(e))) => Some(e.clone()),
            _ => None,
        };
        (Self::choose(game, engine, compiled), ground_failed)
    }

    /// The engine `engine` names, given the propnet compile's outcome when
    /// it names a propnet (or `auto`).
    fn choose(
        game: Game,
        engine: Engine,
        compiled: Option<Result<Propnet, PropnetError>>,
    ) -> Result<(AnyMachine, String), EngineError> {
        match engine {
            Engine::Prover => {
                let prover = Prover::try_new(game)?;
                let why = format!("prover ({})", prover.strategy().name());
                Ok((AnyMachine::Prover(Arc::new(prover)), why))
            }
            Engine::BottomUp | Engine::GoalDirected => {
                let strategy = if engine == Engine::BottomUp {
                    Strategy::BottomUp
                } else {
                    Strategy::GoalDirected
                };
                let prover = Prover::try_with(game, strategy)?;
                let why = format!("prover ({})", strategy.name());
                Ok((AnyMachine::Prover(Arc::new(prover)), why))
            }
            Engine::Propnet => {
                let net = compiled.expect("compiled for a propnet")?;
                let why = propnet_note(&net);
                Ok((AnyMachine::Propnet(Arc::new(net)), why))
            }
            Engine::Auto => match compiled.expect("compiled for auto") {
                Ok(net) => {
                    let why = propnet_note(&net);
                    let net_rate = states_per_second(&net);
                    if net_rate >= FAST_ENOUGH {
                        return Ok((AnyMachine::Propnet(Arc::new(net)), why));
                    }
                    // A network that must solve recursive components every
                    // step can be far slower than the prover (the
                    // demand-rewritten mummymaze1p).
                    if let Ok(prover) = Prover::try_new(game) {
                        let prover_rate =
                            prover.bounded(RACE_WORK, states_per_second).unwrap_or(0.0);
                        if prover_rate > 2.0 * net_rate {
                            let strategy = prover.strategy().name();
                            return Ok((
                                AnyMachine::Prover(Arc::new(prover)),
                                format!(
                                    "prover ({strategy}; {prover_rate:.0} states/s in a trial, the {why}: {net_rate:.0})"
                                ),
                            ));
                        }
                    }
                    Ok((AnyMachine::Propnet(Arc::new(net)), why))
                }
                Err(e) => {
                    let prover = Prover::try_new(game.clone())?;
                    let strategy = prover.strategy().name();
                    let why = format!("prover ({strategy}; the propnet does not compile: {e})");
                    let PropnetError::Ground(ground) = &e else {
                        return Ok((AnyMachine::Prover(Arc::new(prover)), why));
                    };
                    Ok(Self::hybrid_or_prover(&game, ground, prover, why))
                }
            },
        }
    }

    /// For a game whose grounding stopped with `error`: a [`Hybrid`] when
    /// one builds and runs faster than `prover` in a race, else `prover`
    /// (`why` says why it was chosen; the log says why not the hybrid).
    /// The hybrid's own prover is goal-directed: the bottom-up one computes
    /// every relation of a state for `next`, including what the network
    /// answers.
    fn hybrid_or_prover(
        game: &Game,
        error: &super::ground::GroundError,
        prover: Prover,
        why: String,
    ) -> (AnyMachine, String) {
        let watch = ThreadWatch::start();
        let built = Prover::try_with(game.clone(), Strategy::GoalDirected)
            .map_err(|e| e.to_string())
            .and_then(|own| hybrid::build(game, error, own, &hybrid::limits()));
        let h = match built {
            Ok(h) => h,
            Err(not) => {
                tracing::debug!("no hybrid engine: {not}");
                return (AnyMachine::Prover(Arc::new(prover)), why);
            }
        };
        let prover_rate = prover.bounded(RACE_WORK, states_per_second).unwrap_or(0.0);
        let rate = AnyMachine::Hybrid(Arc::clone(&h)).trial_rate();
        tracing::debug!(
            "hybrid engine: {:.3} s to build and race, {rate:.0} states/s against the prover's {prover_rate:.0}",
            watch.elapsed().as_secs_f64()
        );
        if rate > prover_rate {
            let note = format!(
                "{} ({rate:.0} states/s in a trial, the prover alone {prover_rate:.0}; the propnet does not compile: {error})",
                h.describe()
            );
            (AnyMachine::Hybrid(h), note)
        } else {
            let note = format!(
                "{why}; a {} ran {rate:.0} states/s in a trial, the prover {prover_rate:.0}",
                h.describe()
            );
            (AnyMachine::Prover(Arc::new(prover)), note)
        }
    }

    /// Runs `v` on the engine.
    pub fn visit<V: MachineVisitor>(&self, v: V) -> V::Output {
        match self {
            AnyMachine::Prover(m) => v.visit(Arc::clone(m)),
            AnyMachine::Propnet(m) => v.visit(Arc::clone(m)),
            AnyMachine::Hybrid(m) => v.visit(Arc::clone(m)),
        }
    }

    /// The engine's name: `prover`, `propnet` or `hybrid`.
    pub fn name(&self) -> &'static str {
        match self {
            AnyMachine::Prover(_) => "prover",
            AnyMachine::Propnet(_) => "propnet",
            AnyMachine::Hybrid(_) => "hybrid",
        }
    }

    pub fn game(&self) -> &Game {
        match self {
            AnyMachine::Prover(m) => m.game(),
            AnyMachine::Propnet(m) => m.game(),
            AnyMachine::Hybrid(m) => m.game(),
        }
    }
}

/// States a second above which a propnet is not compared with the prover:
/// real games' propnets run at 100,000 and more, the prover at a few thousand.
const FAST_ENOUGH: f64 = 10_000.0;

/// How long each engine's trial runs at most, in CPU time of the thread (so a
/// busy machine chooses as an idle one does), and how many steps: a fast
/// propnet is done in a few milliseconds.
const TRIAL: Duration = Duration::from_millis(50);
/// Join steps a prover may take in a race before it counts as too slow.
const RACE_WORK: u64 = 20_000_000;
const TRIAL_STEPS: usize = 2_000;
/// Steps of a hybrid's trial: [`RACE_WORK`] join steps are then 100,000 a
/// state for the part on the prover.
const HYBRID_TRIAL_STEPS: usize = 200;

/// Next states per CPU second over a short walk (see [`super::walk::walk`]).
fn states_per_second<M: StateMachine>(m: &M) -> f64 {
    rate(m, TRIAL_STEPS, TRIAL)
}

/// Next states per CPU second of this thread over a fixed walk of at most
/// `steps` steps and `budget` (the walk stops at the first step past it):
/// what `auto`'s races measure, for `ggp-asp inspect`.
pub fn rate<M: StateMachine>(m: &M, steps: usize, budget: Duration) -> f64 {
    let watch = ThreadWatch::start();
    let steps = super::walk::walk(m, steps, Some(budget));
    steps as f64 / watch.elapsed().as_secs_f64().max(1e-9)
}

/// What was built, for logs: the propnet's size and compile time.
fn propnet_note(net: &Propnet) -> String {
    let s = net.stats();
    format!(
        "propnet ({} nodes, {} fluents, {} moves, compiled in {:.3} s)",
        s.nodes, s.fluents, s.moves, s.compile_s
    )
}

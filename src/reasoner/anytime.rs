//! Anytime engines: a match cannot wait for its engine. The engine `auto`
//! chooses (a propnet, a hybrid, a prover on rewritten rules, after their
//! races) may take seconds to build on a large game, longer than a start
//! clock; the prover answers at once. [`first_engine`] is that prover;
//! [`Building`] builds the chosen engine on a thread of its own, to replace
//! the first one when it is ready and enough faster: the build ends with a
//! race of the two ([`Built::worth_switching`]), since on some games the
//! prover outruns the engine `auto` chooses. Dropping a [`Building`] cancels the build
//! ([`crate::cancel`]): a match that ended does not keep a core busy
//! grounding its rules.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, TryRecvError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::engine::{AnyMachine, Engine, EngineError};
use super::Prover;
use crate::gdl::Game;

/// Units of work (join steps and tuples, see [`Prover::try_eager_within`])
/// the first engine may spend computing static relations whole: a tenth to
/// a third of a second on the 2-core machine. Every corpus game but three
/// computes them within an eighth of it; two of those pass the prover's
/// size guard anyway.
pub const FIRST_STATIC_WORK: u64 = 10_000_000;

/// The engine that answers from the moment the rules are read, built by
/// `by`: the prover, goal-directed, no trial. Its static relations are
/// computed whole when that takes little work ([`FIRST_STATIC_WORK`]) and
/// ends by `by`: with their real sizes its joins are planned well
/// (computed on demand, a game like checkers asks for rows of a large
/// relation one call at a time and plays no move in minutes). Else they
/// are computed on demand ([`Prover::try_lazy`]), so no preparation stands
/// before its first answer. On rules read top-down it is the prover with
/// its trial ([`Prover::try_new`]): such rules may not end, and the trial
/// finds out within a bound of work.
pub fn first_engine(game: &Game, by: Instant) -> Result<(AnyMachine, String), EngineError> {
    let (prover, why) = if !game.top_down.is_empty() {
        (
            Prover::try_new(game.clone())?,
            "prover (goal-directed), while the chosen engine builds".to_string(),
        )
    } else {
        match eager_by(game, by) {
            Ok(p) => (
                p,
                "prover (goal-directed), while the chosen engine builds".to_string(),
            ),
            Err(why) => (
                Prover::try_lazy(game.clone())?,
                format!(
                    "prover (goal-directed, static relations on demand: {why}), while the chosen engine builds"
                ),
            ),
        }
    };
    Ok((AnyMachine::Prover(Arc::new(prover)), why))
}

/// The prover with its static relations computed whole, if that takes at
/// most [`FIRST_STATIC_WORK`] and ends by `by` (on a thread of its own,
/// cancelled at `by`); else why not.
fn eager_by(game: &Game, by: Instant) -> Result<Prover, String> {
    let (tx, rx) = mpsc::channel();
    let cancel = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&cancel);
    let game = game.clone();
    std::thread::Builder::new()
        .name("first engine".into())
        .spawn(move || {
            let built =
                crate::cancel::within(flag, || Prover::try_eager_within(game, FIRST_STATIC_WORK));
            let _ = tx.send(built);
        })
        .map_err(|e| format!("no thread to compute them on: {e}"))?;
    let left = by.saturating_duration_since(Instant::now());
    match rx.recv_timeout(left) {
        Ok(built) => built.map_err(|e| e.to_string()),
        Err(_) => {
            cancel.store(true, Ordering::Relaxed);
            Err(format!("not computed within {:.3} s", left.as_secs_f64()))
        }
    }
}

/// A second engine for a match whose engine answers under a lock (the
/// prover, a hybrid's prover part): a move worked out beside the search
/// (the server's catch-up move for a worker steps behind) would otherwise
/// wait for the search's calls, on a slow engine past the clock. Filled by
/// a thread of its own ([`spare`]); empty until then.
pub type Spare = Arc<std::sync::OnceLock<AnyMachine>>;

/// A [`Spare`] for `machine`, building on its own thread (the first engine
/// again, its static relations within [`FIRST_STATIC_WORK`] or on demand);
/// `None` for an engine without a lock (the propnet), which needs none.
pub fn spare(machine: &AnyMachine) -> Option<Spare> {
    if matches!(machine, AnyMachine::Propnet(_)) {
        return None;
    }
    let slot: Spare = Arc::default();
    let fill = Arc::clone(&slot);
    let game = machine.game().clone();
    let spawned = std::thread::Builder::new()
        .name("spare engine".into())
        .spawn(move || {
            // No deadline but the work bound: nothing waits on it.
            let far = Instant::now() + Duration::from_secs(3600);
            if let Ok((m, _)) = first_engine(&game, far) {
                let _ = fill.set(m);
            }
        });
    spawned.ok().map(|_| slot)
}

/// An engine built in the background, how long it took, and how it ran
/// against the first engine.
pub struct Built {
    pub machine: AnyMachine,
    /// What was chosen and why ([`AnyMachine::build`]'s note).
    pub note: String,
    pub took: Duration,
    /// States per CPU second of the engine built and of the first engine,
    /// on the engine choice's trial walk.
    pub rate: f64,
    pub first_rate: f64,
}

/// How much faster than the first engine the engine built must run to
/// replace it: a move to another engine costs a match its tree and a
/// profile of the new engine (seconds on a slow one), and a trial's rates
/// differ by a tenth from run to run. A prover replaced by a prover 5%
/// faster cost a match its next five moves.
const SWITCH_GAIN: f64 = 1.5;

impl Built {
    /// Whether the engine built runs faster than the first engine: before
    /// the match starts, the one to start on.
    pub fn faster(&self) -> bool {
        self.rate > self.first_rate
    }

    /// Whether the engine built runs enough faster than the first engine
    /// ([`SWITCH_GAIN`]) to replace it mid-match.
    pub fn worth_switching(&self) -> bool {
        self.rate > self.first_rate * SWITCH_GAIN
    }

    /// The race's outcome, for logs.
    pub fn race(&self) -> String {
        format!(
            "{:.0} states/s in a trial, the first engine {:.0}",
            self.rate, self.first_rate
        )
    }
}

/// What a build ends with.
pub type BuildResult = Result<Built, EngineError>;

/// The engine `engine` chooses for a game, being built on a thread of its
/// own. Dropping it cancels the build.
pub struct Building {
    rx: Receiver<BuildResult>,
    cancel: Arc<AtomicBool>,
    started: Instant,
    /// The build has answered (or its thread is gone): nothing more comes.
    done: bool,
}

impl Building {
    /// Starts building `engine`'s choice for `game` ([`AnyMachine::build`]),
    /// to race against a first engine built within `first_wait` (as the
    /// match's was, [`first_engine`]).
    pub fn start(game: Game, engine: Engine, first_wait: Duration) -> Building {
        let (tx, rx) = mpsc::channel();
        let cancel = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&cancel);
        let started = Instant::now();
        let spawned = std::thread::Builder::new()
            .name("engine build".into())
            .spawn(move || {
                let built = crate::cancel::within(flag, || AnyMachine::build(game.clone(), engine));
                let built = built.map(|(machine, note)| {
                    let took = started.elapsed();
                    // A first engine of its own: the match's is busy.
                    let first_rate = first_engine(&game, Instant::now() + first_wait)
                        .map_or(0.0, |(m, _)| m.trial_rate());
                    Built {
                        rate: machine.trial_rate(),
                        first_rate,
                        machine,
                        note,
                        took,
                    }
                });
                let _ = tx.send(built);
            });
        let done = match spawned {
            Ok(_) => false,
            Err(e) => {
                tracing::warn!("cannot start the engine build's thread: {e}");
                true
            }
        };
        Building {
            rx,
            cancel,
            started,
            done,
        }
    }

    /// The build's outcome, once, when it has ended; `None` while it runs
    /// (and after its outcome was taken).
    pub fn poll(&mut self) -> Option<BuildResult> {
        if self.done {
            return None;
        }
        match self.rx.try_recv() {
            Ok(r) => {
                self.done = true;
                Some(r)
            }
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => {
                self.done = true;
                None
            }
        }
    }

    /// [`Building::poll`], waiting until `until` at most.
    pub fn wait(&mut self, until: Instant) -> Option<BuildResult> {
        if self.done {
            return None;
        }
        let left = until.saturating_duration_since(Instant::now());
        match self.rx.recv_timeout(left) {
            Ok(r) => {
                self.done = true;
                Some(r)
            }
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => {
                self.done = true;
                None
            }
        }
    }

    /// Whether the build is still running (its outcome not yet taken).
    pub fn pending(&self) -> bool {
        !self.done
    }

    /// How long since the build started.
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }
}

impl Drop for Building {
    fn drop(&mut self) {
        self.cancel.store(true, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reasoner::StateMachine;

    fn corpus(name: &str) -> Game {
        crate::gdl::load(std::path::Path::new(&format!("../shared/games/{name}"))).expect("loads")
    }

    /// On games whose static relations the prover cannot compute whole
    /// (mummymaze1p, past the size guard) or computes slowly (sudoku), the
    /// first engine still builds and answers: legal moves at the start.
    #[test]
    fn the_first_engine_answers_where_the_eager_prover_cannot() {
        for name in ["mummymaze1p.kif", "sudoku.kif"] {
            let game = corpus(name);
            let (m, _) =
                first_engine(&game, Instant::now() + Duration::from_secs(600)).expect("builds");
            let AnyMachine::Prover(p) = m else {
                panic!("{name}: the first engine is the prover")
            };
            let s = p.initial_state();
            assert!(
                !p.legal(&s, 0).is_empty(),
                "{name}: legal moves at the start"
            );
        }
    }

    /// Where computing the static relations whole is little work, the first
    /// engine does (checkers: on demand it plays no move in minutes); where
    /// it cannot finish by the deadline, they are computed on demand.
    #[test]
    fn the_first_engine_computes_static_relations_whole_when_cheap() {
        let far = Instant::now() + Duration::from_secs(600);
        let (_, why) = first_engine(&corpus("checkers.kif"), far).expect("builds");
        assert!(!why.contains("on demand"), "{why}");
        let (m, why) = first_engine(&corpus("mummymaze1p.kif"), Instant::now()).expect("builds");
        assert!(why.contains("not computed within"), "{why}");
        let AnyMachine::Prover(p) = m else {
            panic!("the first engine is the prover")
        };
        assert!(!p.legal(&p.initial_state(), 0).is_empty());
    }

    /// A build gives its outcome once: the engine `auto` chooses.
    #[test]
    fn a_build_answers_once() {
        let mut b = Building::start(corpus("ticTacToe.kif"), Engine::Auto, Duration::ZERO);
        let built = b.wait(Instant::now() + Duration::from_secs(600));
        let built = built.expect("an outcome").expect("builds");
        assert_eq!(built.machine.name(), "propnet");
        assert!(b.poll().is_none() && !b.pending());
    }
}

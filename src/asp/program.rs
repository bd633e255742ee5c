//! A complete ASP program: the game's translated rules placed into one of the
//! game-independent encodings of `encodings/`.
//!
//! - [`Program::full`]: every timed rule once with the time variable `T` (a rule
//!   whose body binds no time gets `time(T)`), then `encodings/full.lp`; the solver
//!   adds `horizon(H).`
//! - [`Program::incremental`]: `#program base.` with the time-free rules and the
//!   state rules at step 0, `#program step(t).` with the move rules at `t-1` and the
//!   state rules at `t`, then `encodings/incremental.lp` (which holds `check(t)`).
//!
//! The text is what clingo grounds and what `ggp-asp encode` prints: rules grouped
//! by when they are grounded, each under a comment with its GDL source.

use std::fmt::Write;

use crate::gdl::Game;

use super::invariants::{self, Invariant, Report};
use super::translate::{translate, AspRule, RuleKind, Translation};

/// The game-independent encoding for full grounding.
pub const FULL_LP: &str = include_str!("../../encodings/full.lp");
/// The game-independent encoding for incremental (multi-shot) solving.
pub const INCREMENTAL_LP: &str = include_str!("../../encodings/incremental.lp");

/// A game translated, ready to be printed in either form.
#[derive(Clone, Debug)]
pub struct Program {
    pub translation: Translation,
    /// State invariants added as constraints (see [`Program::find_invariants`]).
    pub invariants: Vec<Invariant>,
    /// The most moves any play lasts, when a clock in the rules says so
    /// ([`super::bounds::game_length`]): a horizon the full worker grounds.
    pub ends_by: Option<usize>,
    /// The game's source, for the programs' first line.
    pub name: String,
}

impl Program {
    pub fn new(game: &Game) -> Program {
        Program {
            translation: translate(game),
            invariants: Vec::new(),
            ends_by: super::bounds::game_length(game),
            name: game.source.clone(),
        }
    }

    /// Proves the game's state invariants (see [`super::invariants`]) within
    /// `budget` (CPU time) and adds them to both forms of the program. Runs on a
    /// thread of its own with a large stack (clingo's grounder recurses deeply),
    /// which is left behind when it overruns the budget by far: clingo's grounder
    /// cannot be interrupted, and on some games (ruleDepthQuadratic: relations
    /// of 2^45 tuples bottom-up) it never returns, while the forward search
    /// needs no clingo at all.
    pub fn find_invariants(&mut self, budget: std::time::Duration) -> Result<Report, String> {
        let tr = self.translation.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("asp-invariants".into())
            .stack_size(64 << 20)
            .spawn(move || {
                // The budget starts once the search holds clingo: waiting for
                // another solver of the process (tests run several) is not work.
                let _guard = super::control::lock();
                let _ = tx.send(None);
                let _ = tx.send(Some(invariants::find_locked(&tr, budget)));
            })
            .map_err(|e| format!("cannot start a thread: {e}"))?;
        if rx.recv().is_err() {
            return Err("the invariant search failed".to_string());
        }
        // The budget is the search's CPU time; this guard on the wall clock is
        // for clingo's grounding, which cannot be interrupted, and allows a
        // busy machine four times the budget.
        let report = match rx.recv_timeout(budget * 4 + std::time::Duration::from_secs(1)) {
            Ok(Some(r)) => r?,
            Ok(None) => return Err("the invariant search failed".to_string()),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                return Err(format!(
                    "clingo's grounding of the one-step program overran the {:.1} s budget",
                    budget.as_secs_f64()
                ))
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                return Err("the invariant search failed".to_string())
            }
        };
        self.invariants = report.invariants.clone();
        Ok(report)
    }

    /// The invariants as constraints at time `now`, under a comment.
    fn invariant_section(&self, out: &mut String, now: &str) {
        if self.invariants.is_empty() {
            return;
        }
        let _ = writeln!(
            out,
            "\n% --- State invariants, proven by induction over the rules (they hold in\n\
             % every reachable state, so they remove no plan; they help the search)."
        );
        for inv in &self.invariants {
            let _ = writeln!(out, "% {}", inv.describe());
            let _ = writeln!(out, "{}", inv.constraint(now));
        }
    }

    /// Rules of one kind.
    fn rules(&self, kind: RuleKind) -> impl Iterator<Item = &AspRule> {
        self.translation
            .rules
            .iter()
            .filter(move |r| r.kind == kind)
    }

    fn header(&self, out: &mut String, form: &str) {
        let _ = writeln!(
            out,
            "% ggp-asp: {} as answer set program ({form})",
            self.name
        );
        let _ = writeln!(
            out,
            "% {} rules translated, {} left out (nothing the game needs depends on them)",
            self.translation.rules.len(),
            self.translation.dropped
        );
    }

    /// The program for full grounding (without the `horizon(H).` fact).
    pub fn full(&self) -> String {
        let mut out = String::new();
        self.header(&mut out, "full grounding");
        section(
            &mut out,
            "Time-free rules: roles, initial state, static relations.",
            self.rules(RuleKind::Static),
            "",
            None,
        );
        section(
            &mut out,
            "Rules about the state at step T.",
            self.rules(RuleKind::State),
            "T",
            Some("time(T)"),
        );
        section(
            &mut out,
            "Rules about the moves made at step T.",
            self.rules(RuleKind::Move),
            "T",
            Some("time(T)"),
        );
        self.invariant_section(&mut out, "T");
        out.push('\n');
        out.push_str(FULL_LP);
        out
    }

    /// The program for incremental solving (parts `base`, `step(t)`, `check(t)`).
    pub fn incremental(&self) -> String {
        let mut out = String::new();
        self.header(&mut out, "incremental");
        out.push_str("\n#program base.\n");
        section(
            &mut out,
            "Time-free rules: roles, initial state, static relations.",
            self.rules(RuleKind::Static),
            "",
            None,
        );
        section(
            &mut out,
            "Rules about the state at step 0 (repeated for step t in step(t)).",
            self.rules(RuleKind::State),
            "0",
            None,
        );
        out.push_str("\n#program step(t).\n");
        section(
            &mut out,
            "Rules about the moves made at step t-1.",
            self.rules(RuleKind::Move),
            "t-1",
            None,
        );
        section(
            &mut out,
            "Rules about the state at step t.",
            self.rules(RuleKind::State),
            "t",
            None,
        );
        self.invariant_section(&mut out, "t");
        out.push('\n');
        out.push_str(INCREMENTAL_LP);
        out
    }
}

/// Writes a titled group of rules; facts go together, other rules under their
/// GDL source.
fn section<'a>(
    out: &mut String,
    title: &str,
    rules: impl Iterator<Item = &'a AspRule>,
    now: &str,
    domain: Option<&str>,
) {
    let _ = writeln!(out, "\n% --- {title}");
    for r in rules {
        if let Some(src) = &r.source {
            let _ = writeln!(out, "% {}", src.replace('\n', " "));
        }
        let _ = writeln!(out, "{}", r.render(now, domain));
    }
}

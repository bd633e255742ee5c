//! The answer set program of a single-player game as people read it: what
//! `ggp-asp encode` prints and the service's encoding view shows. The game
//! is prepared as the solver prepares it (a rewrite that grounds, state
//! invariants proven and added), and the program is the full form up to a
//! horizon or the multi-shot form for clingo's incremental mode. Each
//! translated rule follows its GDL rule as a comment, which [`pairs`] reads
//! back to show the two side by side.

use serde::Serialize;

use super::program::Program;
use super::{prepare, solve, INVARIANT_BUDGET};
use crate::gdl::Game;

/// Which program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// Full grounding: plans of at most this many moves, the query on.
    Horizon(usize),
    /// Multi-shot form for clingo's incremental mode (`#include <incmode>.`).
    Incremental,
    /// The parallel-step program (see [`super::parallel`]): plans of at most
    /// this many steps, moves that do not interfere sharing a step.
    Parallel(usize),
}

/// A program and what was said while making it.
#[derive(Clone, Debug)]
pub struct Encoding {
    pub text: String,
    /// Notes and warnings (a rewrite used, no invariants found), one a line.
    pub notes: Vec<String>,
}

/// The program of `g` in `form`, with the proven state invariants unless
/// `invariants` is false. An error says why the game has no program: it is
/// not single-player, or its rules are read top-down only.
pub fn encode(g: &Game, form: Form, invariants: bool) -> Result<Encoding, String> {
    solve::check_single_player(g)?;
    if !g.top_down.is_empty() {
        let names: Vec<String> = g.top_down.iter().map(|r| r.display(&g.symbols)).collect();
        return Err(format!(
            "the rules of {} are read top-down only (a head variable that only their calls bind, over no finite domain): an answer set program cannot hold them; `ggp-asp solve` plans such games with its forward search on the prover",
            names.join(", ")
        ));
    }
    let mut notes = Vec::new();
    let mut prepared = prepare(g);
    if let Form::Parallel(h) = form {
        let ground = prepared.ground.take().ok_or_else(|| {
            let why = prepared
                .too_big
                .clone()
                .unwrap_or_else(|| "it was not ground".into());
            format!("no parallel-step program: the game's ground rules are needed, and {why}")
        })?;
        let steps = super::parallel::analyse(&prepared.game, &ground)
            .map_err(|e| format!("parallel steps do not apply: {e}"))?;
        if let Some(note) = &prepared.note {
            notes.push(format!("note: {note}"));
        }
        notes.push(format!(
            "note: {} moves, {:.1}% of their pairs never interfere",
            steps.moves,
            100.0 * steps.independent()
        ));
        let text = format!(
            "{}
% The horizon (parallel steps).
horizon({h}).
",
            steps.program(&prepared.game.source)
        );
        return Ok(Encoding { text, notes });
    }
    // A rewrite only the prover runs would not ground either: the rules as
    // written are the ones worth reading.
    let encoded = if prepared.prover_only {
        notes.push(
            "warning: neither the game nor any rewrite of it grounds within limits; \
             this is the game as written, and clingo is not likely to ground it"
                .to_string(),
        );
        g
    } else {
        if let Some(note) = &prepared.note {
            notes.push(format!("note: {note}"));
        }
        &prepared.game
    };
    let mut program = Program::new(encoded);
    if invariants {
        let found = match &prepared.too_big {
            None => program.find_invariants(INVARIANT_BUDGET * 10),
            Some(e) => Err(e.clone()),
        };
        if let Err(e) = found {
            notes.push(format!("warning: no state invariants: {e}"));
        }
    }
    // The parallel form was answered above: the others remain.
    let text = match form {
        Form::Horizon(h) => format!(
            "{}\n% The horizon, and the query switched on for the clingo executable.\nhorizon({h}).\nquery.\n",
            program.full()
        ),
        Form::Incremental | Form::Parallel(_) => {
            format!("#include <incmode>.\n{}", program.incremental())
        }
    };
    Ok(Encoding { text, notes })
}

/// One part of a program as [`pairs`] reads it: a GDL rule and the ASP it
/// became, or a line of its own (a fact, a section's comment, a fixed rule
/// of the encoding) with `gdl` empty.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Pair {
    pub gdl: String,
    pub asp: String,
}

/// The program's text cut into parts: each `% (<= ...)` comment that
/// [`Program`] writes before a translated rule, with the lines up to the
/// next comment or blank line; every other run of lines as a part without a
/// rule.
pub fn pairs(text: &str) -> Vec<Pair> {
    let mut out: Vec<Pair> = Vec::new();
    let mut open = false;
    for line in text.lines() {
        let rule = line.strip_prefix("% (");
        if let Some(rest) = rule {
            out.push(Pair {
                gdl: format!("({rest}"),
                asp: String::new(),
            });
            open = true;
            continue;
        }
        // A translation is rules (`:-`), each a line unless it runs on
        // to a line that ends it with `.`; a fact after it is the game's own.
        let continues = out
            .last()
            .is_some_and(|p| !p.asp.is_empty() && !p.asp.trim_end().ends_with('.'));
        if line.trim().is_empty() || line.starts_with('%') || !(line.contains(":-") || continues) {
            open = false;
        }
        match out.last_mut() {
            Some(p) if open || (p.gdl.is_empty() && !line.trim().is_empty()) => {
                if !p.asp.is_empty() {
                    p.asp.push('\n');
                }
                p.asp.push_str(line);
            }
            _ if line.trim().is_empty() => {}
            _ => out.push(Pair {
                gdl: String::new(),
                asp: line.to_string(),
            }),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_put_each_rule_beside_its_translation() {
        let text = "% header\nrole(p).\n\n% (<= (a ?x) (b ?x))\na(X) :- b(X).\n% (<= c d)\nc :- d.\nc :- e.\nfact(1).\n";
        let p = pairs(text);
        assert_eq!(
            p,
            vec![
                Pair {
                    gdl: String::new(),
                    asp: "% header\nrole(p).".into()
                },
                Pair {
                    gdl: "(<= (a ?x) (b ?x))".into(),
                    asp: "a(X) :- b(X).".into()
                },
                Pair {
                    gdl: "(<= c d)".into(),
                    asp: "c :- d.\nc :- e.".into()
                },
                Pair {
                    gdl: String::new(),
                    asp: "fact(1).".into()
                },
            ]
        );
    }
}

//! Two engines walked in lockstep ([`compare`]): seeded random playouts
//! compare, in every state met, the fluents, the terminal flag, every role's
//! goal values and legal moves (as sorted KIF text); the joint move is drawn
//! from the prover's sorted legal moves, so the run is deterministic.

use std::time::Duration;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use ggp_asp::gdl::{self, print::term_to_string, Game};
use ggp_asp::reasoner::{Prover, StateMachine};

/// What one game's comparison did.
pub struct Outcome {
    pub states: usize,
}

/// Sorted KIF text of terms.
pub fn texts(game: &Game, terms: impl IntoIterator<Item = gdl::Term>) -> Vec<String> {
    let mut v: Vec<String> = terms
        .into_iter()
        .map(|t| term_to_string(&t, &game.symbols))
        .collect();
    v.sort();
    v
}

pub fn legal_texts<M: StateMachine>(m: &M, s: &M::State, role: usize) -> Vec<(String, M::Move)> {
    let mut v: Vec<(String, M::Move)> = m
        .legal(s, role)
        .into_iter()
        .map(|mv| (term_to_string(&m.move_term(&mv), &m.game().symbols), mv))
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

/// Walks both engines through `playouts` seeded random playouts; `Err` names the
/// first difference (playout, step, what).
pub fn compare<N: StateMachine>(
    prover: &Prover,
    net: &N,
    playouts: usize,
    max_steps: usize,
    seed: u64,
    budget: Duration,
) -> Result<Outcome, String> {
    let game = prover.game();
    let roles = game.role_names();
    // CPU time of this thread: a busy machine compares as far as an idle one.
    let start = ggp_asp::cputime::ThreadWatch::start();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut states = 0;
    for p in 0..playouts {
        let mut ps = prover.initial_state();
        let mut ns = net.initial_state();
        for step in 0..=max_steps {
            let at = |what: &str, a: String, b: String| {
                format!("playout {p}, step {step}: {what} differ\n  prover: {a}\n  other:  {b}")
            };
            states += 1;
            let (pf, nf) = (
                texts(game, prover.fluents(&ps)),
                texts(game, net.fluents(&ns)),
            );
            if pf != nf {
                return Err(at("states", pf.join(" "), nf.join(" ")));
            }
            let (pt, nt) = (prover.is_terminal(&ps), net.is_terminal(&ns));
            if pt != nt {
                return Err(at("terminal flags", pt.to_string(), nt.to_string()));
            }
            let mut joint_p = Vec::new();
            let mut joint_n = Vec::new();
            for (r, name) in roles.iter().enumerate() {
                let (pg, ng) = (prover.goal_values(&ps, r), net.goal_values(&ns, r));
                if pg != ng {
                    return Err(at(
                        &format!("goals of {name}"),
                        format!("{pg:?}"),
                        format!("{ng:?}"),
                    ));
                }
                let pl = legal_texts(prover, &ps, r);
                let nl = legal_texts(net, &ns, r);
                let (pls, nls): (Vec<&String>, Vec<&String>) = (
                    pl.iter().map(|x| &x.0).collect(),
                    nl.iter().map(|x| &x.0).collect(),
                );
                if pls != nls {
                    return Err(at(
                        &format!("legal moves of {name}"),
                        format!("{pls:?}"),
                        format!("{nls:?}"),
                    ));
                }
                if !pl.is_empty() {
                    let i = rng.gen_range(0..pl.len());
                    joint_p.push(pl[i].1);
                    joint_n.push(nl[i].1.clone());
                }
            }
            if pt || step == max_steps || joint_p.len() < roles.len() || start.elapsed() > budget {
                break;
            }
            ps = prover.next_state(&ps, &joint_p);
            ns = net.next_state(&ns, &joint_n);
        }
        if start.elapsed() > budget {
            break;
        }
    }
    Ok(Outcome { states })
}

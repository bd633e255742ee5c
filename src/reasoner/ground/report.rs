//! Where grounding goes ([`report`]): per relation, the ground atoms and the
//! rule instances the grounder found before it finished or stopped, for
//! `ggp-asp inspect`.

use hashbrown::HashMap;

use super::{run_grounder, Limits};
use crate::gdl::{Game, Sym};

/// Where grounding goes: per relation, its ground atoms and the rule
/// instances with a head in it, as far as grounding got.
#[derive(Clone, Debug)]
pub struct Report {
    /// Why grounding stopped before the end (the counts are then partial).
    pub stopped: Option<String>,
    pub atoms: usize,
    pub rules: usize,
    /// Candidate atoms tried in joins (what [`Limits::max_join_steps`] bounds).
    pub join_steps: u64,
    /// The bytes the grounding held (what [`Limits::max_memory`] bounds).
    pub memory: usize,
    /// Every relation with its `(atoms, rule instances)`, largest first (by
    /// the larger of the two).
    pub relations: Vec<(String, usize, usize)>,
}

/// Grounds `game` within `limits` and says where the ground atoms and rule
/// instances went (`ggp-asp inspect`): the relations that make a game too
/// big to ground are at the top.
pub fn report(game: &Game, limits: &Limits) -> Report {
    let (g, _, result) = run_grounder(game, limits);
    let model = &g.model;
    let mut per_rel: HashMap<(Sym, usize), (usize, usize)> = HashMap::new();
    for (&key, &rel) in &model.rel_of {
        per_rel.entry(key).or_default().0 = model.rel_atoms[rel as usize].len();
    }
    for (head, _, _) in &g.out {
        let pool = &model.pool;
        let arity = if pool.is_const(*head) {
            0
        } else {
            pool.args(*head).len()
        };
        per_rel.entry((pool.functor(*head), arity)).or_default().1 += 1;
    }
    let mut relations: Vec<(String, usize, usize)> = per_rel
        .into_iter()
        .map(|((name, arity), (atoms, rules))| {
            (format!("{}/{arity}", game.symbols.name(name)), atoms, rules)
        })
        .collect();
    relations.sort_by(|a, b| b.1.max(b.2).cmp(&a.1.max(a.2)).then(a.0.cmp(&b.0)));
    Report {
        stopped: result.err().map(|e| e.to_string()),
        atoms: model.atoms.len() + g.new_atoms.len(),
        rules: g.out.len(),
        join_steps: g.ticks,
        memory: g.memory(),
        relations,
    }
}

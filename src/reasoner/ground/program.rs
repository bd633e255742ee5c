//! The grounder's output, the ground game, and the questions the analyses
//! built on it ask of it (which `legal` atom a `does` atom needs, the first
//! role's goal atoms).

use hashbrown::HashMap;

use crate::gdl::{kw, Game, Term};
use crate::reasoner::terms::{TermId, TermPool};

/// Index of a ground atom in [`GroundProgram::atoms`].
pub type AtomId = u32;

/// A ground rule: `head :- pos..., not neg...`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroundRule {
    pub head: AtomId,
    pub pos: Vec<AtomId>,
    pub neg: Vec<AtomId>,
}

/// The ground game: atoms (as interned terms, e.g. `true(cell(1,1,b))`) and rules.
/// The relaxation's own rules (`true` from `init`/`next`, `does` from `legal`)
/// are not among the rules.
#[derive(Clone)]
pub struct GroundProgram {
    pub pool: TermPool,
    pub atoms: Vec<TermId>,
    pub atom_of: HashMap<TermId, AtomId>,
    pub rules: Vec<GroundRule>,
    /// Candidate atoms the joins tried (the work grounding took).
    pub join_steps: u64,
}

impl GroundProgram {
    /// The bytes the program holds, counted as the grounding counts them
    /// against [`super::Limits::max_memory`].
    pub fn bytes(&self) -> usize {
        let lits: usize = self.rules.iter().map(|r| r.pos.len() + r.neg.len()).sum();
        self.pool.bytes()
            + self.atoms.len() * super::limits::ATOM_BYTES
            + self.rules.len() * super::limits::RULE_BYTES
            + lits * std::mem::size_of::<AtomId>()
    }

    /// Each atom's rules, by head: indices into `rules`.
    pub fn rules_by_head(&self) -> Vec<Vec<usize>> {
        let mut by_head = vec![Vec::new(); self.atoms.len()];
        for (i, r) in self.rules.iter().enumerate() {
            by_head[r.head as usize].push(i);
        }
        by_head
    }

    /// The atom for a ground term, if it is in the relaxed model.
    pub fn atom(&self, t: TermId) -> Option<AtomId> {
        self.atom_of.get(&t).copied()
    }

    /// Each atom's `(legal R M)` atom when it is a `(does R M)` atom and the
    /// relaxed model holds both (indexed by atom).
    pub fn legal_of_does(&self) -> Vec<Option<AtomId>> {
        self.atoms
            .iter()
            .map(|&t| {
                if self.pool.functor(t) != kw::DOES {
                    return None;
                }
                let does = self.pool.to_term(t);
                let legal = Term::Func(kw::LEGAL, does.args().to_vec());
                self.pool.find_term(&legal).and_then(|id| self.atom(id))
            })
            .collect()
    }

    /// The `(goal R 100)` atom of `game`'s first role, when the relaxed
    /// model has it.
    pub fn first_role_goal100(&self, game: &Game) -> Option<AtomId> {
        self.first_role_goals(game)
            .into_iter()
            .find(|&(_, v)| v == "100")
            .map(|(a, _)| a)
    }

    /// The `(goal R V)` atoms of `game`'s first role with a constant `V`, and
    /// the constant's name.
    pub fn first_role_goals<'a>(&'a self, game: &'a Game) -> Vec<(AtomId, &'a str)> {
        let Some(role) = game.roles.first().and_then(|r| self.pool.find_term(r)) else {
            return Vec::new();
        };
        (0..self.atoms.len() as AtomId)
            .filter_map(|a| {
                let t = self.atoms[a as usize];
                let args = self.pool.args(t);
                let ours = self.pool.functor(t) == kw::GOAL
                    && args.len() == 2
                    && args[0] == role
                    && self.pool.is_const(args[1]);
                ours.then(|| (a, game.symbols.name(self.pool.functor(args[1]))))
            })
            .collect()
    }
}

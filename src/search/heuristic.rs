//! A state's value read from the rules, for games whose random playouts do
//! not finish within the clock (a chess game on the reference prover): the
//! search scores the state where it stops with what the rules say there
//! instead of the outcome of a playout it has no time for.
//!
//! Three things are read, none of them knowing the game:
//!
//! - **The goal**, where the rules define it before the end (piece counts,
//!   a queen kept): each role's goal there, scaled to 0..1.
//! - **Material**: per role, how many fluents the role owns. A constant is a
//!   role's when it is the role's name, or when the static facts name it
//!   beside that role and no other (`(piece_owner_type wp white pawn)` makes
//!   `wp` white's). An argument place of a fluent (relation, arity and
//!   position among its constants) holds material when, in the initial
//!   state, it holds owned constants of every role, at least two a role, and
//!   mostly owned ones (`(cell ?x ?y ?piece)`'s third place, not its
//!   coordinates; not `(control ?r)`, which only one role holds at a time).
//!   A role's material value is a logistic function of its lead over the
//!   others' mean, in units of an eighth of its initial material: a piece
//!   ahead in chess is clearly better, ten pieces ahead is nearly won.
//! - **Mobility**: the legal moves of the roles with a choice, against the
//!   branching of the initial state. At turns only the mover has a choice;
//!   its freedom counts for it and against the others, so a state after our
//!   move is scored on how little the reply can do, and one after theirs on
//!   how much we can.
//!
//! A terminal state scores its goals, as the game's own evaluator does.
//! Otherwise the material (0.8) and the mobility (0.2) make one value, or
//! the mobility alone where no place holds material; where the goal is
//! defined for every role, it weighs as much as that value. Nothing is
//! learned here, so nothing depends on how fast the engine runs: the same
//! rules give the same heuristic on every engine ([`Heuristic::new`] reads them
//! from the machine it is given). Engines that keep the last state's
//! answers (the prover) give the goal and the legal moves of a node just
//! expanded at no cost.
//!
//! Material means the opposite in a game won by losing pieces (suicide
//! othello): the rules do not say so, random playouts do, and the
//! meta-choice turns it round where they show it ([`Heuristic::against`]).
//! Weak where material is not in the fluents (a race): the goal then
//! guides, or the mobility.

use hashbrown::{HashMap, HashSet};

use super::policy::Evaluator;
use crate::gdl::symbol::kw;
use crate::gdl::{Game, Sym, Term};
use crate::reasoner::{RoleIdx, StateMachine};

/// UCB1's exploration constant for a search scored by the heuristic. Its
/// values are exact, not noisy playout outcomes, and a piece won or lost
/// moves them by a few hundredths: the default constant (0.7) would spread
/// the few iterations a slow engine allows evenly over the moves.
pub const EXPLORATION: f64 = 0.2;

/// Whole random playouts a move below which a search is scored by the
/// heuristic: with fewer, UCT's statistics are noise (on chess on the
/// prover it made none and played the first legal move).
pub const MIN_PLAYOUTS_PER_MOVE: f64 = 30.0;

/// Whether whole random playouts fit a move: `playouts_per_s` of them at a
/// clock of `move_secs` seconds give at least [`MIN_PLAYOUTS_PER_MOVE`].
pub fn playouts_fit(playouts_per_s: f64, move_secs: f64) -> bool {
    playouts_per_s * move_secs >= MIN_PLAYOUTS_PER_MOVE
}

/// Where a role's material is, as one machine numbers the game's symbols.
#[derive(Clone, Debug, Default)]
pub struct Material {
    /// Constant -> the role it belongs to.
    owner: HashMap<Sym, RoleIdx>,
    /// (relation, arity, position among the fluent's constants) that hold
    /// material.
    places: HashSet<(Sym, usize, usize)>,
    /// The lead (in fluents) that counts as one unit of the logistic.
    scale: f64,
}

impl Material {
    /// Reads owners from `game`'s static facts and the places that hold
    /// them from the fluents of the initial state, `initial`.
    pub fn new(game: &Game, initial: &[Term]) -> Material {
        let owner = owners(game);
        let roles = game.roles.len();
        // (place) -> (fluents per owning role, distinct constants, owned ones)
        type Seen = (Vec<usize>, HashSet<Sym>, HashSet<Sym>);
        let mut seen: HashMap<(Sym, usize, usize), Seen> = HashMap::new();
        let mut leaves = Vec::new();
        for f in initial {
            let Term::Func(name, args) = f else { continue };
            leaves.clear();
            constants(f, &mut leaves);
            for (i, c) in leaves.iter().enumerate() {
                let e = seen
                    .entry((*name, args.len(), i))
                    .or_insert_with(|| (vec![0; roles], HashSet::new(), HashSet::new()));
                e.1.insert(*c);
                if let Some(&r) = owner.get(c) {
                    e.0[r] += 1;
                    e.2.insert(*c);
                }
            }
        }
        let mut places = HashSet::new();
        let mut total = 0;
        for (place, (per_role, distinct, owned)) in seen {
            if per_role.iter().all(|&n| n >= 2) && 2 * owned.len() >= distinct.len() {
                places.insert(place);
                total += per_role.iter().sum::<usize>();
            }
        }
        let per_role = total as f64 / roles.max(1) as f64;
        Material {
            owner,
            places,
            scale: (per_role / 8.0).max(1.0),
        }
    }

    /// No place holds material: the counts say nothing.
    pub fn is_empty(&self) -> bool {
        self.places.is_empty()
    }

    /// The role that owns fluent `f` as material, if any.
    pub fn owner_of(&self, f: &Term, leaves: &mut Vec<Sym>) -> Option<RoleIdx> {
        let Term::Func(name, args) = f else {
            return None;
        };
        leaves.clear();
        constants(f, leaves);
        leaves.iter().enumerate().find_map(|(i, c)| {
            self.places
                .contains(&(*name, args.len(), i))
                .then(|| self.owner.get(c).copied())
                .flatten()
        })
    }

    /// Each role's lead in material, in units of the logistic: its count
    /// of owned fluents (`counts`, one per role) less the others' mean.
    fn leads(&self, counts: &[usize]) -> Vec<f64> {
        let n = counts.len();
        let total: usize = counts.iter().sum();
        counts
            .iter()
            .map(|&c| {
                let others = if n > 1 {
                    (total - c) as f64 / (n - 1) as f64
                } else {
                    0.0
                };
                (c as f64 - others) / self.scale
            })
            .collect()
    }

    /// Each role's material value, 0..1, from its count of owned fluents
    /// (`counts`, one per role) into `out`; with `against`, a lead counts
    /// against its owner.
    pub fn values(&self, counts: &[usize], against: bool, out: &mut Vec<f64>) {
        out.clear();
        let sign = if against { -1.0 } else { 1.0 };
        out.extend(self.leads(counts).into_iter().map(|l| logistic(sign * l)));
    }
}

/// Material's weight against mobility where both are known: material
/// decides, mobility breaks its ties and steers towards a cornered king.
const MATERIAL: f64 = 0.8;

fn logistic(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// The constants of `t` below its functor, depth first, left to right.
fn constants(t: &Term, out: &mut Vec<Sym>) {
    if let Term::Func(_, args) = t {
        for a in args {
            match a {
                Term::Const(s) => out.push(*s),
                Term::Func(..) => constants(a, out),
                Term::Var(_) => {}
            }
        }
    }
}

/// Each constant that belongs to one role: the roles' names, and the
/// constants that static facts name beside one role and never beside
/// another.
fn owners(game: &Game) -> HashMap<Sym, RoleIdx> {
    let roles: Vec<Sym> = game.roles.iter().filter_map(Term::name).collect();
    let role_of = |s: &Sym| roles.iter().position(|r| r == s);
    let mut beside: HashMap<Sym, HashSet<RoleIdx>> = HashMap::new();
    for (rel, rows) in game.fact_tables() {
        if [kw::ROLE, kw::INIT, kw::BASE, kw::INPUT].contains(&rel.name) {
            continue;
        }
        for row in rows {
            let consts: Vec<Sym> = row
                .iter()
                .filter_map(|t| match t {
                    Term::Const(s) => Some(*s),
                    _ => None,
                })
                .collect();
            let named: HashSet<RoleIdx> = consts.iter().filter_map(role_of).collect();
            let [r] = named.iter().copied().collect::<Vec<_>>()[..] else {
                continue;
            };
            for c in consts.iter().filter(|c| role_of(c).is_none()) {
                beside.entry(*c).or_default().insert(r);
            }
        }
    }
    let mut owner: HashMap<Sym, RoleIdx> = beside
        .into_iter()
        .filter(|(_, rs)| rs.len() == 1)
        .filter_map(|(c, rs)| rs.into_iter().next().map(|r| (c, r)))
        .collect();
    for (r, s) in roles.iter().enumerate() {
        owner.insert(*s, r);
    }
    owner
}

/// The heuristic evaluator of one machine: goals where defined, material,
/// mobility (see the module's introduction); a terminal state scores its
/// goals.
pub struct Heuristic {
    material: Material,
    /// For an engine that numbers its fluents: the owner of each as
    /// material, so a state is counted without building terms.
    numbered: Vec<Option<RoleIdx>>,
    /// The legal moves of a role with a choice in the initial state (their
    /// mean over such roles): mobility is measured against it.
    branching: f64,
    /// Material counts against its owner: the game is won by losing pieces
    /// (see [`Heuristic::against`]).
    against: bool,
}

impl Heuristic {
    /// The heuristic of `machine`'s rules.
    pub fn new<M: StateMachine>(machine: &M) -> Heuristic {
        let init = machine.initial_state();
        let initial = machine.fluents(&init);
        let material = Material::new(machine.game(), &initial);
        let mut leaves = Vec::new();
        let numbered = if material.is_empty() {
            Vec::new()
        } else {
            (0..machine.numbered_fluents())
                .map(|i| {
                    machine
                        .fluent_term(i)
                        .and_then(|t| material.owner_of(&t, &mut leaves))
                })
                .collect()
        };
        let choices: Vec<usize> = (0..machine.num_roles())
            .map(|r| machine.legal(&init, r).len())
            .filter(|&k| k > 1)
            .collect();
        let branching = if choices.is_empty() {
            1.0
        } else {
            choices.iter().sum::<usize>() as f64 / choices.len() as f64
        };
        Heuristic {
            material,
            numbered,
            branching,
            against: false,
        }
    }

    /// This heuristic with material counted against its owner where
    /// `against` holds: for games won by losing pieces, which the rules
    /// alone do not tell (the meta-choice's profile finds it: a lead in
    /// material at the end of its random playouts falls with the final
    /// goal, [`super::meta::Profile::material_correlation`]).
    pub fn against(mut self, against: bool) -> Heuristic {
        self.against = against;
        self
    }

    /// Each role's lead in material in `state` (its owned fluents less the
    /// others' mean, in units of the logistic); `None` where no place holds
    /// material.
    pub fn leads<M: StateMachine>(&self, machine: &M, state: &M::State) -> Option<Vec<f64>> {
        (!self.material.is_empty()).then(|| self.material.leads(&self.counts(machine, state)))
    }

    /// Each role's mobility value, 0..1, into `out`: a role with a choice
    /// scores a logistic function of the log of its legal moves against the
    /// initial branching (as many: 0.5); a role without one scores 1 less
    /// the mean of those with one, so that at turns the mover's freedom is
    /// the others' loss, whichever role moves.
    fn mobility<M: StateMachine>(&self, machine: &M, state: &M::State, out: &mut Vec<f64>) {
        out.clear();
        let mut buf = Vec::new();
        let mut choosers = (0, 0.0);
        for r in 0..machine.num_roles() {
            machine.legal_moves(state, r, &mut buf);
            if buf.len() > 1 {
                let v = logistic((buf.len() as f64 / self.branching).ln());
                choosers = (choosers.0 + 1, choosers.1 + v);
                out.push(v);
            } else {
                out.push(f64::NAN);
            }
        }
        let rest = if choosers.0 > 0 {
            1.0 - choosers.1 / f64::from(choosers.0)
        } else {
            0.5
        };
        for v in out.iter_mut().filter(|v| v.is_nan()) {
            *v = rest;
        }
    }

    pub fn material(&self) -> &Material {
        &self.material
    }

    /// Each role's count of owned fluents in `state`.
    fn counts<M: StateMachine>(&self, machine: &M, state: &M::State) -> Vec<usize> {
        let mut counts = vec![0; machine.num_roles()];
        let mut numbers = Vec::new();
        if !self.numbered.is_empty() && machine.fluent_numbers(state, &mut numbers) {
            for i in numbers {
                if let Some(Some(r)) = self.numbered.get(i) {
                    counts[*r] += 1;
                }
            }
            return counts;
        }
        let mut leaves = Vec::new();
        for f in machine.fluents(state) {
            if let Some(r) = self.material.owner_of(&f, &mut leaves) {
                counts[r] += 1;
            }
        }
        counts
    }

    /// In words, with `game`'s names: which places hold material and whose.
    pub fn describe(&self, game: &Game) -> String {
        if self.material.is_empty() {
            return "the goal where defined and mobility; no material found in the rules".into();
        }
        let mut places: Vec<String> = self
            .material
            .places
            .iter()
            .map(|(name, arity, i)| format!("{}/{arity} #{}", game.symbols.name(*name), i + 1))
            .collect();
        places.sort();
        format!(
            "the goal where defined, mobility and material{}: {} owned constants, in {}",
            if self.against {
                " (counted against its owner)"
            } else {
                ""
            },
            self.material.owner.len(),
            places.join(", ")
        )
    }
}

impl<M: StateMachine> Evaluator<M> for Heuristic {
    fn evaluate(&self, machine: &M, state: &M::State, terminal: bool, out: &mut Vec<f64>) {
        let roles = machine.num_roles();
        let goals: Vec<Vec<u8>> = (0..roles).map(|r| machine.goal_values(state, r)).collect();
        let goal = |r: usize| {
            let v = &goals[r];
            (!v.is_empty())
                .then(|| v.iter().map(|&g| f64::from(g)).sum::<f64>() / v.len() as f64 / 100.0)
        };
        out.clear();
        if terminal {
            out.extend((0..roles).map(|r| goal(r).unwrap_or(0.0)));
            return;
        }
        let mut mobility = Vec::with_capacity(roles);
        self.mobility(machine, state, &mut mobility);
        let mut material = Vec::with_capacity(roles);
        if !self.material.is_empty() {
            self.material
                .values(&self.counts(machine, state), self.against, &mut material);
        }
        let defined = goals.iter().all(|v| !v.is_empty());
        for (r, mob) in mobility.into_iter().enumerate() {
            let h = match material.get(r) {
                Some(m) => MATERIAL * m + (1.0 - MATERIAL) * mob,
                None => mob,
            };
            out.push(match goal(r) {
                Some(g) if defined => 0.5 * g + 0.5 * h,
                _ => h,
            });
        }
    }

    fn describe(&self, game: &Game) -> Option<String> {
        Some(Heuristic::describe(self, game))
    }
}

/// [`Heuristic`]'s value relative to the search root's: 0.5 plus the
/// difference the line below the root made, clamped to 0..1, so that a
/// position as good as the root's is even and a capture counts the same
/// whether the root is ahead or behind (Sancho's heuristics score the change
/// since the root, not the state). Terminal states keep their goals.
pub struct Relative {
    inner: Heuristic,
    /// The root's values per role.
    root: std::sync::Mutex<Vec<f64>>,
}

impl Relative {
    pub fn new(inner: Heuristic) -> Self {
        Relative {
            inner,
            root: std::sync::Mutex::new(Vec::new()),
        }
    }
}

impl<M: StateMachine> Evaluator<M> for Relative {
    fn evaluate(&self, machine: &M, state: &M::State, terminal: bool, out: &mut Vec<f64>) {
        self.inner.evaluate(machine, state, terminal, out);
        if terminal {
            return;
        }
        let root = self.root.lock().unwrap_or_else(|e| e.into_inner());
        for (v, r) in out.iter_mut().zip(root.iter()) {
            *v = (0.5 + *v - r).clamp(0.0, 1.0);
        }
    }

    fn describe(&self, game: &Game) -> Option<String> {
        Some(format!(
            "{}, relative to the root's",
            Heuristic::describe(&self.inner, game)
        ))
    }

    fn rebase(&self, machine: &M, root: &M::State) {
        let mut v = Vec::new();
        self.inner.evaluate(machine, root, false, &mut v);
        *self.root.lock().unwrap_or_else(|e| e.into_inner()) = v;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reasoner::Prover;
    use std::sync::Arc;

    fn prover(file: &str) -> Arc<Prover> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../shared/games")
            .join(file);
        let g = crate::gdl::load(&path).expect("loads");
        Arc::new(Prover::try_new(g).expect("builds"))
    }

    fn names(m: &Prover, fs: &[Term]) -> Vec<String> {
        fs.iter()
            .map(|t| crate::gdl::print::term_to_string(t, &m.game().symbols))
            .collect()
    }

    /// The state of `m` with the fluents `drop` taken out of its initial state.
    fn without(m: &Prover, drop: &[&str]) -> <Prover as StateMachine>::State {
        let init = m.fluents(&m.initial_state());
        let kept: Vec<Term> = init
            .iter()
            .zip(names(m, &init))
            .filter(|(_, n)| !drop.contains(&n.as_str()))
            .map(|(t, _)| t.clone())
            .collect();
        assert_eq!(kept.len() + drop.len(), init.len(), "{drop:?}");
        m.state_from_fluents(&kept).expect("known fluents")
    }

    /// Chess: material is the pieces in `cell`'s third place; a side a rook
    /// up is better for it and worse for the other.
    #[test]
    fn chess_material_ranks_a_rook_ahead_higher() {
        let m = prover("chess_200.kif");
        let h = Heuristic::new(&*m);
        let d = h.describe(m.game());
        assert!(d.contains("cell/4 #3"), "{d}");
        let mut even = Vec::new();
        h.evaluate(&*m, &m.initial_state(), false, &mut even);
        assert!((even[0] - even[1]).abs() < 1e-9, "{even:?}");
        let mut ahead = Vec::new();
        let black_rook = without(&m, &["(cell a 8 black rook)"]);
        h.evaluate(&*m, &black_rook, false, &mut ahead);
        let white = m
            .game()
            .roles
            .iter()
            .position(|r| crate::gdl::print::term_to_string(r, &m.game().symbols) == "white");
        let (w, b) = (white.expect("white"), 1 - white.expect("white"));
        assert!(ahead[w] > even[w] + 0.03, "{ahead:?} against {even:?}");
        assert!(ahead[b] < even[b] - 0.03, "{ahead:?} against {even:?}");
        // Counted against its owner, the same rook is a loss for white.
        let inverse = Heuristic::new(&*m).against(true);
        assert!(inverse.describe(m.game()).contains("against its owner"));
        let mut turned = Vec::new();
        inverse.evaluate(&*m, &black_rook, false, &mut turned);
        assert!(turned[w] < even[w] - 0.03, "{turned:?} against {even:?}");
        assert!(turned[b] > even[b] + 0.03, "{turned:?} against {even:?}");
    }

    /// Slaughter names its pieces `wp`, `bq`: their owners come from the
    /// static facts; the goal (the other side's king and queen still on the
    /// board) weighs in.
    #[test]
    fn owners_come_from_static_facts_where_pieces_are_not_named_by_role() {
        let m = prover("slaughter.kif");
        let h = Heuristic::new(&*m);
        assert!(!h.material().is_empty(), "{}", h.describe(m.game()));
        let mut even = Vec::new();
        h.evaluate(&*m, &m.initial_state(), false, &mut even);
        let mut pawn = Vec::new();
        h.evaluate(&*m, &without(&m, &["(cell a 7 bp)"]), false, &mut pawn);
        assert!(pawn[0] > even[0] && pawn[1] < even[1], "{pawn:?} {even:?}");
    }

    /// The state of exactly `fluents` (written as the game writes them).
    fn position(m: &Prover, fluents: &str) -> <Prover as StateMachine>::State {
        let symbols = &m.game().symbols;
        let terms = crate::gdl::parser::parse_ground_terms(&format!("({fluents})"), symbols)
            .expect("fluents of the game");
        m.state_from_fluents(&terms).expect("known fluents")
    }

    fn moves(m: &Prover, s: &<Prover as StateMachine>::State, role: RoleIdx) -> Vec<String> {
        m.legal(s, role)
            .iter()
            .map(|mv| crate::gdl::print::term_to_string(&m.move_term(mv), &m.game().symbols))
            .collect()
    }

    /// White's queen can take the undefended rook that attacks it; the
    /// first legal move is another. UCT scored by the heuristic, with its
    /// iterations fixed, takes the rook.
    #[test]
    fn a_search_scored_by_the_heuristic_takes_a_hanging_rook() {
        use super::super::{Enhancements, Mcts, SearchConfig};
        let m = prover("chess_200.kif");
        let s = position(
            &m,
            "(control white) (step 10) (cell e 1 white king) (cell d 1 white queen) \
             (cell h 2 white pawn) (cell e 8 black king) (cell d 5 black rook) \
             (cell a 7 black pawn)",
        );
        let white = m
            .game()
            .roles
            .iter()
            .position(|r| crate::gdl::print::term_to_string(r, &m.game().symbols) == "white")
            .expect("white");
        let legal = moves(&m, &s, white);
        let take = "(move queen d 1 d 5)";
        assert!(
            legal.iter().any(|l| l == take) && legal[0] != take,
            "{legal:?}"
        );
        let cfg = SearchConfig {
            threads: 1,
            exploration: EXPLORATION,
            enhancements: Enhancements {
                heuristic: true,
                ..Enhancements::default()
            },
            ..SearchConfig::default()
        };
        let mut search = Mcts::new(Arc::clone(&m), s, cfg);
        search.search_iterations(150);
        let best = search.best_move(white);
        let symbols = &m.game().symbols;
        assert_eq!(
            crate::gdl::print::term_to_string(&m.move_term(&best), symbols),
            take
        );
    }

    /// The same rules give the same values on every engine: the propnet,
    /// which numbers its fluents and is counted through those numbers,
    /// scores breakthrough's states as the prover does.
    #[test]
    fn the_propnet_and_the_prover_score_the_same() {
        use crate::reasoner::Propnet;
        use rand::{Rng, SeedableRng};
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../shared/games/breakthrough.kif");
        let g = crate::gdl::load(&path).expect("loads");
        let prover = Prover::try_new(g.clone()).expect("builds");
        let net = Propnet::new(g).expect("compiles");
        let (hp, hn) = (Heuristic::new(&prover), Heuristic::new(&net));
        assert!(!hp.material().is_empty(), "{}", hp.describe(prover.game()));
        let mut rng = rand::rngs::SmallRng::seed_from_u64(5);
        let (mut sp, mut sn) = (prover.initial_state(), net.initial_state());
        let (mut vp, mut vn) = (Vec::new(), Vec::new());
        for _ in 0..30 {
            if prover.is_terminal(&sp) {
                break;
            }
            hp.evaluate(&prover, &sp, false, &mut vp);
            hn.evaluate(&net, &sn, false, &mut vn);
            assert_eq!(vp, vn);
            let mut terms = Vec::new();
            for r in 0..prover.num_roles() {
                let legal = prover.legal(&sp, r);
                terms.push(prover.move_term(&legal[rng.gen_range(0..legal.len())]));
            }
            let jp: Vec<_> = terms
                .iter()
                .map(|t| prover.parse_move(t).expect("move"))
                .collect();
            let jn: Vec<_> = terms
                .iter()
                .map(|t| net.parse_move(t).expect("move"))
                .collect();
            sp = prover.next_state(&sp, &jp);
            sn = net.next_state(&sn, &jn);
        }
        assert!(vp.iter().any(|v| (v - 0.5).abs() > 1e-6), "{vp:?}");
    }

    /// Relative to the root: the root itself is even for both roles, and
    /// after the first capture of a random line the capturer is above even
    /// and the other below, as far as the absolute values moved.
    #[test]
    fn relative_values_are_even_at_the_root_and_follow_a_capture() {
        use crate::reasoner::Propnet;
        use rand::{Rng, SeedableRng};
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../shared/games/breakthrough.kif");
        let m = Propnet::new(crate::gdl::load(&path).expect("loads")).expect("compiles");
        let h = Heuristic::new(&m);
        let rel = Relative::new(Heuristic::new(&m));
        let root = m.initial_state();
        Evaluator::<Propnet>::rebase(&rel, &m, &root);
        let mut v = Vec::new();
        rel.evaluate(&m, &root, false, &mut v);
        assert_eq!(v, vec![0.5, 0.5]);
        let mut rng = rand::rngs::SmallRng::seed_from_u64(3);
        let mut s = root.clone();
        let lead0 = h.leads(&m, &root).expect("material")[0];
        loop {
            assert!(!m.is_terminal(&s), "no capture in this line");
            let joint: Vec<_> = (0..2)
                .map(|r| {
                    let l = m.legal(&s, r);
                    l[rng.gen_range(0..l.len())]
                })
                .collect();
            s = m.next_state(&s, &joint);
            let lead = h.leads(&m, &s).expect("material")[0];
            if lead != lead0 {
                let (mut abs, mut abs0) = (Vec::new(), Vec::new());
                h.evaluate(&m, &s, false, &mut abs);
                h.evaluate(&m, &root, false, &mut abs0);
                rel.evaluate(&m, &s, false, &mut v);
                for r in 0..2 {
                    let want = (0.5 + abs[r] - abs0[r]).clamp(0.0, 1.0);
                    assert!((v[r] - want).abs() < 1e-12, "{v:?} {abs:?} {abs0:?}");
                }
                let white_took = lead > lead0;
                assert_eq!(v[0] > 0.5, white_took, "{v:?}");
                assert_eq!(v[1] > 0.5, !white_took, "{v:?}");
                break;
            }
        }
    }
}

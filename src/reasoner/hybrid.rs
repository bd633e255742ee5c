//! Falling back per question instead of per game: a [`Hybrid`] engine runs
//! a game whose rules do not ground as a whole on a propnet for the
//! questions that ground and on the prover for the rest.
//!
//! A game fails to ground because of a few relations (amazons: `next`, 18.8
//! million rule instances, one per move and cell; slaughter: a capture
//! threat over every pair of pieces and squares, read by `legal`). The
//! grounder names them when it stops ([`GroundError::heaviest`]); every one
//! of the four questions an engine answers (`legal`, `next`, `terminal`,
//! `goal`) whose rules reach the heaviest is left to the prover, and the
//! others are compiled from a reduced game ([`reduced`]): their rules, and
//! in place of a question left out, facts over its domain, so that the
//! network still sees every fluent (`next` becomes the set of every term a
//! fluent can be) and every move (`legal` the set of every move of every
//! role). The network is then asked only in states whose fluents it knows
//! and with moves it knows: anything else goes to the prover, so the answers
//! are the prover's whatever the domains missed.
//!
//! States are the prover's (sorted fluent ids) with the network's bits
//! alongside; moves are the prover's ids. Each step converts between the
//! two through tables made at build time.

use std::sync::Arc;
use std::time::Duration;

use hashbrown::HashMap;

use super::ground::GroundError;
use super::propnet::{CompileLimits, PropnetState};
use super::prover::ProverState;
use super::terms::TermId;
use super::{Propnet, Prover, RoleIdx, StateMachine};
use crate::gdl::{domain, graph, kw, Description, Game, Pos, Relation, Rule, Sym, Term};

/// Which questions the network answers (the prover answers the others).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Parts {
    pub legal: bool,
    pub next: bool,
    pub terminal: bool,
    pub goal: bool,
}

impl Parts {
    const NAMES: [(&'static str, Sym); 4] = [
        ("legal", kw::LEGAL),
        ("next", kw::NEXT),
        ("terminal", kw::TERMINAL),
        ("goal", kw::GOAL),
    ];

    fn get(&self, i: usize) -> bool {
        [self.legal, self.next, self.terminal, self.goal][i]
    }

    /// The questions on the network (`on_net`) or on the prover, by name.
    fn names(&self, on_net: bool) -> String {
        let names: Vec<&str> = (0..4)
            .filter(|&i| self.get(i) == on_net)
            .map(|i| Self::NAMES[i].0)
            .collect();
        names.join(", ")
    }

    /// The split that leaves to the prover every question whose rules reach
    /// `heavy`: `None` when that is every question.
    pub fn without(game: &Game, heavy: Relation) -> Option<Parts> {
        let on_net: Vec<bool> = Self::NAMES
            .iter()
            .map(|&(_, q)| {
                q != heavy.name
                    && !graph::reached(&game.rules, &[q])
                        .iter()
                        .zip(&game.rules)
                        .any(|(&r, rule)| r && rule.head.relation() == Some(heavy))
            })
            .collect();
        let parts = Parts {
            legal: on_net[0],
            next: on_net[1],
            terminal: on_net[2],
            goal: on_net[3],
        };
        on_net.contains(&true).then_some(parts)
    }
}

/// Most terms a fluent or move domain may list for a reduced game.
const MAX_DOMAIN: usize = 400_000;

/// The game the network of a split compiles: the rules of the questions on
/// the network and what they read; in place of `next` when it is left out,
/// a fact for every term a fluent can be; in place of `legal`, a fact for
/// every role and every move. An error when a domain is unbounded or
/// larger than [`MAX_DOMAIN`].
pub fn reduced(game: &Game, parts: Parts) -> Result<Game, String> {
    let dropped =
        |name: Option<Sym>| (0..4).any(|i| !parts.get(i) && name == Some(Parts::NAMES[i].1));
    let mut rules: Vec<Rule> = game
        .rules
        .iter()
        .filter(|r| !dropped(r.head.name()))
        .cloned()
        .collect();
    let fact = |head: Term| Rule {
        head,
        body: Vec::new(),
        pos: Pos { line: 1, col: 1 },
    };
    if !parts.next {
        let next = Relation {
            name: kw::NEXT,
            arity: 1,
        };
        let fluents = domain::terms_at(&game.rules, next, 0, MAX_DOMAIN).ok_or_else(|| {
            format!("the fluents can be more than {MAX_DOMAIN} terms, or unbounded")
        })?;
        rules.extend(
            fluents
                .into_iter()
                .map(|f| fact(Term::Func(kw::NEXT, vec![f]))),
        );
    }
    if !parts.legal {
        let legal = Relation {
            name: kw::LEGAL,
            arity: 2,
        };
        let max = MAX_DOMAIN / game.roles.len().max(1);
        let moves = domain::terms_at(&game.rules, legal, 1, max)
            .ok_or_else(|| format!("the moves can be more than {max} terms, or unbounded"))?;
        for role in &game.roles {
            rules.extend(
                moves
                    .iter()
                    .map(|m| fact(Term::Func(kw::LEGAL, vec![role.clone(), m.clone()]))),
            );
        }
    }
    let roots = [
        kw::ROLE,
        kw::INIT,
        kw::LEGAL,
        kw::NEXT,
        kw::TERMINAL,
        kw::GOAL,
    ];
    let rules = graph::keep_reached(rules, &roots);
    Game::new(Description {
        symbols: game.symbols.clone(),
        rules,
        source: game.source.clone(),
    })
    .map_err(|e| format!("the reduced rules do not load: {e}"))
}

/// A game on two engines: see the module's documentation.
pub struct Hybrid {
    net: Propnet,
    prover: Prover,
    parts: Parts,
    /// Per network fluent, the prover's id of the same term; and back.
    fluent_ids: Vec<TermId>,
    fluent_of: HashMap<TermId, u32>,
    /// Per network move, the prover's id of the same term; and back.
    move_ids: Vec<TermId>,
    move_of: HashMap<TermId, u32>,
}

/// A state of a [`Hybrid`]: the prover's, and the network's when it knows
/// every fluent of it.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct HybridState {
    facts: ProverState,
    net: Option<PropnetState>,
}

impl HybridState {
    /// Whether the network knows every fluent of the state (else the
    /// prover answers every question in it).
    pub fn on_network(&self) -> bool {
        self.net.is_some()
    }
}

impl Hybrid {
    /// The engine on `prover` (built on `game`) and a network compiled
    /// within `limits` from `game` reduced to `parts`; the error says why
    /// there is no network.
    pub fn new(
        game: &Game,
        prover: Prover,
        parts: Parts,
        limits: &CompileLimits,
    ) -> Result<Hybrid, String> {
        let small = reduced(game, parts)?;
        let net = Propnet::with_limits(small, limits).map_err(|e| e.to_string())?;
        let ids = |terms: Vec<Term>| -> Option<Vec<TermId>> {
            terms.iter().map(|t| prover.intern(t)).collect()
        };
        let (Some(fluent_ids), Some(move_ids)) = (ids(net.fluent_terms()), ids(net.move_terms()))
        else {
            return Err("the network has a term with variables".into());
        };
        let index = |ids: &[TermId]| -> HashMap<TermId, u32> {
            ids.iter()
                .enumerate()
                .map(|(i, &t)| (t, i as u32))
                .collect()
        };
        Ok(Hybrid {
            fluent_of: index(&fluent_ids),
            move_of: index(&move_ids),
            fluent_ids,
            move_ids,
            net,
            prover,
            parts,
        })
    }

    pub fn prover(&self) -> &Prover {
        &self.prover
    }

    pub fn parts(&self) -> Parts {
        self.parts
    }

    /// What runs where, for logs.
    pub fn describe(&self) -> String {
        let s = self.net.stats();
        format!(
            "hybrid (propnet for {}: {} nodes, compiled in {:.3} s; prover ({}) for {})",
            self.parts.names(true),
            s.nodes,
            s.compile_s,
            self.prover.strategy().name(),
            self.parts.names(false)
        )
    }

    /// `facts` with the network's bits when it knows every fluent.
    fn state(&self, facts: ProverState) -> HybridState {
        let net = facts
            .iter()
            .map(|f| self.fluent_of.get(f).copied())
            .collect::<Option<Vec<u32>>>()
            .map(|idx| self.net.state_of_indices(idx));
        HybridState { facts, net }
    }

    /// The network's state when it answers `part` in `state`.
    fn on_net<'a>(&self, part: bool, state: &'a HybridState) -> Option<&'a PropnetState> {
        state.net.as_ref().filter(|_| part)
    }
}

impl StateMachine for Hybrid {
    type State = HybridState;
    type Move = TermId;

    fn game(&self) -> &Game {
        self.prover.game()
    }

    fn initial_state(&self) -> HybridState {
        self.state(self.prover.initial_state())
    }

    fn legal_moves(&self, state: &HybridState, role: RoleIdx, out: &mut Vec<TermId>) {
        match self.on_net(self.parts.legal, state) {
            Some(s) => {
                // The network's move numbers, translated in place.
                self.net.legal_moves(s, role, out);
                for m in out.iter_mut() {
                    *m = self.move_ids[*m as usize];
                }
            }
            None => self.prover.legal_moves(&state.facts, role, out),
        }
    }

    fn next_state(&self, state: &HybridState, joint: &[TermId]) -> HybridState {
        let net_joint: Option<Vec<u32>> =
            joint.iter().map(|m| self.move_of.get(m).copied()).collect();
        if let (Some(s), Some(joint)) = (self.on_net(self.parts.next, state), net_joint) {
            let next = self.net.next_state(s, &joint);
            let mut facts: ProverState = next
                .indices()
                .map(|i| self.fluent_ids[i as usize])
                .collect();
            facts.sort_unstable();
            return HybridState {
                facts,
                net: Some(next),
            };
        }
        self.state(self.prover.next_state(&state.facts, joint))
    }

    fn is_terminal(&self, state: &HybridState) -> bool {
        match self.on_net(self.parts.terminal, state) {
            Some(s) => self.net.is_terminal(s),
            None => self.prover.is_terminal(&state.facts),
        }
    }

    fn goal_values(&self, state: &HybridState, role: RoleIdx) -> Vec<u8> {
        match self.on_net(self.parts.goal, state) {
            // Ascending and without repeats already: the network's goal
            // outputs are sorted by value when it is built.
            Some(s) => self.net.goal_values(s, role),
            None => self.prover.goal_values(&state.facts, role),
        }
    }

    fn fluents(&self, state: &HybridState) -> Vec<Term> {
        self.prover.fluents(&state.facts)
    }

    fn state_from_fluents(&self, fluents: &[Term]) -> Option<HybridState> {
        self.prover
            .state_from_fluents(fluents)
            .map(|facts| self.state(facts))
    }

    fn includes(&self, state: &HybridState, part: &HybridState) -> bool {
        self.prover.includes(&state.facts, &part.facts)
    }

    fn move_term(&self, m: &TermId) -> Term {
        self.prover.move_term(m)
    }

    fn parse_move(&self, term: &Term) -> Option<TermId> {
        self.prover.parse_move(term)
    }
}

/// A hybrid's network compiles after a whole compile failed, within what
/// is left of the 10 s a game's engine may take to build: 2 s of grounding
/// and a million nodes (a network that big, when it cannot propagate, is
/// evaluated no faster than the prover).
pub fn limits() -> CompileLimits {
    let mut limits = CompileLimits::default();
    limits.ground.max_time = Duration::from_secs(2);
    limits.max_nodes = 1_000_000;
    limits
}

/// A hybrid for `game`, whose propnet did not compile with `error`, on
/// `prover`: the questions that do not read the heaviest relation on a
/// network within `limits`. `Err` says why there is none.
pub fn build(
    game: &Game,
    error: &GroundError,
    prover: Prover,
    limits: &CompileLimits,
) -> Result<Arc<Hybrid>, String> {
    let Some(&heavy) = error.heaviest().first() else {
        return Err("grounding did not stop for its size".into());
    };
    let Some(parts) = Parts::without(game, heavy) else {
        return Err(format!(
            "every question reads {}, the relation that does not ground",
            heavy.display(&game.symbols)
        ));
    };
    Hybrid::new(game, prover, parts, limits).map(Arc::new)
}

//! Rule compilation: each rule becomes a join plan (its body literals in the
//! order they will be joined, each positive literal with the index it looks its
//! rows up in), and the rules are grouped into components run in the normal
//! form's order ([`Program`]).

use super::table::{Index, KeyLeaf, KeySpec, Table};
use super::RelId;
use std::collections::HashMap;

use crate::gdl::{kw, Game, Literal, Phase, Relation, Rule, Sym, Symbols, Term};
use crate::reasoner::pattern::Pat;
use crate::reasoner::terms::TermPool;

/// How a positive literal finds its candidate rows: an index over the parts of
/// its arguments that are known when the literal is reached in the join order.
#[derive(Clone, Debug)]
pub(super) struct Access {
    pub(super) spec: KeySpec,
    /// The patterns whose values make the key, one per value leaf of `spec`.
    pub(super) parts: Vec<Pat>,
    /// The index slot in the table, assigned when the prover is built.
    pub(super) slot: usize,
}

#[derive(Clone, Debug)]
pub(super) enum Lit {
    Pos {
        rel: RelId,
        args: Vec<Pat>,
        access: Option<Access>,
    },
    Not {
        rel: RelId,
        args: Vec<Pat>,
    },
    Distinct(Pat, Pat),
}

#[derive(Clone, Debug)]
pub(super) struct CRule {
    pub(super) head: RelId,
    pub(super) head_args: Vec<Pat>,
    pub(super) body: Vec<Lit>,
    pub(super) nvars: usize,
}

/// The index key of a literal whose variables in `bound` are known: every fully
/// known subterm is a value leaf; a partly known function term is a functor check
/// plus the leaves of its arguments.
pub(super) fn access_for(args: &[Pat], bound: &[bool]) -> Option<Access> {
    pub(super) fn walk(
        p: &Pat,
        argpos: u16,
        steps: &mut Vec<(Sym, u16, u16)>,
        bound: &[bool],
        acc: &mut Access,
    ) {
        if p.is_known(bound) {
            acc.spec.push(KeyLeaf {
                argpos,
                steps: steps.clone(),
                functor: None,
            });
            acc.parts.push(p.clone());
            return;
        }
        if let Pat::Func(f, args) = p {
            acc.spec.push(KeyLeaf {
                argpos,
                steps: steps.clone(),
                functor: Some((*f, args.len() as u16)),
            });
            for (i, a) in args.iter().enumerate() {
                steps.push((*f, args.len() as u16, i as u16));
                walk(a, argpos, steps, bound, acc);
                steps.pop();
            }
        }
    }
    let mut acc = Access {
        spec: Vec::new(),
        parts: Vec::new(),
        slot: usize::MAX,
    };
    for (i, a) in args.iter().enumerate() {
        walk(a, i as u16, &mut Vec::new(), bound, &mut acc);
    }
    (!acc.spec.is_empty()).then_some(acc)
}

/// Rules evaluated together. A recursive component runs semi-naively: after a
/// first full round, each round joins at least one recursive literal against only
/// the rows the previous round added, so long chains (counters, paths) cost
/// linear rather than quadratic work.
pub(super) struct Comp {
    pub(super) rules: Vec<usize>,
    pub(super) recursive: bool,
    /// The relations the component defines.
    pub(super) heads: Vec<RelId>,
    /// Per rule: for each positive body literal over `heads`, its relation and
    /// the rule's plan with that literal joined first.
    pub(super) delta_plans: Vec<Vec<(RelId, CRule)>>,
}

/// What the prover evaluates, built once from a game.
pub(super) struct Program {
    pub(super) rules: Vec<CRule>,
    /// Components run per state and per joint move, in order.
    pub(super) state_comps: Vec<Comp>,
    pub(super) move_comps: Vec<Comp>,
    pub(super) true_rel: RelId,
    pub(super) does_rel: RelId,
    pub(super) legal_rel: RelId,
    pub(super) next_rel: RelId,
    pub(super) goal_rel: RelId,
    pub(super) terminal_rel: RelId,
    /// Relations whose tables change with the state (phase >= State).
    pub(super) dynamic_rels: Vec<RelId>,
    /// The state components each question needs, in order (the ones its
    /// relation depends on): a terminal state's `goal` rarely needs what
    /// `legal` does.
    pub(super) needs_legal: Vec<usize>,
    pub(super) needs_goal: Vec<usize>,
    pub(super) needs_terminal: Vec<usize>,
}

/// Relation ids: the keyword relations first, then every relation in the rules.
pub(super) struct Relations {
    ids: HashMap<Relation, RelId>,
    pub(super) arities: Vec<usize>,
    pub(super) does: RelId,
    pub(super) init: RelId,
}

impl Relations {
    pub(super) fn of(game: &Game) -> Relations {
        let mut rels = Relations {
            ids: HashMap::new(),
            arities: Vec::new(),
            does: 0,
            init: 0,
        };
        for (name, arity) in [
            (kw::TRUE, 1),
            (kw::DOES, 2),
            (kw::LEGAL, 2),
            (kw::NEXT, 1),
            (kw::GOAL, 2),
            (kw::TERMINAL, 0),
            (kw::INIT, 1),
        ] {
            rels.add(Relation { name, arity });
        }
        for r in &game.rules {
            rels.add(r.head.relation().expect("heads are atoms"));
            for l in &r.body {
                if let Literal::Pos(t) | Literal::Not(t) = l {
                    rels.add(t.relation().expect("atoms have a relation"));
                }
            }
        }
        rels.does = rels.keyword(kw::DOES, 2);
        rels.init = rels.keyword(kw::INIT, 1);
        rels
    }

    fn add(&mut self, r: Relation) -> RelId {
        let arities = &mut self.arities;
        *self.ids.entry(r).or_insert_with(|| {
            arities.push(r.arity);
            arities.len() - 1
        })
    }

    pub(super) fn id(&self, r: Relation) -> RelId {
        self.ids[&r]
    }

    pub(super) fn get(&self, r: &Relation) -> Option<RelId> {
        self.ids.get(r).copied()
    }

    fn keyword(&self, name: Sym, arity: usize) -> RelId {
        self.id(Relation { name, arity })
    }

    /// Per relation: whether its table changes with the state (`true`,
    /// `does`, and every relation a non-static rule defines).
    pub(super) fn dynamic(&self, game: &Game) -> Vec<bool> {
        let mut dynamic = vec![false; self.arities.len()];
        dynamic[self.keyword(kw::TRUE, 1)] = true;
        dynamic[self.does] = true;
        for (r, p) in game.rules.iter().zip(&game.rule_phase) {
            if *p != Phase::Static {
                dynamic[self.id(r.head.relation().expect("heads are atoms"))] = true;
            }
        }
        dynamic
    }

    /// How a relation is written, for messages.
    pub(super) fn name(&self, rel: RelId, symbols: &Symbols) -> String {
        self.ids
            .iter()
            .find(|(_, &id)| id == rel)
            .map(|(r, _)| r.display(symbols))
            .unwrap_or_default()
    }
}

impl Program {
    /// The program with `rules` (their index slots registered in `tables`)
    /// and no components yet.
    pub(super) fn new(
        mut rules: Vec<CRule>,
        rels: &Relations,
        dynamic: &[bool],
        tables: &mut [Table],
    ) -> Program {
        register_slots(&mut rules, tables);
        Program {
            rules,
            state_comps: Vec::new(),
            move_comps: Vec::new(),
            needs_legal: Vec::new(),
            needs_goal: Vec::new(),
            needs_terminal: Vec::new(),
            true_rel: rels.keyword(kw::TRUE, 1),
            does_rel: rels.does,
            legal_rel: rels.keyword(kw::LEGAL, 2),
            next_rel: rels.keyword(kw::NEXT, 1),
            goal_rel: rels.keyword(kw::GOAL, 2),
            terminal_rel: rels.keyword(kw::TERMINAL, 0),
            dynamic_rels: (0..dynamic.len()).filter(|&r| dynamic[r]).collect(),
        }
    }

    /// Compiles the rules that run per state and per move again with
    /// `sizes`, and builds the state and move components.
    pub(super) fn compile_dynamic(
        &mut self,
        game: &Game,
        pool: &mut TermPool,
        tables: &mut [Table],
        rel_of: &dyn Fn(Relation) -> RelId,
        sizes: &[f64],
    ) {
        for (i, r) in game.rules.iter().enumerate() {
            if game.rule_phase[i] != Phase::Static {
                self.rules[i] = compile_rule(r, pool, rel_of, sizes, None);
            }
        }
        register_slots(&mut self.rules, tables);
        // Body positions moved with the new join orders.
        for c in &game.components {
            let mut comp = || make_comp(c, game, pool, rel_of, sizes, tables);
            match c.phase {
                Phase::Static => {}
                Phase::State => self.state_comps.push(comp()),
                Phase::Move => self.move_comps.push(comp()),
            }
        }
        self.needs_legal = self.state_needs(self.legal_rel);
        self.needs_goal = self.state_needs(self.goal_rel);
        self.needs_terminal = self.state_needs(self.terminal_rel);
    }

    /// The state components `rel` depends on, `rel`'s own included, in
    /// evaluation order.
    pub(super) fn state_needs(&self, rel: RelId) -> Vec<usize> {
        let mut need = vec![false; self.state_comps.len()];
        let mut todo = vec![rel];
        let mut seen = std::collections::HashSet::new();
        while let Some(r) = todo.pop() {
            if !seen.insert(r) {
                continue;
            }
            for (i, c) in self.state_comps.iter().enumerate() {
                if !c.heads.contains(&r) || need[i] {
                    continue;
                }
                need[i] = true;
                for &ri in &c.rules {
                    for lit in &self.rules[ri].body {
                        match lit {
                            Lit::Pos { rel, .. } | Lit::Not { rel, .. } => todo.push(*rel),
                            Lit::Distinct(..) => {}
                        }
                    }
                }
            }
        }
        (0..need.len()).filter(|&i| need[i]).collect()
    }
}

/// How much of an argument is known: 1 when all its variables are bound, 0 when
/// none, a half for a function term with some known parts.
pub(super) fn boundness(t: &Term, bound: &[bool], var_ix: &dyn Fn(Sym) -> u16) -> f64 {
    let vs = t.vars();
    let nb = vs.iter().filter(|&&v| bound[var_ix(v) as usize]).count();
    if nb == vs.len() {
        1.0
    } else if matches!(t, Term::Func(..)) {
        0.5 * (1.0 + nb as f64) / (1.0 + vs.len() as f64)
    } else {
        0.0
    }
}

/// Builds a component, with the semi-naive plans of its recursive rules.
pub(super) fn make_comp(
    c: &crate::gdl::normal::Component,
    game: &Game,
    pool: &mut TermPool,
    rel_of: &dyn Fn(Relation) -> RelId,
    sizes: &[f64],
    tables: &mut [Table],
) -> Comp {
    let mut heads: Vec<RelId> = c
        .rules
        .iter()
        .map(|&r| rel_of(game.rules[r].head.relation().expect("atom")))
        .collect();
    heads.sort_unstable();
    heads.dedup();
    let mut delta_plans = Vec::new();
    for &r in &c.rules {
        let rule = &game.rules[r];
        let mut plans = Vec::new();
        if c.recursive {
            for (j, l) in rule.body.iter().enumerate() {
                if let Literal::Pos(t) = l {
                    let rel = rel_of(t.relation().expect("atom"));
                    if heads.contains(&rel) {
                        let mut plan = compile_rule(rule, pool, rel_of, sizes, Some(j));
                        register_slots(std::slice::from_mut(&mut plan), tables);
                        plans.push((rel, plan));
                    }
                }
            }
        }
        delta_plans.push(plans);
    }
    Comp {
        rules: c.rules.clone(),
        recursive: c.recursive,
        heads,
        delta_plans,
    }
}

/// Gives every index key spec of `rules` a slot in its table.
pub(super) fn register_slots(rules: &mut [CRule], tables: &mut [Table]) {
    for rule in rules.iter_mut() {
        for lit in rule.body.iter_mut() {
            if let Lit::Pos {
                rel,
                access: Some(acc),
                ..
            } = lit
            {
                let t = &mut tables[*rel];
                acc.slot = match t.index.iter().position(|ix| ix.spec == acc.spec) {
                    Some(i) => i,
                    None => {
                        t.index.push(Index {
                            spec: acc.spec.clone(),
                            map: hashbrown::HashMap::new(),
                            covered: 0,
                        });
                        t.index.len() - 1
                    }
                };
            }
        }
    }
}

/// Compiles a rule into a join plan. `sizes` estimates each relation's table size;
/// the plan takes next the positive literal expected to match the fewest rows.
///
/// With `first`, the body literal at that position is joined first: the plan for
/// a semi-naive round in which that literal sees only new rows.
pub(super) fn compile_rule(
    r: &Rule,
    pool: &mut TermPool,
    rel_of: &dyn Fn(Relation) -> RelId,
    sizes: &[f64],
    first: Option<usize>,
) -> CRule {
    compile_with(r, pool, rel_of, sizes, first, 0, false, &[])
}

/// Compiles a rule for a call that binds the head's arguments at the
/// positions in `mask` (bit `i`: position `i`): their variables are known
/// before the first body literal (the goal-directed strategy,
/// [`super::topdown`]). With `in_order`, the body is joined in the order
/// written (a program written for a top-down prover binds a call's
/// arguments before it). A `true` literal is estimated by the fluents of
/// `state` (the initial state) that agree with its constants.
#[allow(clippy::too_many_arguments)]
pub(super) fn compile_called(
    r: &Rule,
    pool: &mut TermPool,
    rel_of: &dyn Fn(Relation) -> RelId,
    sizes: &[f64],
    mask: u64,
    in_order: bool,
    state: &[Term],
) -> CRule {
    compile_with(r, pool, rel_of, sizes, None, mask, in_order, state)
}

#[allow(clippy::too_many_arguments)]
fn compile_with(
    r: &Rule,
    pool: &mut TermPool,
    rel_of: &dyn Fn(Relation) -> RelId,
    sizes: &[f64],
    first: Option<usize>,
    head_bound: u64,
    in_order: bool,
    state: &[Term],
) -> CRule {
    let vars = r.vars();
    let mut cx = RuleCompiler {
        vars: &vars,
        pool,
        rel_of,
        state,
    };
    let (head, head_args) = cx.atom(&r.head);

    // Join order: greedily the positive literal with the most bound arguments;
    // `not` and `distinct` as soon as their variables are bound.
    let mut bound = vec![false; vars.len()];
    for (j, a) in head_args.iter().enumerate().take(64) {
        if head_bound & (1 << j) != 0 {
            let mut vs = Vec::new();
            a.vars(&mut vs);
            for v in vs {
                bound[v as usize] = true;
            }
        }
    }
    let mut pending: Vec<&Literal> = r.body.iter().collect();
    let mut body = Vec::new();
    let mut forced = first;
    while !pending.is_empty() {
        // Filters whose variables are all bound go first.
        let ready = |l: &&Literal| {
            matches!(l, Literal::Not(_) | Literal::Distinct(..))
                && cx.vars_of(l).iter().all(|&v| bound[v])
        };
        if in_order {
            let l = pending.remove(0);
            body.push(cx.lit(l, &bound));
            if matches!(l, Literal::Pos(_)) {
                for v in cx.vars_of(l) {
                    bound[v] = true;
                }
            }
            continue;
        }
        if forced.is_none() {
            if let Some(i) = pending.iter().position(ready) {
                body.push(cx.lit(pending.remove(i), &bound));
                continue;
            }
        }
        // When only filters with unbound variables remain, take them in order: a
        // `not` with variables that occur nowhere else is read existentially;
        // unsafe `distinct` was rejected by validation.
        let i = forced
            .take()
            .or_else(|| cx.cheapest(&pending, &bound, sizes))
            .unwrap_or_default();
        let l = pending.remove(i);
        body.push(cx.lit(l, &bound));
        if matches!(l, Literal::Pos(_)) {
            for v in cx.vars_of(l) {
                bound[v] = true;
            }
        }
    }
    CRule {
        head,
        head_args,
        body,
        nvars: vars.len(),
    }
}

/// A rule under compilation: its variables (numbered by their position in
/// `vars`) and where its terms are interned.
struct RuleCompiler<'a> {
    vars: &'a [Sym],
    pool: &'a mut TermPool,
    rel_of: &'a dyn Fn(Relation) -> RelId,
    /// The fluents `true` literals are estimated by (none: by its size).
    state: &'a [Term],
}

impl RuleCompiler<'_> {
    fn var_ix(&self, v: Sym) -> u16 {
        self.vars
            .iter()
            .position(|&w| w == v)
            .expect("variable of the rule") as u16
    }

    fn pat(&mut self, t: &Term) -> Pat {
        let vars = self.vars;
        Pat::new(t, self.pool, &mut |v| {
            vars.iter()
                .position(|&w| w == v)
                .expect("variable of the rule") as u16
        })
    }

    /// An atom's relation and the patterns of its arguments.
    fn atom(&mut self, t: &Term) -> (RelId, Vec<Pat>) {
        let rel = (self.rel_of)(t.relation().expect("atoms have a relation"));
        (rel, t.args().iter().map(|a| self.pat(a)).collect())
    }

    fn vars_of(&self, l: &Literal) -> Vec<usize> {
        let mut vs = Vec::new();
        l.for_each_var(&mut |v| vs.push(self.var_ix(v) as usize));
        vs
    }

    /// The plan's literal for `l`, joined when the variables in `bound` are
    /// bound.
    fn lit(&mut self, l: &Literal, bound: &[bool]) -> Lit {
        match l {
            Literal::Pos(t) => {
                let (rel, args) = self.atom(t);
                let access = access_for(&args, bound);
                Lit::Pos { rel, args, access }
            }
            Literal::Not(t) => {
                let (rel, args) = self.atom(t);
                Lit::Not { rel, args }
            }
            Literal::Distinct(a, b) => Lit::Distinct(self.pat(a), self.pat(b)),
            Literal::Or(_) | Literal::And(_) | Literal::Equal(..) => {
                unreachable!("the normal form has no 'or', 'and' or equality")
            }
        }
    }

    /// For a `true` literal when fluents are given: how many of them agree
    /// with its fluent's constants.
    fn state_matches(&self, t: &Term) -> Option<usize> {
        if self.state.is_empty() || t.name() != Some(kw::TRUE) {
            return None;
        }
        let pattern = t.args().first()?;
        Some(self.state.iter().filter(|f| agrees(pattern, f)).count())
    }

    /// The positive literal of `pending` expected to match the fewest rows
    /// under `bound` (ties: fewer variables, then the earlier); `None` when
    /// only filters are left.
    fn cheapest(&self, pending: &[&Literal], bound: &[bool], sizes: &[f64]) -> Option<usize> {
        let var_ix = |v: Sym| self.var_ix(v);
        pending
            .iter()
            .enumerate()
            .filter_map(|(i, l)| match l {
                Literal::Pos(t) => Some((i, t)),
                _ => None,
            })
            .map(|(i, t)| {
                // Expected matches: the table's size to the power of the share of
                // arguments still unknown (a known argument counts fully, a partly
                // known function term half).
                let args = t.args();
                let known: f64 = args.iter().map(|a| boundness(a, bound, &var_ix)).sum();
                let rel = (self.rel_of)(t.relation().expect("atoms have a relation"));
                let est = if args.is_empty() || known >= args.len() as f64 {
                    0.5
                } else if let Some(n) = self.state_matches(t) {
                    // The state's fluents of this shape, to the power of the
                    // share of its variables still unknown: a goal-directed
                    // call knows `(true (location explorer ?x ?y))` for one
                    // row where the state has 64 (mummymaze1p's doesprime
                    // joined it after a derived call with four arguments free,
                    // 2,601 calls a state instead of 2).
                    let vs = t.vars();
                    let nb = vs.iter().filter(|&&v| bound[var_ix(v) as usize]).count();
                    (n.max(1) as f64).powf(1.0 - nb as f64 / vs.len().max(1) as f64)
                } else {
                    sizes[rel].max(1.0).powf(1.0 - known / args.len() as f64)
                };
                (i, est, t.vars().len())
            })
            .min_by(|a, b| a.1.total_cmp(&b.1).then(a.2.cmp(&b.2)).then(a.0.cmp(&b.0)))
            .map(|(i, _, _)| i)
    }
}

/// Whether ground term `f` has `pattern`'s shape and constants (its
/// variables match anything).
fn agrees(pattern: &Term, f: &Term) -> bool {
    match (pattern, f) {
        (Term::Var(_), _) => true,
        (Term::Func(n, ps), Term::Func(m, fs)) => {
            n == m && ps.len() == fs.len() && ps.iter().zip(fs).all(|(p, f)| agrees(p, f))
        }
        _ => pattern == f,
    }
}

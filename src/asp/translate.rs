//! GDL rules -> ASP rules with a time argument (the game-specific part of a
//! [`Program`]).
//!
//! Each relation keeps its [`Phase`] from the normal form: static relations stay
//! time-free and are grounded once; relations that read the state (`true`) or the
//! moves (`does`) get a time argument. The keywords become the encoding's
//! predicates: `(true F)` -> `holds(F,T)`, `(does R M)` -> `does(R,M,T)`,
//! `(next F)` -> `next(F,T)` (the encoding turns it into `holds(F,T+1)`), `(init
//! F)` -> `init(F)` (the encoding makes it `holds(F,0)`), `legal`, `goal` and
//! `terminal` gain the time argument, `distinct` becomes `!=`. `or` is already gone
//! (the normal form splits such rules).
//!
//! A rule is kept only when `legal`, `next`, `terminal`, `goal`, `init` or `role`
//! depend on it, so declarations such as `base`/`input` and unused helper
//! relations cost no grounding. A variable that occurs only inside `(not ...)`
//! means "there is no such value" in GDL; ASP needs such literals safe, so the
//! literal moves into an auxiliary rule (`aux_N(bound vars) :- atom.`) and the
//! rule reads `not aux_N(...)`.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::gdl::print::rule_to_string;
use crate::gdl::{kw, Game, Literal, Phase, Relation, Rule, Sym, Term};

use super::symbols::{SymbolMap, RESERVED_PREDICATES};

mod factor;
use factor::factorable;
pub use factor::{Factor, FACTOR_MIN_MOVES};

/// When a translated rule is grounded, and at which time.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub enum RuleKind {
    /// Time-free: static relations, `role`, `init`.
    Static,
    /// At the time of a state (reads `true`, or a timed keyword with a static body).
    State,
    /// At the time of a move (reads `does`): the step the move is made at.
    Move,
}

/// An atom: predicate, arguments as ASP text, and whether the time is appended.
#[derive(Clone, Debug)]
pub struct Atom {
    pub pred: String,
    pub args: Vec<String>,
    pub timed: bool,
}

#[derive(Clone, Debug)]
pub enum Lit {
    Pos(Atom),
    Neg(Atom),
    Neq(String, String),
}

/// One translated rule.
#[derive(Clone, Debug)]
pub struct AspRule {
    pub head: Atom,
    pub body: Vec<Lit>,
    pub kind: RuleKind,
    /// The GDL rule it came from (for the comment above it); `None` for facts and
    /// for auxiliary rules.
    pub source: Option<String>,
}

impl AspRule {
    /// Whether the time variable is bound by a positive timed body literal; if not,
    /// a rule with a timed head needs a time domain in full grounding.
    pub fn time_bound(&self) -> bool {
        self.body
            .iter()
            .any(|l| matches!(l, Lit::Pos(a) if a.timed))
    }

    /// The rule as ASP text, timed atoms at time `now` (`T`, `0`, `t`, `t-1`), with
    /// `domain` added to the body when the head is timed and nothing binds the time.
    pub fn render(&self, now: &str, domain: Option<&str>) -> String {
        let mut out = atom_text(&self.head, now);
        let mut body: Vec<String> = self
            .body
            .iter()
            .map(|l| match l {
                Lit::Pos(a) => atom_text(a, now),
                Lit::Neg(a) => format!("not {}", atom_text(a, now)),
                Lit::Neq(a, b) => format!("{a} != {b}"),
            })
            .collect();
        if self.head.timed && !self.time_bound() {
            if let Some(d) = domain {
                body.insert(0, d.to_string());
            }
        }
        if !body.is_empty() {
            out.push_str(" :- ");
            out.push_str(&body.join(", "));
        }
        out.push('.');
        out
    }
}

fn atom_text(a: &Atom, now: &str) -> String {
    let mut args: Vec<&str> = a.args.iter().map(String::as_str).collect();
    if a.timed {
        args.push(now);
    }
    if args.is_empty() {
        a.pred.clone()
    } else {
        format!("{}({})", a.pred, args.join(","))
    }
}

/// A game translated to ASP: its rules, ready to be placed into the full or the
/// incremental encoding (see [`super::program`]).
#[derive(Clone, Debug)]
pub struct Translation {
    pub map: SymbolMap,
    pub rules: Vec<AspRule>,
    /// GDL rules left out because nothing the game needs depends on them.
    pub dropped: usize,
    /// The roles whose moves are chosen argument by argument (see [`Factor`]).
    pub factors: Vec<Factor>,
}

/// Translates a game's rules.
pub fn translate(game: &Game) -> Translation {
    let map = SymbolMap::new(&game.symbols);
    let relevant = relevant_rules(game);
    let preds = predicate_names(game, &map);
    let factored = factorable(game, &relevant);
    let mut tr = Translator {
        game,
        map: &map,
        preds: &preds,
        rules: Vec::new(),
        aux: 0,
        aux_cache: HashMap::new(),
        used_preds: preds.values().map(|(n, _)| n.clone()).collect(),
        factored: &factored,
    };
    let mut factors = Vec::new();
    for (role, &(functor, arity)) in &factored {
        let role = tr.term(role, &VarNames::default());
        for i in 1..=arity {
            tr.rules.push(AspRule {
                head: Atom {
                    pred: "move_arg".to_string(),
                    args: vec![role.clone(), i.to_string()],
                    timed: false,
                },
                body: Vec::new(),
                kind: RuleKind::Static,
                source: None,
            });
        }
        factors.push(Factor {
            role,
            functor,
            arity,
        });
    }
    let mut dropped = 0;
    for (i, rule) in game.rules.iter().enumerate() {
        if relevant[i] {
            tr.rule(rule);
        } else {
            dropped += 1;
        }
    }
    let rules = tr.rules;
    Translation {
        map,
        rules,
        dropped,
        factors,
    }
}

/// The rules that `legal`, `next`, `terminal`, `goal`, `init` or `role` depend on.
fn relevant_rules(game: &Game) -> Vec<bool> {
    let roots = [
        kw::LEGAL,
        kw::NEXT,
        kw::TERMINAL,
        kw::GOAL,
        kw::INIT,
        kw::ROLE,
    ];
    crate::gdl::graph::reached(&game.rules, &roots)
}

/// Predicate name and whether it is timed, for every relation that is not a keyword.
fn predicate_names(game: &Game, map: &SymbolMap) -> HashMap<Relation, (String, bool)> {
    let mut rels: Vec<Relation> = game
        .rules
        .iter()
        .flat_map(|r| {
            std::iter::once(&r.head).chain(r.body.iter().filter_map(|l| match l {
                Literal::Pos(t) | Literal::Not(t) => Some(t),
                _ => None,
            }))
        })
        .filter_map(Term::relation)
        .filter(|r| keyword_predicate(*r).is_none())
        .collect();
    rels.sort_by(|a, b| {
        (game.symbols.name(a.name), a.arity).cmp(&(game.symbols.name(b.name), b.arity))
    });
    rels.dedup();
    let mut used: HashSet<(String, usize)> = HashSet::new();
    let mut out = HashMap::new();
    for rel in rels {
        let timed = game.phase(rel) != Phase::Static;
        let arity = rel.arity + timed as usize;
        let base = map.functor(rel.name).to_string();
        let mut name = base.clone();
        if RESERVED_PREDICATES.contains(&name.as_str()) || name.starts_with("aux_") {
            name = format!("r_{base}");
        }
        while used.contains(&(name.clone(), arity)) {
            name.push('_');
        }
        used.insert((name.clone(), arity));
        out.insert(rel, (name, timed));
    }
    out
}

/// The encoding's predicate for a keyword relation, and whether it is timed.
fn keyword_predicate(rel: Relation) -> Option<(&'static str, bool)> {
    let p = match (rel.name, rel.arity) {
        (kw::TRUE, 1) => ("holds", true),
        (kw::DOES, 2) => ("does", true),
        (kw::NEXT, 1) => ("next", true),
        (kw::LEGAL, 2) => ("legal", true),
        (kw::GOAL, 2) => ("goal", true),
        (kw::TERMINAL, 0) => ("terminal", true),
        (kw::INIT, 1) => ("init", false),
        (kw::ROLE, 1) => ("role", false),
        _ => return None,
    };
    Some(p)
}

/// A body literal with its variables and when it is true, for [`Translator::decompose`].
struct Part {
    lit: Lit,
    vars: Vec<Sym>,
    kind: RuleKind,
}

impl Part {
    fn new(lit: Lit, vars: Vec<Sym>, kind: RuleKind) -> Part {
        Part { lit, vars, kind }
    }
}

struct Translator<'a> {
    game: &'a Game,
    map: &'a SymbolMap,
    preds: &'a HashMap<Relation, (String, bool)>,
    rules: Vec<AspRule>,
    aux: usize,
    used_preds: HashSet<String>,
    /// Auxiliary rules (for `not` and by [`Translator::decompose`]), by their
    /// kind and text with the name left out, so that equal ones share a predicate.
    aux_cache: HashMap<String, String>,
    /// The roles whose moves are factored (see [`Factor`]).
    factored: &'a BTreeMap<Term, (Sym, usize)>,
}

impl Translator<'_> {
    fn rule(&mut self, rule: &Rule) {
        let vars = VarNames::new(rule, &self.game.symbols);
        if rule.head.name() == Some(kw::LEGAL) && self.factored.contains_key(&rule.head.args()[0]) {
            self.factored_legal(rule, &vars);
            return;
        }
        let head = self.atom(&rule.head, &vars);
        // The kind follows the head's relation, not the rule alone: multi-shot
        // solving must define every atom of a relation at one time in one step,
        // so a state-only rule of a move-dependent relation goes with the moves.
        let relation_phase = rule
            .head
            .relation()
            .map_or(Phase::Static, |r| self.game.phase(r));
        let kind = if !head.timed {
            RuleKind::Static
        } else if relation_phase == Phase::Move {
            RuleKind::Move
        } else {
            RuleKind::State
        };
        // Variables bound by a positive literal; others inside `not` are existential.
        let mut bound: HashSet<Sym> = HashSet::new();
        for l in &rule.body {
            if let Literal::Pos(t) = l {
                t.for_each_var(&mut |v| {
                    bound.insert(v);
                });
            }
        }
        let mut body = Vec::new();
        for l in &rule.body {
            match l {
                Literal::Pos(t) if self.is_factored_does(t) => {
                    body.extend(self.factored_does(t, rule, &vars));
                }
                Literal::Pos(t) => {
                    let atom = self.atom(t, &vars);
                    let k = self.literal_kind(t, &atom);
                    body.push(Part::new(Lit::Pos(atom), t.vars(), k));
                }
                Literal::Not(t) => {
                    let (free, kept): (Vec<Sym>, Vec<Sym>) =
                        t.vars().into_iter().partition(|v| !bound.contains(v));
                    let atom = self.atom(t, &vars);
                    let k = self.literal_kind(t, &atom);
                    let lit = if free.is_empty() {
                        Lit::Neg(atom)
                    } else {
                        Lit::Neg(self.aux_rule(t, atom, &bound, &vars, kind))
                    };
                    body.push(Part::new(lit, kept, k));
                }
                Literal::Distinct(a, b) => {
                    let mut vs = a.vars();
                    vs.extend(b.vars());
                    let lit = Lit::Neq(self.term(a, &vars), self.term(b, &vars));
                    body.push(Part::new(lit, vs, RuleKind::Static));
                }
                // The normal form removes these; a rule still holding one is skipped
                // rather than mistranslated.
                Literal::Or(_) | Literal::And(_) | Literal::Equal(..) => return,
            }
        }
        let source = (!rule.is_fact()).then(|| rule_to_string(rule, &self.game.symbols));
        let body = self.decompose(&rule.head.vars(), body, &vars, source.as_deref());
        self.rules.push(AspRule {
            head,
            body,
            kind,
            source,
        });
    }

    /// The `legal` rule of a factored role as one `legal_arg(R,I,Vi,T)` rule per
    /// argument, each with the body literal over its variable.
    fn factored_legal(&mut self, rule: &Rule, vars: &VarNames) {
        let role = self.term(&rule.head.args()[0], vars);
        let params = rule.head.args()[1].args();
        for (i, p) in params.iter().enumerate() {
            let body = rule
                .body
                .iter()
                .filter_map(|l| match l {
                    Literal::Pos(t) if t.vars().first() == p.vars().first() => {
                        Some(Lit::Pos(self.atom(t, vars)))
                    }
                    _ => None,
                })
                .collect();
            let source = (i == 0).then(|| {
                format!(
                    "{} (factored: one value per argument)",
                    rule_to_string(rule, &self.game.symbols)
                )
            });
            self.rules.push(AspRule {
                head: Atom {
                    pred: "legal_arg".to_string(),
                    args: vec![role.clone(), (i + 1).to_string(), self.term(p, vars)],
                    timed: true,
                },
                body,
                kind: RuleKind::State,
                source,
            });
        }
    }

    fn is_factored_does(&self, t: &Term) -> bool {
        t.name() == Some(kw::DOES)
            && t.args().len() == 2
            && self.factored.contains_key(&t.args()[0])
    }

    /// `(does R (f t1 .. tn))` of a factored role as `does_arg(R,I,ti,T)`
    /// literals, leaving out the arguments that are variables occurring
    /// nowhere else in the rule (`_` stands for the move when all are).
    fn factored_does(&self, t: &Term, rule: &Rule, vars: &VarNames) -> Vec<Part> {
        let mut count: HashMap<Sym, usize> = HashMap::new();
        rule.head
            .for_each_var(&mut |v| *count.entry(v).or_default() += 1);
        for l in &rule.body {
            let mut add = |t: &Term| t.for_each_var(&mut |v| *count.entry(v).or_default() += 1);
            match l {
                Literal::Pos(t) | Literal::Not(t) => add(t),
                Literal::Distinct(a, b) => {
                    add(a);
                    add(b);
                }
                _ => {}
            }
        }
        let role = self.term(&t.args()[0], vars);
        let does_arg = |i: usize, value: String| Atom {
            pred: "does_arg".to_string(),
            args: vec![role.clone(), i.to_string(), value],
            timed: true,
        };
        let mut parts: Vec<Part> = t.args()[1]
            .args()
            .iter()
            .enumerate()
            .filter(|(_, a)| !matches!(a, Term::Var(v) if count[v] == 1))
            .map(|(i, a)| {
                let atom = does_arg(i + 1, self.term(a, vars));
                Part::new(Lit::Pos(atom), a.vars(), RuleKind::Move)
            })
            .collect();
        if parts.is_empty() {
            parts.push(Part::new(
                Lit::Pos(does_arg(1, "_".to_string())),
                Vec::new(),
                RuleKind::Move,
            ));
        }
        parts
    }

    /// `aux_N(bound vars of t) :- t.`, returned as the atom to negate.
    fn aux_rule(
        &mut self,
        t: &Term,
        atom: Atom,
        bound: &HashSet<Sym>,
        vars: &VarNames,
        parent: RuleKind,
    ) -> Atom {
        let args: Vec<String> = t
            .vars()
            .into_iter()
            .filter(|v| bound.contains(v))
            .map(|v| vars.name(v).to_string())
            .collect();
        let kind = if !atom.timed {
            RuleKind::Static
        } else {
            parent.max(RuleKind::State)
        };
        self.shared_aux("", args, vec![Lit::Pos(atom)], kind, None)
    }

    /// When a body literal is true: time-free, at a state, or at a move.
    fn literal_kind(&self, t: &Term, atom: &Atom) -> RuleKind {
        if !atom.timed {
            RuleKind::Static
        } else if t
            .relation()
            .is_some_and(|r| self.game.phase(r) == Phase::Move)
        {
            RuleKind::Move
        } else {
            RuleKind::State
        }
    }

    /// A fresh auxiliary predicate name.
    fn fresh(&mut self, stem: &str) -> String {
        loop {
            self.aux += 1;
            let name = format!("aux_{}{}", stem, self.aux);
            if !self.used_preds.contains(&name) {
                return name;
            }
        }
    }

    /// The head of the auxiliary rule `head(args) :- body`, a new one unless an
    /// earlier rule made the same (the frame axioms of a game repeat their parts,
    /// rules repeat their `not`s).
    fn shared_aux(
        &mut self,
        stem: &str,
        args: Vec<String>,
        body: Vec<Lit>,
        kind: RuleKind,
        note: Option<String>,
    ) -> Atom {
        let timed = kind != RuleKind::Static;
        let probe = AspRule {
            head: Atom {
                pred: String::new(),
                args,
                timed,
            },
            body,
            kind,
            source: None,
        };
        // The kind is part of the key: multi-shot solving grounds each kind at
        // its own step, so equal text of another kind is another atom.
        let key = format!("{kind:?} {}", probe.render("T", None));
        if let Some(pred) = self.aux_cache.get(&key) {
            return Atom {
                pred: pred.clone(),
                ..probe.head
            };
        }
        let mut rule = probe;
        rule.head.pred = self.fresh(stem);
        rule.source = note;
        self.aux_cache.insert(key, rule.head.pred.clone());
        let head = rule.head.clone();
        self.rules.push(rule);
        head
    }

    /// Splits a rule body into independent parts (rule decomposition, as in
    /// lpopt): the literals linked by variables that the head does not hold form
    /// components; each component that has such a variable becomes an auxiliary
    /// rule whose head keeps only the variables the rest of the rule needs. The
    /// grounder then instantiates the parts one by one instead of their product:
    /// the GDL frame axiom `(<= (next (cell ?u ?v ?z)) (true (cell ?u ?v ?z))
    /// (does p (move ?x ?y)) (distinct ?x ?u) (true (cell ?x1 ?y1 b)) (distinct
    /// ?x1 ?u))` grounds to 81 rules a step instead of about 9,000, and clasp
    /// propagates over far fewer rules. A component with a variable that only
    /// the rest of the body binds gets a projection of a binding literal
    /// (`aux_dN(U,T) :- holds(cell(U,V,Z),T).`) so the auxiliary rule stays
    /// safe; the projection is true whenever the rest of the body is, so the
    /// rule means what it meant.
    fn decompose(
        &mut self,
        head_vars: &[Sym],
        body: Vec<Part>,
        vars: &VarNames,
        source: Option<&str>,
    ) -> Vec<Lit> {
        let note = source.map(|s| format!("a part of the body of {s}"));
        let n = body.len();
        let local = |v: &Sym| !head_vars.contains(v);
        let groups = local_components(&body, &local);
        let splittable =
            |g: &Vec<usize>| g.len() < n && g.iter().any(|&i| body[i].vars.iter().any(&local));
        if groups.len() < 2 || !groups.values().any(splittable) {
            return body.into_iter().map(|p| p.lit).collect();
        }
        let mut out: Vec<Lit> = Vec::new();
        for g in groups.values() {
            if !splittable(g) {
                out.extend(g.iter().map(|&i| body[i].lit.clone()));
                continue;
            }
            let component = Component {
                body: &body,
                group: g,
                head_vars,
                vars,
                note: &note,
            };
            let Some(lit) = self.component_rule(&component) else {
                // Cannot happen in a safe rule; keep the body whole.
                return body.into_iter().map(|p| p.lit).collect();
            };
            out.push(lit);
        }
        out
    }

    /// The auxiliary rule of one component of a decomposed body (see
    /// [`Translator::decompose`]), as the literal that stands for it; `None`
    /// when a shared variable has no binding literal outside the component.
    fn component_rule(&mut self, c: &Component) -> Option<Lit> {
        let (body, g) = (c.body, c.group);
        let n = body.len();
        let shared = c.shared();
        let mut lits: Vec<Lit> = g.iter().map(|&i| body[i].lit.clone()).collect();
        let mut kind = g
            .iter()
            .map(|&i| body[i].kind)
            .max()
            .unwrap_or(RuleKind::Static);
        // Shared variables no positive literal of the component binds.
        let bound: HashSet<Sym> = g
            .iter()
            .filter(|&&i| matches!(body[i].lit, Lit::Pos(_)))
            .flat_map(|&i| body[i].vars.iter().copied())
            .collect();
        let mut unbound: Vec<Sym> = shared
            .iter()
            .copied()
            .filter(|v| !bound.contains(v))
            .collect();
        while let Some(&v) = unbound.first() {
            // The positive literal outside the component that binds the most
            // of what is missing, the fewest other variables breaking ties.
            let i = (0..n)
                .filter(|i| !g.contains(i) && matches!(body[*i].lit, Lit::Pos(_)))
                .filter(|&i| body[i].vars.contains(&v))
                .max_by_key(|&i| {
                    let p = &body[i];
                    let hits = unbound.iter().filter(|u| p.vars.contains(u)).count();
                    (hits, usize::MAX - p.vars.len(), usize::MAX - i)
                })?;
            let Lit::Pos(src) = &body[i].lit else {
                unreachable!()
            };
            let proj: Vec<Sym> = unbound
                .iter()
                .copied()
                .filter(|u| body[i].vars.contains(u))
                .collect();
            let args = proj.iter().map(|u| c.vars.name(*u).to_string()).collect();
            let head = self.shared_aux(
                "d",
                args,
                vec![Lit::Pos(src.clone())],
                body[i].kind,
                c.note.clone(),
            );
            kind = kind.max(body[i].kind);
            lits.insert(0, Lit::Pos(head));
            unbound.retain(|u| !proj.contains(u));
        }
        let args = shared.iter().map(|u| c.vars.name(*u).to_string()).collect();
        Some(Lit::Pos(self.shared_aux(
            "p",
            args,
            lits,
            kind,
            c.note.clone(),
        )))
    }

    fn atom(&self, t: &Term, vars: &VarNames) -> Atom {
        let args: Vec<String> = t.args().iter().map(|a| self.term(a, vars)).collect();
        let rel = t.relation().expect("an atom is never a variable");
        if let Some((pred, timed)) = keyword_predicate(rel) {
            return Atom {
                pred: pred.to_string(),
                args,
                timed,
            };
        }
        let (pred, timed) = self.preds[&rel].clone();
        Atom { pred, args, timed }
    }

    fn term(&self, t: &Term, vars: &VarNames) -> String {
        match t {
            Term::Var(v) => vars.name(*v).to_string(),
            Term::Const(c) => self.map.constant(*c).to_string(),
            // clingo reads `f()` as the constant `f`: `(f)` becomes `f(())`.
            Term::Func(f, args) if args.is_empty() => format!("{}(())", self.map.functor(*f)),
            Term::Func(f, args) => {
                let args: Vec<String> = args.iter().map(|a| self.term(a, vars)).collect();
                format!("{}({})", self.map.functor(*f), args.join(","))
            }
        }
    }
}

/// One component of a body being decomposed (see [`Translator::decompose`]).
struct Component<'a> {
    body: &'a [Part],
    /// The component's literals (indices into `body`).
    group: &'a [usize],
    head_vars: &'a [Sym],
    vars: &'a VarNames,
    note: &'a Option<String>,
}

impl Component<'_> {
    /// The variables this component shares with the head or other literals,
    /// in the order the component reads them.
    fn shared(&self) -> Vec<Sym> {
        let (body, g) = (self.body, self.group);
        let outside: HashSet<Sym> = (0..body.len())
            .filter(|i| !g.contains(i))
            .flat_map(|i| body[i].vars.iter().copied())
            .chain(self.head_vars.iter().copied())
            .collect();
        let mut shared: Vec<Sym> = Vec::new();
        for &i in g {
            for &v in &body[i].vars {
                if outside.contains(&v) && !shared.contains(&v) {
                    shared.push(v);
                }
            }
        }
        shared
    }
}

/// The literals of `body` grouped by the `local` variables they share
/// (union-find), each group by its representative.
fn local_components(body: &[Part], local: &dyn Fn(&Sym) -> bool) -> BTreeMap<usize, Vec<usize>> {
    let n = body.len();
    let mut comp: Vec<usize> = (0..n).collect();
    fn find(c: &mut [usize], i: usize) -> usize {
        let mut r = i;
        while c[r] != r {
            r = c[r];
        }
        c[i] = r;
        r
    }
    let mut owner: HashMap<Sym, usize> = HashMap::new();
    for (i, p) in body.iter().enumerate() {
        for v in p.vars.iter().filter(|v| local(v)) {
            match owner.get(v) {
                Some(&j) => {
                    let (a, b) = (find(&mut comp, i), find(&mut comp, j));
                    comp[a] = b;
                }
                None => {
                    owner.insert(*v, i);
                }
            }
        }
    }
    let roots: Vec<usize> = (0..n).map(|i| find(&mut comp, i)).collect();
    let mut groups: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (i, &r) in roots.iter().enumerate() {
        groups.entry(r).or_default().push(i);
    }
    groups
}

/// ASP variable names for one rule's GDL variables: `?x` -> `X`, `?piece` ->
/// `Piece`; never `T` or `H` (the encoding's time and horizon).
#[derive(Default)]
struct VarNames {
    names: BTreeMap<Sym, String>,
}

impl VarNames {
    fn new(rule: &Rule, symbols: &crate::gdl::Symbols) -> VarNames {
        let mut used: HashSet<String> = ["T", "H"].iter().map(|s| s.to_string()).collect();
        let mut names = BTreeMap::new();
        for v in rule.vars() {
            let text = symbols.name(v).trim_start_matches('?');
            let mut name: String = text
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                .collect();
            match name.chars().next() {
                Some(c) if c.is_ascii_alphabetic() => {
                    name = c.to_ascii_uppercase().to_string() + &name[1..];
                }
                _ => name = format!("V{name}"),
            }
            while used.contains(&name) {
                name.push('_');
            }
            used.insert(name.clone());
            names.insert(v, name);
        }
        VarNames { names }
    }

    fn name(&self, v: Sym) -> &str {
        &self.names[&v]
    }
}

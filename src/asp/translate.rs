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
}

/// Translates a game's rules.
pub fn translate(game: &Game) -> Translation {
    let map = SymbolMap::new(&game.symbols);
    let relevant = relevant_rules(game);
    let preds = predicate_names(game, &map);
    let mut tr = Translator {
        game,
        map: &map,
        preds: &preds,
        rules: Vec::new(),
        aux: 0,
        used_preds: preds.values().map(|(n, _)| n.clone()).collect(),
    };
    let mut dropped = 0;
    for (i, rule) in game.rules.iter().enumerate() {
        if relevant[i] {
            tr.rule(rule, game.rule_phase[i]);
        } else {
            dropped += 1;
        }
    }
    let rules = tr.rules;
    Translation {
        map,
        rules,
        dropped,
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
    let mut by_name: HashMap<Sym, Vec<usize>> = HashMap::new();
    for (i, r) in game.rules.iter().enumerate() {
        if let Some(n) = r.head.name() {
            by_name.entry(n).or_default().push(i);
        }
    }
    let mut keep = vec![false; game.rules.len()];
    let mut seen: HashSet<Sym> = HashSet::new();
    let mut todo: Vec<Sym> = roots.to_vec();
    while let Some(name) = todo.pop() {
        if !seen.insert(name) {
            continue;
        }
        for &i in by_name.get(&name).map(Vec::as_slice).unwrap_or(&[]) {
            keep[i] = true;
            for l in &game.rules[i].body {
                if let Literal::Pos(t) | Literal::Not(t) = l {
                    if let Some(n) = t.name() {
                        todo.push(n);
                    }
                }
            }
        }
    }
    keep
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

struct Translator<'a> {
    game: &'a Game,
    map: &'a SymbolMap,
    preds: &'a HashMap<Relation, (String, bool)>,
    rules: Vec<AspRule>,
    aux: usize,
    used_preds: HashSet<String>,
}

impl Translator<'_> {
    fn rule(&mut self, rule: &Rule, phase: Phase) {
        let vars = VarNames::new(rule, &self.game.symbols);
        let head = self.atom(&rule.head, &vars);
        let kind = if !head.timed {
            RuleKind::Static
        } else if phase == Phase::Move {
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
                Literal::Pos(t) => body.push(Lit::Pos(self.atom(t, &vars))),
                Literal::Not(t) => {
                    let free: Vec<Sym> = t
                        .vars()
                        .into_iter()
                        .filter(|v| !bound.contains(v))
                        .collect();
                    let atom = self.atom(t, &vars);
                    if free.is_empty() {
                        body.push(Lit::Neg(atom));
                    } else {
                        body.push(Lit::Neg(self.aux_rule(t, atom, &bound, &vars, kind)));
                    }
                }
                Literal::Distinct(a, b) => {
                    body.push(Lit::Neq(self.term(a, &vars), self.term(b, &vars)))
                }
                // The normal form removes these; a rule still holding one is skipped
                // rather than mistranslated.
                Literal::Or(_) | Literal::And(_) | Literal::Equal(..) => return,
            }
        }
        let source = (!rule.is_fact()).then(|| rule_to_string(rule, &self.game.symbols));
        self.rules.push(AspRule {
            head,
            body,
            kind,
            source,
        });
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
        let mut name;
        loop {
            self.aux += 1;
            name = format!("aux_{}", self.aux);
            if !self.used_preds.contains(&name) {
                break;
            }
        }
        let args: Vec<String> = t
            .vars()
            .into_iter()
            .filter(|v| bound.contains(v))
            .map(|v| vars.name(v).to_string())
            .collect();
        let timed = atom.timed;
        let head = Atom {
            pred: name,
            args,
            timed,
        };
        let kind = if !timed {
            RuleKind::Static
        } else {
            parent.max(RuleKind::State)
        };
        self.rules.push(AspRule {
            head: head.clone(),
            body: vec![Lit::Pos(atom)],
            kind,
            source: None,
        });
        head
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
            Term::Func(f, args) => {
                let args: Vec<String> = args.iter().map(|a| self.term(a, vars)).collect();
                format!("{}({})", self.map.functor(*f), args.join(","))
            }
        }
    }
}

/// ASP variable names for one rule's GDL variables: `?x` -> `X`, `?piece` ->
/// `Piece`; never `T` or `H` (the encoding's time and horizon).
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

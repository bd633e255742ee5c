//! The normal form every engine starts from: a [`Game`].
//!
//! Building a `Game` removes `or` (each rule splits into one rule per choice),
//! makes unsafe rules safe where they have a finite reading ([`super::domain`]),
//! validates the rules (see [`super::validate`]), and analyses dependencies *per
//! rule*, not per relation: rule `A` depends on rule `B` when a body literal of `A`
//! unifies with the head of `B`. That finer graph is what lets real files such as
//! `(<= (goal r 100) (not (goal r 0)))`, which are stratified only once ground, be
//! evaluated correctly. From it come
//! - an evaluation order: strongly connected components of rules, dependencies
//!   first, never with `not` inside a component;
//! - each rule's [`Phase`]: static (no `true`, no `does`), state (reads `true`) or
//!   move (reads `does`); and each relation's phase, the latest of its rules'.

use std::collections::{HashMap, HashSet};

use super::ast::{Description, Literal, Pos, Relation, Rule, Term};
use super::error::{diag, Diagnostic, GdlError, Severity};
use super::graph::{resolve_term, unifiable, unify, DependencyGraph, Phase, Term2};
use super::print::{description_to_string, rule_to_string, term_to_string};
use super::symbol::{kw, Sym, Symbols};
use super::{domain, validate};

/// One step of bottom-up evaluation: rules to run to a fixpoint together.
#[derive(Clone, Debug)]
pub struct Component {
    /// Indices into [`Game::rules`].
    pub rules: Vec<usize>,
    /// True when a rule of the component depends on a rule of the component.
    pub recursive: bool,
    pub phase: Phase,
}

/// A validated game in normal form.
#[derive(Clone, Debug)]
pub struct Game {
    pub symbols: Symbols,
    /// The file the game came from, for diagnostics.
    pub source: String,
    /// The roles, in the order of their `role` facts.
    pub roles: Vec<Term>,
    /// The rules without `or`; positions point at the rule in the source.
    pub rules: Vec<Rule>,
    /// The phase of each rule (parallel to `rules`).
    pub rule_phase: Vec<Phase>,
    /// Components in evaluation order (dependencies first).
    pub components: Vec<Component>,
    /// The phase of every relation defined by a rule or fact.
    pub relations: HashMap<Relation, Phase>,
    /// Problems that do not make the rules meaningless.
    pub warnings: Vec<Diagnostic>,
    /// Relations known to hold few tuples in any state (the demand relations
    /// of [`super::demand::rewrite`]): the prover joins them first.
    pub small: Vec<Relation>,
    /// Relations with rules that only a top-down evaluation reads (a head
    /// variable the calls bind, over no finite domain: list programs). Only
    /// the prover's goal-directed strategy runs a game that has any; the
    /// grounder, the propnet and the ASP translation refuse it.
    pub top_down: Vec<Relation>,
}

/// How many rules one rule with several `or`s may expand to.
const MAX_OR_EXPANSION: usize = 4096;

impl Game {
    /// Normalises and validates a description. Errors make the game unusable;
    /// warnings are kept in [`Game::warnings`].
    pub fn new(desc: Description) -> Result<Game, GdlError> {
        let Description {
            mut symbols,
            rules: raw,
            source,
        } = desc;
        let mut diags = Vec::new();
        let rules = expand_rules(raw, &symbols, &source, &mut diags);
        let (rules, top_down) = domain::make_safe(rules, &mut symbols, &source, &mut diags);
        validate::check_rules(&rules, &top_down, &symbols, &source, &mut diags);
        let roles = roles(&rules, &symbols, &source, &mut diags);
        let (rule_phase, components) = evaluation_order(&rules, &symbols, &source, &mut diags);
        let relations = relation_phases(&rules, &rule_phase);
        validate::check_phases(&rules, &rule_phase, &symbols, &source, &mut diags);
        check_legal_rules(&roles, &rules, &symbols, &source, &mut diags);

        let (errors, warnings): (Vec<_>, Vec<_>) = diags
            .into_iter()
            .partition(|d| d.severity == Severity::Error);
        if !errors.is_empty() {
            return Err(GdlError {
                diagnostics: errors,
            });
        }
        Ok(Game {
            symbols,
            source,
            roles,
            rules,
            rule_phase,
            components,
            relations,
            warnings,
            small: Vec::new(),
            top_down,
        })
    }

    /// The game's rules as KIF text (rules after `or` elimination,
    /// equivalent): what a game manager sends, and what a model's hash reads.
    pub fn to_kif(&self) -> String {
        description_to_string(&Description {
            symbols: self.symbols.clone(),
            rules: self.rules.clone(),
            source: self.source.clone(),
        })
    }

    /// The phase of a relation; relations without rules are static (always false).
    pub fn phase(&self, rel: Relation) -> Phase {
        if rel.name == kw::TRUE {
            return Phase::State;
        }
        if rel.name == kw::DOES {
            return Phase::Move;
        }
        self.relations.get(&rel).copied().unwrap_or(Phase::Static)
    }

    /// The static relations defined by ground facts alone, each with its
    /// distinct rows (the facts' arguments, sorted).
    pub fn fact_tables(&self) -> HashMap<Relation, Vec<Vec<Term>>> {
        let mut facts: HashMap<Relation, Vec<Vec<Term>>> = HashMap::new();
        let mut derived: HashSet<Relation> = HashSet::new();
        for r in &self.rules {
            let Some(rel) = r.head.relation() else {
                continue;
            };
            if self.phase(rel) != Phase::Static {
                continue;
            }
            if r.is_fact() && r.head.is_ground() {
                facts.entry(rel).or_default().push(r.head.args().to_vec());
            } else {
                derived.insert(rel);
            }
        }
        facts.retain(|rel, _| !derived.contains(rel));
        for rows in facts.values_mut() {
            rows.sort();
            rows.dedup();
        }
        facts
    }

    /// What a game manager needs and the rules do not define: a `legal` rule
    /// that can apply to each role, a `goal` rule for each role, a `terminal`
    /// rule. Empty for a game that can be played.
    pub fn missing(&self) -> Vec<String> {
        let mut out = Vec::new();
        let defines = |name: Sym, role: Option<&Term>| {
            self.rules.iter().any(|r| {
                r.head.name() == Some(name)
                    && match role {
                        None => true,
                        Some(role) => {
                            let pattern = Term::Func(name, vec![role.clone(), Term::Var(name)]);
                            unifiable(&pattern, &r.head)
                        }
                    }
            })
        };
        for (keyword, what) in [(kw::LEGAL, "legal"), (kw::GOAL, "goal")] {
            let without: Vec<String> = self
                .roles
                .iter()
                .filter(|role| !defines(keyword, Some(role)))
                .map(|role| term_to_string(role, &self.symbols))
                .collect();
            if !without.is_empty() {
                out.push(format!("no '{what}' rule for role {}", without.join(", ")));
            }
        }
        if !defines(kw::TERMINAL, None) {
            out.push("no 'terminal' rule".to_string());
        }
        out
    }

    pub fn role_names(&self) -> Vec<String> {
        self.roles
            .iter()
            .map(|r| term_to_string(r, &self.symbols))
            .collect()
    }
}

/// The rules without `or` (see [`expand_or`]); an error for each rule that
/// expands to too many.
fn expand_rules(
    raw: Vec<Rule>,
    symbols: &Symbols,
    source: &str,
    diags: &mut Vec<Diagnostic>,
) -> Vec<Rule> {
    let mut rules = Vec::with_capacity(raw.len());
    for r in raw {
        match expand_or(&r) {
            Some(expanded) => rules.extend(expanded),
            None => diags.push(diag(
                source,
                Severity::Error,
                r.pos,
                format!("'or' expands to more than {MAX_OR_EXPANSION} rules"),
                Some(rule_to_string(&r, symbols)),
            )),
        }
    }
    rules
}

/// The roles, in the order of their `role` facts; an error when there is none
/// and for each one declared twice.
fn roles(
    rules: &[Rule],
    symbols: &Symbols,
    source: &str,
    diags: &mut Vec<Diagnostic>,
) -> Vec<Term> {
    let role_facts: Vec<&Rule> = rules
        .iter()
        .filter(|r| r.head.name() == Some(kw::ROLE) && r.head.args().len() == 1)
        .collect();
    let roles: Vec<Term> = role_facts
        .iter()
        .map(|r| r.head.args()[0].clone())
        .collect();
    if roles.is_empty() {
        diags.push(diag(
            source,
            Severity::Error,
            Pos { line: 1, col: 1 },
            "the game has no roles: no '(role ...)' fact".into(),
            None,
        ));
    }
    for (i, r) in roles.iter().enumerate() {
        if roles[..i].contains(r) {
            diags.push(diag(
                source,
                Severity::Error,
                role_facts[i].pos,
                format!("role {} is declared twice", term_to_string(r, symbols)),
                None,
            ));
        }
    }
    roles
}

/// Each rule's phase and the components in evaluation order; an error for
/// each rule that depends negatively on its own component.
fn evaluation_order(
    rules: &[Rule],
    symbols: &Symbols,
    source: &str,
    diags: &mut Vec<Diagnostic>,
) -> (Vec<Phase>, Vec<Component>) {
    let graph = DependencyGraph::build(rules);
    // Facts carry no edges (see `DependencyGraph::build`), so they must come
    // before every rule; they depend on nothing, so that order is valid.
    let (mut components, rest): (Vec<_>, Vec<_>) = graph
        .components()
        .into_iter()
        .partition(|c| c.iter().all(|&r| rules[r].is_fact()));
    components.extend(rest);
    let mut rule_phase = vec![Phase::Static; rules.len()];
    let mut comps = Vec::with_capacity(components.len());
    for comp in components {
        let mut phase = Phase::Static;
        let mut recursive = false;
        for &r in &comp {
            phase = phase.max(direct_phase(&rules[r]));
            for &(dep, negative) in &graph.edges[r] {
                if comp.contains(&dep) {
                    recursive = true;
                    if negative {
                        diags.push(diag(
                            source,
                            Severity::Error,
                            rules[r].pos,
                            "recursion through 'not': this rule depends negatively on itself (the rules are not stratified)".into(),
                            Some(rule_to_string(&rules[r], symbols)),
                        ));
                    }
                } else {
                    phase = phase.max(rule_phase[dep]);
                }
            }
        }
        for &r in &comp {
            rule_phase[r] = phase;
        }
        comps.push(Component {
            rules: comp,
            recursive,
            phase,
        });
    }
    (rule_phase, comps)
}

/// The phase of every relation defined by a rule or fact: the latest of its
/// rules'.
fn relation_phases(rules: &[Rule], rule_phase: &[Phase]) -> HashMap<Relation, Phase> {
    let mut relations: HashMap<Relation, Phase> = HashMap::new();
    for (r, p) in rules.iter().zip(rule_phase) {
        if let Some(rel) = r.head.relation() {
            let e = relations.entry(rel).or_insert(Phase::Static);
            *e = (*e).max(*p);
        }
    }
    relations
}

/// A role no `legal` rule can ever apply to has no move in any state: a
/// warning.
fn check_legal_rules(
    roles: &[Term],
    rules: &[Rule],
    symbols: &Symbols,
    source: &str,
    diags: &mut Vec<Diagnostic>,
) {
    for role in roles {
        let pattern = Term::Func(kw::LEGAL, vec![role.clone(), Term::Var(kw::LEGAL)]);
        if !rules
            .iter()
            .any(|r| r.head.name() == Some(kw::LEGAL) && unifiable(&pattern, &r.head))
        {
            diags.push(diag(
                source,
                Severity::Warning,
                Pos { line: 1, col: 1 },
                format!(
                    "role {} has no 'legal' rule: it has no move in any state",
                    term_to_string(role, symbols)
                ),
                None,
            ));
        }
    }
}

/// Splits a rule with `or` literals into one rule per combination of choices.
/// `None` when that would exceed [`MAX_OR_EXPANSION`].
pub fn expand_or(rule: &Rule) -> Option<Vec<Rule>> {
    let mut bodies: Vec<Vec<Literal>> = vec![Vec::new()];
    for lit in &rule.body {
        match lit {
            Literal::Or(alts) => {
                let flat = flatten_or(alts);
                if bodies.len() * flat.len() > MAX_OR_EXPANSION {
                    return None;
                }
                bodies = bodies
                    .iter()
                    .flat_map(|b| {
                        flat.iter().map(move |a| {
                            let mut nb = b.clone();
                            nb.push(a.clone());
                            nb
                        })
                    })
                    .collect();
            }
            other => bodies.iter_mut().for_each(|b| b.push(other.clone())),
        }
    }
    // A conjunction chosen from an `or` joins the body; an `or` inside it expands again.
    let mut out = Vec::new();
    for body in bodies {
        let mut flat = Vec::new();
        flatten_and(body, &mut flat);
        let r = Rule {
            head: rule.head.clone(),
            body: flat,
            pos: rule.pos,
        };
        if r.body.iter().any(|l| matches!(l, Literal::Or(_))) {
            out.extend(expand_or(&r)?);
        } else if let Some(r) = eliminate_equal(r) {
            out.push(r);
        }
        if out.len() > MAX_OR_EXPANSION {
            return None;
        }
    }
    Some(out)
}

fn flatten_and(body: Vec<Literal>, out: &mut Vec<Literal>) {
    for l in body {
        match l {
            Literal::And(inner) => flatten_and(inner, out),
            other => out.push(other),
        }
    }
}

/// Removes `(not (distinct a b))` by unifying `a` and `b` in the whole rule; a rule
/// whose terms cannot be equal never fires and is dropped (`None`).
fn eliminate_equal(mut rule: Rule) -> Option<Rule> {
    while let Some(i) = rule
        .body
        .iter()
        .position(|l| matches!(l, Literal::Equal(..)))
    {
        let Literal::Equal(a, b) = rule.body.remove(i) else {
            unreachable!()
        };
        let mut s: HashMap<(bool, Sym), Term2> = HashMap::new();
        if !unify(&Term2::new(&a, false), &Term2::new(&b, false), &mut s) {
            return None;
        }
        let apply = |t: &Term| resolve_term(&Term2::new(t, false), &s);
        rule.head = resolve_term(&Term2::new(&rule.head, false), &s);
        rule.body = rule.body.iter().map(|l| map_literal(l, &apply)).collect();
    }
    Some(rule)
}

/// `l` with `f` applied to each of its terms.
pub(crate) fn map_literal(l: &Literal, f: &dyn Fn(&Term) -> Term) -> Literal {
    match l {
        Literal::Pos(t) => Literal::Pos(f(t)),
        Literal::Not(t) => Literal::Not(f(t)),
        Literal::Distinct(a, b) => Literal::Distinct(f(a), f(b)),
        Literal::Equal(a, b) => Literal::Equal(f(a), f(b)),
        Literal::Or(ls) => Literal::Or(ls.iter().map(|l| map_literal(l, f)).collect()),
        Literal::And(ls) => Literal::And(ls.iter().map(|l| map_literal(l, f)).collect()),
    }
}

fn flatten_or(alts: &[Literal]) -> Vec<Literal> {
    let mut out = Vec::new();
    for a in alts {
        match a {
            Literal::Or(inner) => out.extend(flatten_or(inner)),
            Literal::And(inner) if inner.len() == 1 => out.extend(flatten_or(inner)),
            other => out.push(other.clone()),
        }
    }
    out
}

/// The phase a rule has from its own body alone (`true` -> state, `does` -> move).
fn direct_phase(rule: &Rule) -> Phase {
    let mut p = Phase::Static;
    for l in &rule.body {
        if let Literal::Pos(t) | Literal::Not(t) = l {
            match t.name() {
                Some(n) if n == kw::DOES => p = p.max(Phase::Move),
                Some(n) if n == kw::TRUE => p = p.max(Phase::State),
                _ => {}
            }
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gdl::parse;

    #[test]
    fn goal_negation_is_stratified_per_rule() {
        let d = parse(
            "(role r) (init (p)) (<= (goal r 0) (true (p))) (<= (goal r 100) (not (goal r 0))) (<= terminal (true (p)))",
            "t",
        )
        .unwrap();
        let g = Game::new(d).unwrap();
        assert_eq!(g.roles.len(), 1);
    }

    #[test]
    fn real_negative_cycle_is_an_error() {
        let d = parse("(role r) (<= (p ?x) (q ?x) (not (p ?x))) (q a)", "t").unwrap();
        let e = Game::new(d).unwrap_err().to_string();
        assert!(e.contains("recursion through 'not'"), "{e}");
    }

    #[test]
    fn not_distinct_unifies_and_and_inside_or_expands() {
        let d = parse(
            "(role r) (<= (p ?x ?y) (q ?x) (q ?y) (not (distinct ?x ?y))) (<= (s ?x) (q ?x) (or (and (a ?x) (b ?x)) (c ?x))) (q 1)",
            "t",
        )
        .unwrap();
        let rules = expand_or(&d.rules[1]).unwrap();
        assert_eq!(rules.len(), 1);
        assert_eq!(
            crate::gdl::print::rule_to_string(&rules[0], &d.symbols),
            "(<= (p ?y ?y) (q ?y) (q ?y))"
        );
        let rules = expand_or(&d.rules[2]).unwrap();
        assert_eq!(rules.len(), 2);
        assert_eq!(rules[0].body.len(), 3);
    }

    #[test]
    fn or_expands() {
        let d = parse(
            "(role r) (<= (p ?x) (q ?x) (or (a ?x) (b ?x)) (or (c) (d)))",
            "t",
        )
        .unwrap();
        assert_eq!(expand_or(&d.rules[1]).unwrap().len(), 4);
    }
}

//! Unsafe rules read as ggp-base reads them: every variable ranges over the
//! terms that can stand in its place.
//!
//! The GDL specification forbids a rule whose head or `distinct` has a
//! variable that no positive body literal binds (`(<= (legal ?player noop))`,
//! `(<= (min ?a ?a ?a) (succ 0 1))`), but games played for years on public
//! servers have them, and ggp-base's prover, which answers queries top-down,
//! plays them: the query binds what the body does not. Every engine here works
//! bottom-up, so [`make_safe`] gives each such variable a finite domain and
//! adds a positive literal over a generated static relation holding it
//! (`(dom_legal_1 ?player)`, with one fact per term). Every engine then sees
//! only safe rules.
//!
//! The domain of a variable is what can stand in its place: the terms that
//! can occur in the argument positions it takes in the head. Those are
//! inferred from the rules to a fixpoint, per argument position of each
//! relation: what heads put there (ground terms, and terms built from the
//! domains of their variables) and what calls ask there (a caller's ground
//! arguments and variables bound by its other literals), as the queries of a
//! top-down prover would. The state and the moves are what `init`, `next` and
//! `legal` say (`true` reads `next`'s position, `does` reads `legal`'s), and
//! the role position of `legal`, `does` and `goal` holds the roles. A
//! position whose terms grow without bound (nested past
//! [`terms::MAX_DEPTH`], or more than [`MAX_TERMS`]) has no finite reading: an unsafe variable there stays
//! an error, with that reason; so does one over no term at all in the head
//! of a keyword relation (the rule would mean nothing).
//!
//! A variable only in `distinct` (not in the head) is read as ggp-base's
//! prover reads it: an unbound variable equals only itself, so the literal is
//! decided on the rest (usually it always holds and is dropped). A variable
//! only inside `not` keeps its reading "there is no such value" (see
//! [`super::validate`]).

mod infer;
pub mod terms;

use std::collections::{HashMap, HashSet};

use super::ast::{Literal, Relation, Rule, Term};
use super::error::{diag, Diagnostic, Severity};
use super::print::{rule_to_string, term_to_string};
use super::symbol::{kw, Sym, Symbols};
use infer::{bound_by_finite_calls, head_domain, infer, Domains};

/// Terms a generated domain may list before it counts as unbounded.
pub const MAX_TERMS: usize = 20_000;

/// What the rules can put in position `i` of `rel`, listed: every term a
/// head (or an `init` fact, for `next`'s fluent) can hold there, found by
/// the same inference as unsafe rules' domains. For `(next, 0)` a superset
/// of every fluent of every reachable state; for `(legal, 1)` of every
/// move. `None` when unbounded or more than `max` terms.
pub fn terms_at(rules: &[Rule], rel: Relation, i: usize, max: usize) -> Option<Vec<Term>> {
    infer(rules).puts(rel, i).list(max)
}

/// The rules with every unsafe rule made safe where it has a finite reading
/// (warnings say how each was read), the generated domain facts appended;
/// and the relations read goal-directed only (see [`goal_directed_only`]).
/// An error for each variable that has no reading.
pub(crate) fn make_safe(
    rules: Vec<Rule>,
    symbols: &mut Symbols,
    source: &str,
    diags: &mut Vec<Diagnostic>,
) -> (Vec<Rule>, Vec<Relation>) {
    if !rules
        .iter()
        .any(|r| !unsafe_head_vars(r).is_empty() || has_unsafe_distinct(r))
    {
        return (rules, Vec::new());
    }
    let domains = infer(&rules);
    let top_down = goal_directed_only(&rules, &domains, symbols);
    let mut out = Vec::with_capacity(rules.len());
    let mut made = Made::default();
    let mut said = Vec::new();
    for rule in rules {
        let rel = rule.head.relation().expect("heads are atoms");
        if top_down.contains(&rel) {
            let vars = unsafe_head_vars(&rule);
            if !vars.is_empty() {
                let names: Vec<&str> = vars.iter().map(|&v| symbols.name(v)).collect();
                let msg = format!(
                    "unsafe rule: variable {} in the head does not occur in a positive body literal, and the terms that can stand in its place have no finite bound bottom-up (the rules nest terms ever deeper, or there are more than {MAX_TERMS}); read as ggp-base's prover reads it, top-down: every call of {} binds it (only the prover's goal-directed strategy runs this game)",
                    names.join(", "),
                    rel.display(symbols)
                );
                let text = rule_to_string(&rule, symbols);
                said.push(diag(source, Severity::Warning, rule.pos, msg, Some(text)));
            }
            out.push(rule);
            continue;
        }
        let Some(rule) = bind_head(rule, &domains, symbols, source, &mut said, &mut made) else {
            continue;
        };
        out.extend(rigid_distinct(rule, symbols, source, &mut said));
    }
    out.extend(made.facts);
    // The rules an `or` split into share a position and say the same.
    for d in said {
        if !diags
            .iter()
            .any(|e| e.pos == d.pos && e.message == d.message)
        {
            diags.push(d);
        }
    }
    (out, top_down)
}

/// The relations some rule of which has a head variable that nothing binds
/// bottom-up and no finite domain either (list programs: `(append NIL ?l
/// ?l)`, a depth-first search over a stack): a top-down prover reads them,
/// the callers binding those arguments, as ggp-base's does. Relations the
/// game manager asks about (`legal`, `goal` ...) are not among them: nothing
/// binds their arguments but the rules.
///
/// Only where the unbounded terms come from those relations themselves: with
/// their rules left out, what the rest of the game asks in the place of each
/// such variable must be finite. Then the calls start from finite terms and
/// the relations recurse over their structure (a list is taken apart, a
/// stack searched), which is how such games are written. A variable whose
/// calls already ask ever deeper terms (a counter `(s (s ...))` counted up
/// without end) has no finite reading either way and stays an error.
fn goal_directed_only(rules: &[Rule], domains: &Domains, symbols: &mut Symbols) -> Vec<Relation> {
    let unbounded = |r: &Rule, d: &Domains| {
        unsafe_head_vars(r)
            .into_iter()
            .any(|v| head_domain(v, r, d).list(MAX_TERMS).is_none())
    };
    let mut candidates: Vec<Relation> = Vec::new();
    for r in rules {
        let rel = r.head.relation().expect("heads are atoms");
        if !is_keyword(rel.name) && !candidates.contains(&rel) && unbounded(r, domains) {
            candidates.push(rel);
        }
    }
    if candidates.is_empty() {
        return candidates;
    }
    let mut rest: Vec<Rule> = rules
        .iter()
        .filter(|r| {
            !r.head
                .relation()
                .is_some_and(|rel| candidates.contains(&rel))
        })
        .cloned()
        .collect();
    // Each left-out relation stays defined (a relation with no rule reads
    // as one the game manager fills, over anything), by a rule that derives
    // nothing: `(<= (r ?v1 ... ?vn) (r ?v1 ... ?vn))`.
    for rel in &candidates {
        let Some(r) = rules.iter().find(|r| r.head.relation() == Some(*rel)) else {
            continue;
        };
        let vars: Vec<Term> = (0..rel.arity)
            .map(|_| Term::Var(symbols.fresh("?x")))
            .collect();
        let atom = Term::Func(rel.name, vars);
        rest.push(Rule {
            head: atom.clone(),
            body: vec![Literal::Pos(atom)],
            pos: r.pos,
        });
    }
    let asked = infer(&rest);
    // Finite, however many: a call binds one of them at a time.
    let finite_calls = |rel: &Relation| {
        rules
            .iter()
            .filter(|r| r.head.relation().as_ref() == Some(rel))
            .all(|r| {
                unsafe_head_vars(r)
                    .into_iter()
                    .all(|v| bound_by_finite_calls(v, r, &asked))
            })
    };
    candidates.retain(|rel| finite_calls(rel));
    candidates
}

/// Head variables that no positive body literal binds, in order.
fn unsafe_head_vars(r: &Rule) -> Vec<Sym> {
    let bound = r.positive_vars();
    r.head
        .vars()
        .into_iter()
        .filter(|v| !bound.contains(v))
        .collect()
}

fn has_unsafe_distinct(r: &Rule) -> bool {
    let bound = r.positive_vars();
    r.body.iter().any(|l| match l {
        Literal::Distinct(a, b) => a.vars().iter().chain(&b.vars()).any(|v| !bound.contains(v)),
        _ => false,
    })
}

/// The domain relations made so far and their facts.
#[derive(Default)]
struct Made {
    by_terms: HashMap<(String, Vec<Term>), Sym>,
    facts: Vec<Rule>,
}

impl Made {
    /// The relation `base` (or a fresh variant of it) holding exactly `terms`.
    fn relation(
        &mut self,
        base: String,
        terms: Vec<Term>,
        symbols: &mut Symbols,
        rule: &Rule,
    ) -> Sym {
        if let Some(&s) = self.by_terms.get(&(base.clone(), terms.clone())) {
            return s;
        }
        let s = symbols.fresh(&base);
        for t in &terms {
            self.facts.push(Rule {
                head: Term::Func(s, vec![t.clone()]),
                body: Vec::new(),
                pos: rule.pos,
            });
        }
        self.by_terms.insert((base, terms), s);
        s
    }
}

/// Relations the game manager reads or the game must define: a rule of one
/// of them that nothing can instantiate means nothing.
fn is_keyword(s: Sym) -> bool {
    matches!(
        s,
        kw::ROLE | kw::INIT | kw::NEXT | kw::LEGAL | kw::GOAL | kw::TERMINAL | kw::BASE | kw::INPUT
    )
}

/// The innermost function term of `t` that has variable `v` as an argument,
/// and which argument (0-based): what names `v`'s place in messages.
fn place(v: Sym, t: &Term) -> Option<(Sym, usize)> {
    let Term::Func(f, args) = t else { return None };
    args.iter().find_map(|a| place(v, a)).or_else(|| {
        args.iter()
            .position(|a| *a == Term::Var(v))
            .map(|i| (*f, i))
    })
}

/// How many terms of a domain a message lists.
const SHOWN: usize = 8;

fn show_terms(terms: &[Term], symbols: &Symbols) -> String {
    let mut shown: Vec<String> = terms
        .iter()
        .take(SHOWN)
        .map(|t| term_to_string(t, symbols))
        .collect();
    if terms.len() > SHOWN {
        shown.push(format!("... ({} in all)", terms.len()));
    }
    shown.join(", ")
}

/// `rule` with a domain literal for each unsafe head variable (a warning
/// says which); `None` when some variable has no finite reading (an error
/// says why) or nothing can stand in its place (the rule never applies).
fn bind_head(
    mut rule: Rule,
    domains: &Domains,
    symbols: &mut Symbols,
    source: &str,
    diags: &mut Vec<Diagnostic>,
    made: &mut Made,
) -> Option<Rule> {
    let vars = unsafe_head_vars(&rule);
    if vars.is_empty() {
        return Some(rule);
    }
    let rel = rule.head.relation().expect("heads are atoms");
    let text = rule_to_string(&rule, symbols);
    let names: Vec<&str> = vars.iter().map(|&v| symbols.name(v)).collect();
    let what = format!(
        "unsafe rule: variable {} in the head does not occur in a positive body literal",
        names.join(", ")
    );
    let mut readings = Vec::new();
    let mut literals = Vec::new();
    for &v in &vars {
        let (f, i) = place(v, &rule.head).expect("a head variable");
        let place = format!("argument {} of {}", i + 1, symbols.name(f));
        let var = symbols.name(v).to_string();
        let Some(terms) = head_domain(v, &rule, domains).list(MAX_TERMS) else {
            let why = format!("{what}, and the terms that can stand in its place ({var}: {place}) have no finite bound (the rules nest terms ever deeper, or there are more than {MAX_TERMS}): the rule has no finite reading");
            diags.push(diag(source, Severity::Error, rule.pos, why, Some(text)));
            return None;
        };
        if terms.is_empty() {
            let (sev, end) = if is_keyword(rel.name) {
                (Severity::Error, "the rule has no reading")
            } else {
                (Severity::Warning, "the rule never applies")
            };
            let why = format!("{what}, and no other rule or call puts a term in its place ({var}: {place}): {end}");
            diags.push(diag(source, sev, rule.pos, why, Some(text)));
            return None;
        }
        let base = format!("dom_{}_{}", symbols.name(f), i + 1);
        let shown = show_terms(&terms, symbols);
        let s = made.relation(base, terms, symbols, &rule);
        readings.push(format!(
            "{var} ranges over ({} {var}): {shown}",
            symbols.name(s)
        ));
        literals.push(Literal::Pos(Term::Func(s, vec![Term::Var(v)])));
    }
    rule.body.extend(literals);
    let msg = format!(
        "{what}; read as ggp-base reads it, over the terms that can stand in its place: {}",
        readings.join("; ")
    );
    diags.push(diag(source, Severity::Warning, rule.pos, msg, Some(text)));
    Some(rule)
}

/// `rule` with each `distinct` over variables bound nowhere read as
/// ggp-base's prover reads it: an unbound variable equals only itself. The
/// literal is dropped when it always holds, the rule when it never does, and
/// a literal that holds when one of several pairs of bound terms differ
/// splits the rule, one per pair.
fn rigid_distinct(
    mut rule: Rule,
    symbols: &Symbols,
    source: &str,
    diags: &mut Vec<Diagnostic>,
) -> Vec<Rule> {
    let bound = rule.positive_vars();
    let free = |t: &Term| t.vars().iter().any(|v| !bound.contains(v));
    let Some(j) = rule.body.iter().position(|l| match l {
        Literal::Distinct(a, b) => free(a) || free(b),
        _ => false,
    }) else {
        return vec![rule];
    };
    let text = rule_to_string(&rule, symbols);
    let Literal::Distinct(a, b) = rule.body.remove(j) else {
        unreachable!("found above")
    };
    let mut names: Vec<Sym> = a.vars();
    names.extend(b.vars());
    names.retain(|v| !bound.contains(v));
    let mut seen = HashSet::new();
    names.retain(|v| seen.insert(*v));
    let names: Vec<&str> = names.iter().map(|&v| symbols.name(v)).collect();
    let lit = format!(
        "(distinct {} {})",
        term_to_string(&a, symbols),
        term_to_string(&b, symbols)
    );
    let pairs = rigid_equal(&a, &b, &bound);
    let reading = match &pairs {
        None => "it always holds".to_string(),
        Some(p) if p.is_empty() => "it never holds: the rule never applies".to_string(),
        Some(p) => {
            let p: Vec<String> = p
                .iter()
                .map(|(x, y)| {
                    format!(
                        "(distinct {} {})",
                        term_to_string(x, symbols),
                        term_to_string(y, symbols)
                    )
                })
                .collect();
            format!("it holds when {}", p.join(" or "))
        }
    };
    let msg = format!(
        "unsafe rule: variable {} in 'distinct' does not occur in a positive body literal; read as ggp-base reads it (an unbound variable equals only itself), {lit}: {reading}",
        names.join(", ")
    );
    diags.push(diag(source, Severity::Warning, rule.pos, msg, Some(text)));
    let rules = match pairs {
        None => vec![rule],
        Some(pairs) => pairs
            .into_iter()
            .map(|(x, y)| {
                let mut r = rule.clone();
                r.body.insert(j, Literal::Distinct(x, y));
                r
            })
            .collect(),
    };
    rules
        .into_iter()
        .flat_map(|r| rigid_distinct(r, symbols, source, diags))
        .collect()
}

/// When `a` and `b` can be equal, unbound variables equal only to
/// themselves: the pairs of bound terms that must be equal for that (none:
/// always equal); `None` when they never are.
fn rigid_equal(a: &Term, b: &Term, bound: &HashSet<Sym>) -> Option<Vec<(Term, Term)>> {
    if a == b {
        return Some(Vec::new());
    }
    let free = |t: &Term| t.vars().iter().any(|v| !bound.contains(v));
    match (a, b) {
        (Term::Func(f, xs), Term::Func(g, ys)) if f == g && xs.len() == ys.len() => {
            let mut pairs = Vec::new();
            for (x, y) in xs.iter().zip(ys) {
                pairs.extend(rigid_equal(x, y, bound)?);
            }
            Some(pairs)
        }
        (Term::Var(_), _) | (_, Term::Var(_)) if !free(a) && !free(b) => {
            Some(vec![(a.clone(), b.clone())])
        }
        _ => None,
    }
}

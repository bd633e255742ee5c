//! Validation of GDL rules: keyword arities, what may stand in a head, safety,
//! goal values, where `does` and `true` may be used, undefined relations and the
//! recursion restriction. Stratification is checked where the dependency graph is
//! built ([`super::normal`]).
//!
//! Hard errors only where the rules lose their meaning (`does` inside `legal`, a
//! wrong keyword arity, an unbound variable in a head or in `distinct` that
//! [`super::domain`] could not give a finite reading); the rest are warnings. A variable that occurs only inside `(not ...)` is read as "there is no
//! such value" (negation of an existential), which is what Prolog-based players do.

use std::collections::{HashMap, HashSet};

use super::ast::{Literal, Relation, Rule, Term};
use super::error::diag;
use super::error::{Diagnostic, Severity};
use super::graph::{unifiable, DependencyGraph, Phase};
use super::print::rule_to_string;
use super::symbol::{kw, Sym, Symbols};

fn keyword_arity(s: Sym) -> Option<usize> {
    Some(match s {
        kw::ROLE | kw::INIT | kw::TRUE | kw::NEXT | kw::BASE => 1,
        kw::LEGAL | kw::DOES | kw::GOAL | kw::INPUT | kw::DISTINCT => 2,
        kw::TERMINAL => 0,
        _ => return None,
    })
}

pub(crate) fn check_rules(
    rules: &[Rule],
    top_down: &[Relation],
    syms: &Symbols,
    file: &str,
    out: &mut Vec<Diagnostic>,
) {
    let mut c = Checker { syms, file, out };
    let defined: HashSet<Relation> = rules.iter().filter_map(|r| r.head.relation()).collect();
    let mut arities: HashMap<Sym, HashSet<usize>> = HashMap::new();
    for r in rules {
        c.keyword_arities(r, &mut arities);
        c.head(r);
        // Read top-down: the calls bind what the body does not (see
        // `domain::make_safe`).
        if !r.head.relation().is_some_and(|rel| top_down.contains(&rel)) {
            c.safety(r);
        }
        c.goal_value(r);
        c.undefined(r, &defined);
    }
    c.several_arities(arities);
    check_recursion_restriction(rules, syms, file, out);
}

/// The diagnostics of [`check_rules`], each check a method.
struct Checker<'a> {
    syms: &'a Symbols,
    file: &'a str,
    out: &'a mut Vec<Diagnostic>,
}

impl Checker<'_> {
    fn err(&mut self, r: &Rule, sev: Severity, msg: String) {
        let text = rule_to_string(r, self.syms);
        self.out.push(diag(self.file, sev, r.pos, msg, Some(text)))
    }

    /// Keyword arities, in the head and in the body; records every arity each
    /// relation name is used with.
    fn keyword_arities(&mut self, r: &Rule, arities: &mut HashMap<Sym, HashSet<usize>>) {
        let mut atoms: Vec<&Term> = vec![&r.head];
        for l in &r.body {
            match l {
                Literal::Pos(t) | Literal::Not(t) => atoms.push(t),
                _ => {}
            }
        }
        for a in &atoms {
            let Some(rel) = a.relation() else { continue };
            arities.entry(rel.name).or_default().insert(rel.arity);
            if let Some(k) = keyword_arity(rel.name) {
                if k != rel.arity {
                    // Older files use some keywords with other arities as ordinary
                    // relations (`(next ?x ?y)` as a successor, `(base f (val ..))`);
                    // a relation is its name and arity, so those keep their meaning.
                    // `true`, `does` and `distinct` have none with another arity.
                    let input_kw =
                        rel.name == kw::TRUE || rel.name == kw::DOES || rel.name == kw::DISTINCT;
                    let (sev, how) = if input_kw {
                        (Severity::Error, "")
                    } else {
                        (Severity::Warning, "; treated as an ordinary relation")
                    };
                    let msg = format!(
                        "'{}' takes {} argument(s), found {}{how}",
                        self.syms.name(rel.name),
                        k,
                        rel.arity
                    );
                    self.err(r, sev, msg);
                }
            }
        }
    }

    /// What may stand in a head.
    fn head(&mut self, r: &Rule) {
        let head = r.head.name().expect("heads are atoms");
        if head == kw::TRUE
            || head == kw::DOES
            || head == kw::DISTINCT
            || head == kw::NOT
            || head == kw::OR
            || head == kw::AND
        {
            let msg = format!(
                "'{}' cannot be defined by a rule or fact",
                self.syms.name(head)
            );
            self.err(r, Severity::Error, msg);
        }
    }

    /// Safety: every variable of the head and of `distinct` occurs in a
    /// positive body literal; one only inside `not` is a warning.
    fn safety(&mut self, r: &Rule) {
        let bound = r.positive_vars();
        let syms = self.syms;
        let unbound = |t: &Term| -> Vec<String> {
            t.vars()
                .into_iter()
                .filter(|v| !bound.contains(v))
                .map(|v| syms.name(v).to_string())
                .collect()
        };
        let head_unbound = unbound(&r.head);
        if !head_unbound.is_empty() {
            self.err(
                r,
                Severity::Error,
                format!("unsafe rule: variable {} in the head does not occur in a positive body literal", head_unbound.join(", ")),
            );
        }
        for l in &r.body {
            match l {
                Literal::Distinct(a, b) => {
                    let mut u = unbound(a);
                    u.extend(unbound(b));
                    if !u.is_empty() {
                        self.err(r, Severity::Error, format!("unsafe rule: variable {} in 'distinct' does not occur in a positive body literal", u.join(", ")));
                    }
                }
                Literal::Not(t) => {
                    let u = unbound(t);
                    if !u.is_empty() {
                        self.err(
                            r,
                            Severity::Warning,
                            format!(
                                "unsafe rule: variable {} occurs only inside 'not'; read as 'there is no such value'",
                                u.join(", ")
                            ),
                        );
                    }
                }
                _ => {}
            }
        }
    }

    /// Goal values are numbers from 0 to 100.
    fn goal_value(&mut self, r: &Rule) {
        if r.head.name() != Some(kw::GOAL) || r.head.args().len() != 2 {
            return;
        }
        match &r.head.args()[1] {
            Term::Const(c) if self.syms.name(*c).parse::<u8>().is_ok_and(|v| v <= 100) => {}
            Term::Var(_) => {}
            other => {
                let msg = format!(
                    "goal value {} is not a number from 0 to 100",
                    super::print::term_to_string(other, self.syms)
                );
                self.err(r, Severity::Warning, msg);
            }
        }
    }

    /// Relations used but never defined are always false.
    fn undefined(&mut self, r: &Rule, defined: &HashSet<Relation>) {
        for l in &r.body {
            if let Literal::Pos(t) | Literal::Not(t) = l {
                if let Some(rel) = t.relation() {
                    if keyword_arity(rel.name).is_none() && !defined.contains(&rel) {
                        let msg = format!(
                            "relation {} is used but never defined (always false)",
                            rel.display(self.syms)
                        );
                        self.err(r, Severity::Warning, msg);
                    }
                }
            }
        }
    }

    /// A name used with several arities names several relations.
    fn several_arities(&mut self, arities: HashMap<Sym, HashSet<usize>>) {
        for (name, ars) in arities {
            if ars.len() > 1 && keyword_arity(name).is_none() {
                let mut a: Vec<_> = ars.into_iter().collect();
                a.sort_unstable();
                self.out.push(diag(
                    self.file,
                    Severity::Warning,
                    Default::default(),
                    format!(
                        "'{}' is used with several arities {:?}; each is a separate relation",
                        self.syms.name(name),
                        a
                    ),
                    None,
                ));
            }
        }
    }
}

/// `does` may only influence `next` (and relations only `next` uses); `init`, `role`,
/// `base` and `input` must not depend on the state.
pub(crate) fn check_phases(
    rules: &[Rule],
    phases: &[Phase],
    syms: &Symbols,
    file: &str,
    out: &mut Vec<Diagnostic>,
) {
    for (r, &p) in rules.iter().zip(phases) {
        let head = r.head.name().expect("heads are atoms");
        let msg = match head {
            kw::LEGAL | kw::GOAL | kw::TERMINAL if p == Phase::Move => {
                format!(
                    "'{}' depends on 'does': GDL allows moves to influence only 'next'",
                    syms.name(head)
                )
            }
            kw::INIT | kw::ROLE | kw::BASE | kw::INPUT if p != Phase::Static => {
                format!(
                    "'{}' depends on the state ('true' or 'does'); it must be static",
                    syms.name(head)
                )
            }
            _ => continue,
        };
        out.push(diag(
            file,
            Severity::Error,
            r.pos,
            msg,
            Some(rule_to_string(r, syms)),
        ));
    }
}

/// The recursion restriction of GDL: in a rule whose body literal is recursive with
/// the head, each argument of that literal must be ground, an argument of the head,
/// or bound by a non-recursive positive literal. Violations may make the set of
/// terms infinite; reported as warnings, since engines bound their work anyway.
fn check_recursion_restriction(
    rules: &[Rule],
    syms: &Symbols,
    file: &str,
    out: &mut Vec<Diagnostic>,
) {
    let graph = DependencyGraph::build(rules);
    let comps = graph.components();
    let mut comp_of = vec![0; rules.len()];
    for (i, c) in comps.iter().enumerate() {
        for &r in c {
            comp_of[r] = i;
        }
    }
    for (ri, r) in rules.iter().enumerate() {
        let recursive_lits: Vec<usize> = r
            .body
            .iter()
            .enumerate()
            .filter(|(_, l)| matches!(l, Literal::Pos(_)))
            .filter(|(_, l)| {
                let Literal::Pos(t) = l else { return false };
                graph.edges[ri]
                    .iter()
                    .any(|&(dep, _)| comp_of[dep] == comp_of[ri] && unifiable(t, &rules[dep].head))
            })
            .map(|(i, _)| i)
            .collect();
        if recursive_lits.is_empty() {
            continue;
        }
        let mut safe_vars: HashSet<Sym> = HashSet::new();
        for (i, l) in r.body.iter().enumerate() {
            if let Literal::Pos(t) = l {
                if !recursive_lits.contains(&i) {
                    t.for_each_var(&mut |v| {
                        safe_vars.insert(v);
                    });
                }
            }
        }
        for &i in &recursive_lits {
            let Literal::Pos(t) = &r.body[i] else {
                continue;
            };
            for a in t.args() {
                let ok = a.is_ground()
                    || r.head.args().contains(a)
                    || a.vars().iter().all(|v| safe_vars.contains(v));
                if !ok {
                    out.push(diag(
                        file,
                        Severity::Warning,
                        r.pos,
                        "violates the recursion restriction: an argument of a recursive literal is neither ground, a head argument, nor bound outside the recursion".into(),
                        Some(rule_to_string(r, syms)),
                    ));
                    break;
                }
            }
        }
    }
}

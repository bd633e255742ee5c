//! Compiling GDL rules for the grounder: each rule's head and literals as
//! patterns over numbered variables, its relations registered in the model,
//! and the relaxation's own rules (`true` from `init` and `next`, `does`
//! from `legal`).

use super::*;

/// The pattern of `t`, numbering its variables by first occurrence in `vars`.
fn pat(t: &Term, pool: &mut TermPool, vars: &mut Vec<Sym>) -> Pat {
    Pat::new(t, pool, &mut |v| {
        let i = vars.iter().position(|&x| x == v).unwrap_or_else(|| {
            vars.push(v);
            vars.len() - 1
        });
        i as u16
    })
}

/// Compiles rule `r` of `game` (of phase `phase`), registering its relations.
pub(super) fn compile_rule(game: &Game, r: &Rule, phase: Phase, model: &mut Model) -> CRule {
    let mut vars = Vec::new();
    let head = pat(&r.head, &mut model.pool, &mut vars);
    let mut pos = Vec::new();
    let mut neg = Vec::new();
    let mut exact_neg = Vec::new();
    let mut distinct = Vec::new();
    for l in &r.body {
        match l {
            Literal::Pos(t) => {
                let rel = model.rel(t.name().expect("atoms have names"), t.args().len());
                pos.push((rel, pat(t, &mut model.pool, &mut vars)));
            }
            Literal::Not(t) => {
                let rel = model.rel(t.name().expect("atoms have names"), t.args().len());
                neg.push((rel, pat(t, &mut model.pool, &mut vars)));
                // A static rule reads only static rules of earlier
                // components (the normal form's per-rule dependencies),
                // complete when it runs; other rules read static
                // relations complete.
                exact_neg.push(
                    phase == Phase::Static
                        || t.relation().is_some_and(|rel| {
                            rel.name != kw::TRUE
                                && rel.name != kw::DOES
                                && game.phase(rel) == Phase::Static
                        }),
                );
            }
            Literal::Distinct(a, b) => distinct.push((
                pat(a, &mut model.pool, &mut vars),
                pat(b, &mut model.pool, &mut vars),
            )),
            Literal::Or(_) | Literal::And(_) | Literal::Equal(..) => {
                unreachable!("the normal form has no or/and/equal literals")
            }
        }
    }
    model.rel(
        r.head.name().expect("heads have names"),
        r.head.args().len(),
    );
    CRule::new(head, pos, neg, distinct, vars.len(), false, exact_neg)
}

/// The relaxation's rules: `true(X) :- init(X).  true(X) :- next(X).
/// does(R, M) :- legal(R, M).`
pub(super) fn relaxation_rules(model: &mut Model) -> Vec<CRule> {
    let x = Term::Var(kw::TRUE);
    let y = Term::Var(kw::DOES);
    let mut rules = Vec::new();
    for (head, body) in [
        (
            Term::Func(kw::TRUE, vec![x.clone()]),
            Term::Func(kw::INIT, vec![x.clone()]),
        ),
        (
            Term::Func(kw::TRUE, vec![x.clone()]),
            Term::Func(kw::NEXT, vec![x.clone()]),
        ),
        (
            Term::Func(kw::DOES, vec![x.clone(), y.clone()]),
            Term::Func(kw::LEGAL, vec![x.clone(), y.clone()]),
        ),
    ] {
        let mut vars = Vec::new();
        let rel = model.rel(body.name().expect("named"), body.args().len());
        model.rel(head.name().expect("named"), head.args().len());
        let head = pat(&head, &mut model.pool, &mut vars);
        let pos = vec![(rel, pat(&body, &mut model.pool, &mut vars))];
        rules.push(CRule::new(
            head,
            pos,
            Vec::new(),
            Vec::new(),
            vars.len(),
            true,
            Vec::new(),
        ));
    }
    rules
}

//! Splitting a join over fluents that hold one value each.
//!
//! sudoku's goal reads a row as nine fluents `(true (mark ?i 1 ?m1))` ...
//! `(true (mark ?i 9 ?m9))` and asks the static relation `(exactlyOne 1 ?m1
//! ... ?m9)` of all nine digits at once. A grounder, which does not know that a
//! cell holds one digit, instantiates the rule for every digit in every cell:
//! 9^9 bodies a row. When a proven invariant says that `mark` holds at most one
//! value per key (here the cell `?i ?j`), the join falls apart: `exactlyOne`,
//! unfolded to its definition, is a disjunction of conjunctions in which each
//! literal reads one digit (`(eq 1 ?m1)`, `(not (eq 1 ?m2))`, ...), and a
//! conjunction over distinct cells holds of the cells' unique values exactly
//! when each cell has a value satisfying its own part. [`split`] rewrites each
//! such rule into
//!
//! - a *part* rule per cell and disjunct: `(<= (p ?i) (true (mark ?i 2 ?m))
//!   (index ?m) (not (eq 1 ?m)))`,
//! - a rule per disjunct joining the parts of all cells (over the key variables
//!   only: `?i`, not the digits), and
//! - the original rule with the static literal replaced by the joined relation
//!   and each `(true (mark ?i k ?mk))` by `(has_mark ?i k)`, "the cell holds
//!   some value".
//!
//! The rewrite is exact in every state where the invariants hold (the caller
//! proves them for every reachable state), and rules it does not touch stay as
//! they are; relations nothing reads any more are dropped, so that a grounder
//! does not compute them.

use std::collections::{HashMap, HashSet};

use super::ast::{is_input_keyword, Description, Literal, Relation, Rule, Term};
use super::graph::{keep_reached, Phase};
use super::normal::Game;
use super::subst::{apply_lit, resolve, unify};
use super::symbol::{kw, Sym, Symbols};

/// A fluent that holds at most one value per key: `(mark ?i ?j ?m)` with key
/// positions {0, 1}. Only keys that leave one value position are used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unique {
    pub fluent: Relation,
    pub key: Vec<usize>,
}

impl Unique {
    /// As in a note: `one (mark K0 K1 _) per K`.
    pub fn describe(&self, symbols: &Symbols) -> String {
        let args: Vec<String> = (0..self.fluent.arity)
            .map(|i| {
                if self.key.contains(&i) {
                    format!("K{i}")
                } else {
                    "_".into()
                }
            })
            .collect();
        format!(
            "one ({} {}) per K",
            symbols.name(self.fluent.name),
            args.join(" ")
        )
    }
}

/// The most disjuncts the unfolding of one static literal may give.
const MAX_DISJUNCTS: usize = 256;
/// The most literals the unfolding may expand, for one static literal.
const MAX_UNFOLDS: usize = 4096;
/// How deep the unfolding follows static relations (a recursive one stops it).
const MAX_DEPTH: usize = 8;

/// The game with every rule that joins unique fluents through a static
/// relation split as above, and the relations whose rules were split; `None`
/// when no rule is.
pub fn split(game: &Game, unique: &[Unique]) -> Option<(Game, Vec<Relation>)> {
    let mut symbols = game.symbols.clone();
    let mut names = Names::default();
    let mut rules: Vec<Rule> = Vec::with_capacity(game.rules.len());
    let mut split_heads: Vec<Relation> = Vec::new();
    for rule in &game.rules {
        match split_rule(game, rule, unique, &mut symbols, &mut names) {
            Some(new) => {
                if let Some(rel) = rule.head.relation() {
                    if !split_heads.contains(&rel) {
                        split_heads.push(rel);
                    }
                }
                rules.extend(new);
            }
            None => rules.push(rule.clone()),
        }
    }
    if split_heads.is_empty() {
        return None;
    }
    rules.extend(names.has_rules);
    let rules = keep_reached(rules, &PLAY_AND_GOALS);
    let split = Game::new(Description {
        symbols,
        rules,
        source: game.source.clone(),
    })
    .ok()?;
    Some((split, split_heads))
}

/// The fresh names of one rewrite and the `has_*` rules made so far.
#[derive(Default)]
struct Names {
    count: usize,
    /// `has_f` per fluent relation and value position.
    has: HashMap<(Relation, usize), Sym>,
    has_rules: Vec<Rule>,
    /// Part relations by their rule, variables numbered (see [`Names::part`]).
    parts: HashMap<String, Sym>,
}

impl Names {
    fn fresh(&mut self, symbols: &mut Symbols, base: &str) -> Sym {
        self.count += 1;
        symbols.fresh(&format!("{base}_{}", self.count))
    }

    /// The atom of a part rule `(<= (p keys) body)`: a new relation, or the one
    /// made before for the same rule up to the names of its variables (the
    /// rows of sudoku ask the same cell about the same digit nine times).
    fn part(
        &mut self,
        symbols: &mut Symbols,
        base: &str,
        keys: Vec<Term>,
        body: Vec<Literal>,
        out: &mut Vec<Rule>,
    ) -> Term {
        let mut canon: HashMap<Sym, Term> = HashMap::new();
        let mut n = 0usize;
        let mut number = |v: Sym| {
            if let std::collections::hash_map::Entry::Vacant(e) = canon.entry(v) {
                // Ids no symbol table reaches, so no real name collides.
                e.insert(Term::Var(Sym(u32::MAX - n as u32)));
                n += 1;
            }
        };
        keys.iter().for_each(|k| k.for_each_var(&mut number));
        body.iter().for_each(|l| l.for_each_var(&mut number));
        let key = format!(
            "{:?}",
            (
                keys.iter().map(|k| resolve(k, &canon)).collect::<Vec<_>>(),
                body.iter()
                    .map(|l| apply_lit(l, &canon))
                    .collect::<Vec<_>>()
            )
        );
        let name = match self.parts.get(&key) {
            Some(name) => *name,
            None => {
                let name = self.fresh(symbols, &format!("{base}_part"));
                self.parts.insert(key, name);
                out.push(Rule {
                    head: atom(name, keys.clone()),
                    body,
                    pos: Default::default(),
                });
                name
            }
        };
        atom(name, keys)
    }

    fn var(&mut self, symbols: &mut Symbols) -> Term {
        self.count += 1;
        Term::Var(symbols.fresh(&format!("?split{}", self.count)))
    }
}

/// A value variable of a rule: the fluent literal that binds it.
#[derive(Clone)]
struct Source {
    /// The index of the `(true f)` literal in the rule's body.
    literal: usize,
    fluent: Term,
    value_pos: usize,
}

/// The rules replacing `rule`, or `None` to keep it.
fn split_rule(
    game: &Game,
    rule: &Rule,
    unique: &[Unique],
    symbols: &mut Symbols,
    names: &mut Names,
) -> Option<Vec<Rule>> {
    let mut sources = value_sources(rule, unique);
    if sources.len() < 2 {
        return None;
    }
    keep_splittable(game, rule, &mut sources);
    let calls = value_calls(rule, &sources);
    if !joins(rule, &calls, &sources) {
        return None;
    }
    rewrite_rule(game, rule, &sources, &calls, symbols, names)
}

/// Whether `t` calls a static relation (not an input keyword).
fn is_static_call(game: &Game, t: &Term) -> bool {
    t.relation().is_some_and(|r| {
        game.relations.get(&r) == Some(&Phase::Static) && !is_input_keyword(r.name)
    })
}

/// Drops the value variables read anywhere but their fluent literal and
/// static calls whose arguments are ground or value variables; dropping one
/// may disqualify the calls it is in, so repeats.
fn keep_splittable(game: &Game, rule: &Rule, sources: &mut HashMap<Sym, Source>) {
    loop {
        let before = sources.len();
        for (i, lit) in rule.body.iter().enumerate() {
            let mut vars = Vec::new();
            lit.for_each_var(&mut |v| vars.push(v));
            let is_source = sources.values().any(|s| s.literal == i);
            if is_source {
                // Key arguments must not read another value.
                let own: Vec<Sym> = sources
                    .iter()
                    .filter(|(_, s)| s.literal == i)
                    .map(|(v, _)| *v)
                    .collect();
                for v in vars.iter().filter(|v| !own.contains(v)) {
                    sources.remove(v);
                }
                continue;
            }
            let reads: Vec<Sym> = vars
                .iter()
                .copied()
                .filter(|v| sources.contains_key(v))
                .collect();
            if reads.is_empty() {
                continue;
            }
            let ok = match lit {
                Literal::Pos(t) if is_static_call(game, t) => t
                    .args()
                    .iter()
                    .all(|a| a.is_ground() || matches!(a, Term::Var(v) if sources.contains_key(v))),
                _ => false,
            };
            if !ok {
                for v in reads {
                    sources.remove(&v);
                }
            }
        }
        if sources.len() == before {
            break;
        }
    }
}

/// The body literals, other than the fluent literals themselves, that read a
/// value variable (indices).
fn value_calls(rule: &Rule, sources: &HashMap<Sym, Source>) -> Vec<usize> {
    rule.body
        .iter()
        .enumerate()
        .filter(|(i, l)| {
            let mut n = 0;
            l.for_each_var(&mut |v| n += usize::from(sources.contains_key(&v)));
            n > 0 && !sources.values().any(|s| s.literal == *i)
        })
        .map(|(i, _)| i)
        .collect()
}

/// Whether one of the `calls` joins two values or more.
fn joins(rule: &Rule, calls: &[usize], sources: &HashMap<Sym, Source>) -> bool {
    calls.iter().any(|&i| {
        let mut n = HashSet::new();
        rule.body[i].for_each_var(&mut |v| {
            if sources.contains_key(&v) {
                n.insert(v);
            }
        });
        n.len() >= 2
    })
}

/// The part and join rules of each call of `calls`, and `rule` reading the
/// joined relations and the `has_*` atoms instead; `None` when a call does
/// not split.
fn rewrite_rule(
    game: &Game,
    rule: &Rule,
    sources: &HashMap<Sym, Source>,
    calls: &[usize],
    symbols: &mut Symbols,
    names: &mut Names,
) -> Option<Vec<Rule>> {
    let head_name = symbols.name(rule.head.name()?).to_string();
    let context: Vec<Literal> = rule
        .body
        .iter()
        .filter(|l| match l {
            Literal::Pos(t) | Literal::Not(t) => is_static_call(game, t),
            Literal::Distinct(..) => true,
            _ => false,
        })
        .cloned()
        .collect();
    let split = RuleSplit {
        game,
        sources,
        context: &context,
        head_name: &head_name,
    };
    let mut out: Vec<Rule> = Vec::new();
    let mut body: Vec<Literal> = Vec::new();
    for (i, lit) in rule.body.iter().enumerate() {
        if calls.contains(&i) {
            let Literal::Pos(call) = lit else {
                return None;
            };
            let joined = split.split_call(call, symbols, names, &mut out)?;
            body.push(Literal::Pos(joined));
        } else if let Some((_, s)) = sources.iter().find(|(_, s)| s.literal == i) {
            body.push(Literal::Pos(has_atom(s, symbols, names)));
        } else {
            body.push(lit.clone());
        }
    }
    out.push(Rule {
        head: rule.head.clone(),
        body,
        pos: rule.pos,
    });
    for r in &mut out {
        r.pos = rule.pos;
    }
    Some(out)
}

/// The variables of `rule` bound by a `(true f)` literal at the one value
/// position a [`Unique`] leaves, each read once in that literal and not in the
/// head.
fn value_sources(rule: &Rule, unique: &[Unique]) -> HashMap<Sym, Source> {
    let mut head_vars = HashSet::new();
    rule.head.for_each_var(&mut |v| {
        head_vars.insert(v);
    });
    let mut found: HashMap<Sym, Source> = HashMap::new();
    let mut twice: HashSet<Sym> = HashSet::new();
    for (i, lit) in rule.body.iter().enumerate() {
        let Literal::Pos(t) = lit else { continue };
        if t.name() != Some(kw::TRUE) {
            continue;
        }
        let Some(fluent) = t.args().first() else {
            continue;
        };
        let Some(rel) = fluent.relation() else {
            continue;
        };
        for u in unique.iter().filter(|u| u.fluent == rel) {
            let values: Vec<usize> = (0..rel.arity).filter(|p| !u.key.contains(p)).collect();
            let [value_pos] = values[..] else { continue };
            let Term::Var(v) = fluent.args()[value_pos] else {
                continue;
            };
            let mut count = 0;
            fluent.for_each_var(&mut |w| count += usize::from(w == v));
            if count != 1 || head_vars.contains(&v) {
                continue;
            }
            if found.contains_key(&v) {
                twice.insert(v);
            }
            found.insert(
                v,
                Source {
                    literal: i,
                    fluent: fluent.clone(),
                    value_pos,
                },
            );
        }
    }
    let mut readers: HashMap<Sym, usize> = HashMap::new();
    for lit in &rule.body {
        if let Literal::Pos(t) | Literal::Not(t) = lit {
            if t.name() == Some(kw::TRUE) {
                let mut vs = HashSet::new();
                t.for_each_var(&mut |v| {
                    vs.insert(v);
                });
                for v in vs {
                    *readers.entry(v).or_default() += 1;
                }
            }
        }
    }
    // A fluent literal binds one value at most (two invariants over the same
    // fluent could each name a value of it).
    let mut per_literal: HashMap<usize, usize> = HashMap::new();
    for s in found.values() {
        *per_literal.entry(s.literal).or_default() += 1;
    }
    found.retain(|v, s| {
        !twice.contains(v) && readers.get(v) == Some(&1) && per_literal[&s.literal] == 1
    });
    found
}

/// `(has_f k1 ... kn)`: the fluent of `s` holds some value at its key.
fn has_atom(s: &Source, symbols: &mut Symbols, names: &mut Names) -> Term {
    let rel = s
        .fluent
        .relation()
        .expect("a fluent literal has a relation");
    let key_args: Vec<Term> = s
        .fluent
        .args()
        .iter()
        .enumerate()
        .filter(|(p, _)| *p != s.value_pos)
        .map(|(_, a)| a.clone())
        .collect();
    let name = match names.has.get(&(rel, s.value_pos)) {
        Some(n) => *n,
        None => {
            let base = format!("has_{}", symbols.name(rel.name));
            let name = names.fresh(symbols, &base);
            let vars: Vec<Term> = (0..rel.arity).map(|_| names.var(symbols)).collect();
            let key_vars: Vec<Term> = vars
                .iter()
                .enumerate()
                .filter(|(p, _)| *p != s.value_pos)
                .map(|(_, v)| v.clone())
                .collect();
            names.has_rules.push(Rule {
                head: atom(name, key_vars),
                body: vec![Literal::Pos(Term::Func(
                    kw::TRUE,
                    vec![Term::Func(rel.name, vars)],
                ))],
                pos: Default::default(),
            });
            names.has.insert((rel, s.value_pos), name);
            name
        }
    };
    atom(name, key_args)
}

fn atom(name: Sym, args: Vec<Term>) -> Term {
    if args.is_empty() {
        Term::Const(name)
    } else {
        Term::Func(name, args)
    }
}

/// One disjunct of an unfolded call: its literals and the bindings made.
#[derive(Clone)]
struct Disjunct {
    lits: Vec<(Literal, usize)>,
    subst: HashMap<Sym, Term>,
}

/// What the split calls of one rule share: the game, the sources of the
/// rule's value variables, its static literals (the context a join rule
/// keeps what it can of) and the name its new relations start with.
struct RuleSplit<'a> {
    game: &'a Game,
    sources: &'a HashMap<Sym, Source>,
    context: &'a [Literal],
    head_name: &'a str,
}

impl RuleSplit<'_> {
    /// Splits the static call `call` (its value variables in `self.sources`):
    /// pushes the part and join rules to `out` and returns the atom that
    /// replaces the call.
    fn split_call(
        &self,
        call: &Term,
        symbols: &mut Symbols,
        names: &mut Names,
        out: &mut Vec<Rule>,
    ) -> Option<Term> {
        let (game, sources, head_name) = (self.game, self.sources, self.head_name);
        let values: Vec<Sym> = {
            let mut vs = Vec::new();
            call.for_each_var(&mut |v| {
                if !vs.contains(&v) {
                    vs.push(v)
                }
            });
            vs
        };
        let disjuncts = unfold(game, call, &values, symbols, names)?;
        let key_vars = key_vars(&values, sources);
        // The rule's static literals over those keys only (sudoku's `(succ ?i
        // ?i2)` placing a box's cells) bound the join as they bound the rule.
        let context: Vec<Literal> = self
            .context
            .iter()
            .filter(|l| {
                let mut inside = true;
                l.for_each_var(&mut |v| inside &= key_vars.contains(&v));
                inside
            })
            .cloned()
            .collect();
        let joined_name = names.fresh(symbols, &format!("{head_name}_split"));
        let joined = atom(
            joined_name,
            key_vars.iter().map(|v| Term::Var(*v)).collect(),
        );
        let join = Join {
            sources,
            values: &values,
            key_vars: &key_vars,
            head_name,
        };
        for d in disjuncts {
            let mut join_body = join.body(&d, symbols, names, out)?;
            join_body.extend(context.iter().cloned());
            out.push(Rule {
                head: joined.clone(),
                body: join_body,
                pos: Default::default(),
            });
        }
        Some(joined)
    }
}

/// The join's arguments: the key variables of every value's fluent.
fn key_vars(values: &[Sym], sources: &HashMap<Sym, Source>) -> Vec<Sym> {
    let mut key_vars: Vec<Sym> = Vec::new();
    for v in values {
        let s = &sources[v];
        for (p, a) in s.fluent.args().iter().enumerate() {
            if p != s.value_pos {
                a.for_each_var(&mut |k| {
                    if !key_vars.contains(&k) {
                        key_vars.push(k)
                    }
                });
            }
        }
    }
    key_vars
}

/// What the join rules of one split call share.
struct Join<'a> {
    sources: &'a HashMap<Sym, Source>,
    /// The call's value variables, in the order of the call.
    values: &'a [Sym],
    key_vars: &'a [Sym],
    head_name: &'a str,
}

impl Join<'_> {
    /// The body of the join rule of one disjunct (the context aside): a part
    /// per value, pushed to `out` when new, then the literals that read no
    /// value; `None` when the disjunct does not split.
    fn body(
        &self,
        d: &Disjunct,
        symbols: &mut Symbols,
        names: &mut Names,
        out: &mut Vec<Rule>,
    ) -> Option<Vec<Literal>> {
        let lits: Vec<Literal> = d.lits.iter().map(|(l, _)| apply_lit(l, &d.subst)).collect();
        let images = self.images(&d.subst)?;
        let image_vars: HashMap<Sym, Sym> = images
            .iter()
            .filter_map(|(v, i)| match i {
                Term::Var(w) => Some((*w, *v)),
                _ => None,
            })
            .collect();
        let (mut part_of, common) = by_value(&lits, &image_vars)?;
        let mut join_body: Vec<Literal> = Vec::new();
        for v in self.values {
            let s = &self.sources[v];
            let mut fluent_args = s.fluent.args().to_vec();
            fluent_args[s.value_pos] = images[v].clone();
            let fluent = Term::Func(s.fluent.name()?, fluent_args);
            let part_keys: Vec<Term> = {
                let mut ks = Vec::new();
                fluent.for_each_var(&mut |k| {
                    if self.key_vars.contains(&k) && !ks.contains(&Term::Var(k)) {
                        ks.push(Term::Var(k))
                    }
                });
                ks
            };
            let mut part_body = vec![Literal::Pos(Term::Func(kw::TRUE, vec![fluent]))];
            part_body.extend(part_of.remove(v).unwrap_or_default());
            let part = names.part(symbols, self.head_name, part_keys, part_body, out);
            join_body.push(Literal::Pos(part));
        }
        join_body.extend(common);
        Some(join_body)
    }

    /// Each value's image under `subst`: a variable of its own, or a ground
    /// term; `None` otherwise.
    fn images(&self, subst: &HashMap<Sym, Term>) -> Option<HashMap<Sym, Term>> {
        let mut images: HashMap<Sym, Term> = HashMap::new();
        for v in self.values {
            let img = resolve(&Term::Var(*v), subst);
            match &img {
                Term::Var(w) if images.values().any(|i| i == &Term::Var(*w)) => return None,
                Term::Var(_) => {}
                t if t.is_ground() => {}
                _ => return None,
            }
            images.insert(*v, img);
        }
        Some(images)
    }
}

/// The literals of a disjunct that read one value each, by that value.
type Parts = HashMap<Sym, Vec<Literal>>;

/// Literals linked by shared variables form groups; each may read one value
/// at most (through `image_vars`, image to value). The groups' literals by the
/// value they read, and those that read none; `None` when a group reads two.
fn by_value(lits: &[Literal], image_vars: &HashMap<Sym, Sym>) -> Option<(Parts, Vec<Literal>)> {
    let mut part_of: HashMap<Sym, Vec<Literal>> = HashMap::new();
    let mut common: Vec<Literal> = Vec::new();
    for g in components(lits) {
        let mut owners = HashSet::new();
        for &i in &g {
            lits[i].for_each_var(&mut |w| {
                if let Some(v) = image_vars.get(&w) {
                    owners.insert(*v);
                }
            });
        }
        match owners.len() {
            0 => common.extend(g.iter().map(|&i| lits[i].clone())),
            1 => {
                let v = *owners.iter().next().expect("one owner");
                part_of
                    .entry(v)
                    .or_default()
                    .extend(g.iter().map(|&i| lits[i].clone()));
            }
            _ => return None,
        }
    }
    Some((part_of, common))
}

/// The disjunctive normal form of the static call `call` over its definition,
/// unfolded until every literal reads at most one of `values` (through the
/// bindings); `None` when that cannot be reached within the limits, or a
/// negative literal reads two values.
fn unfold(
    game: &Game,
    call: &Term,
    values: &[Sym],
    symbols: &mut Symbols,
    names: &mut Names,
) -> Option<Vec<Disjunct>> {
    let mut done: Vec<Disjunct> = Vec::new();
    let mut todo = vec![Disjunct {
        lits: vec![(Literal::Pos(call.clone()), 0)],
        subst: HashMap::new(),
    }];
    let mut unfolds = 0;
    while let Some(d) = todo.pop() {
        if done.len() + todo.len() > MAX_DISJUNCTS {
            return None;
        }
        // The value variables' images, to count what a literal reads.
        let images: HashSet<Sym> = values
            .iter()
            .flat_map(|v| resolve(&Term::Var(*v), &d.subst).vars())
            .collect();
        let reads = |l: &Literal| {
            let mut n = HashSet::new();
            apply_lit(l, &d.subst).for_each_var(&mut |w| {
                if images.contains(&w) {
                    n.insert(w);
                }
            });
            n.len()
        };
        let Some(at) = d.lits.iter().position(|(l, _)| reads(l) >= 2) else {
            done.push(d);
            continue;
        };
        let (lit, depth) = d.lits[at].clone();
        let Literal::Pos(t) = apply_lit(&lit, &d.subst) else {
            return None;
        };
        let rel = t.relation()?;
        if depth >= MAX_DEPTH
            || game.relations.get(&rel) != Some(&Phase::Static)
            || is_input_keyword(rel.name)
        {
            return None;
        }
        for rule in game.rules.iter().filter(|r| r.head.relation() == Some(rel)) {
            unfolds += 1;
            if unfolds > MAX_UNFOLDS {
                return None;
            }
            let rule = rename(rule, symbols, names);
            let mut subst = d.subst.clone();
            if !unify(&t, &rule.head, &mut subst) {
                continue;
            }
            let mut lits = d.lits.clone();
            lits.remove(at);
            lits.extend(rule.body.into_iter().map(|l| (l, depth + 1)));
            todo.push(Disjunct { lits, subst });
        }
    }
    Some(done)
}

/// `rule` with fresh variables.
fn rename(rule: &Rule, symbols: &mut Symbols, names: &mut Names) -> Rule {
    let mut map: HashMap<Sym, Term> = HashMap::new();
    for v in rule.vars() {
        map.insert(v, names.var(symbols));
    }
    Rule {
        head: resolve(&rule.head, &map),
        body: rule.body.iter().map(|l| apply_lit(l, &map)).collect(),
        pos: rule.pos,
    }
}

/// The groups of `lits` linked by shared variables (indices).
fn components(lits: &[Literal]) -> Vec<Vec<usize>> {
    let mut parent: Vec<usize> = (0..lits.len()).collect();
    fn find(p: &mut [usize], i: usize) -> usize {
        let mut i = i;
        while p[i] != i {
            p[i] = p[p[i]];
            i = p[i];
        }
        i
    }
    let mut first: HashMap<Sym, usize> = HashMap::new();
    for (i, l) in lits.iter().enumerate() {
        let mut vars = Vec::new();
        l.for_each_var(&mut |v| vars.push(v));
        for v in vars {
            match first.get(&v) {
                Some(&j) => {
                    let (a, b) = (find(&mut parent, i), find(&mut parent, j));
                    parent[a] = b;
                }
                None => {
                    first.insert(v, i);
                }
            }
        }
    }
    let mut groups: HashMap<usize, Vec<usize>> = HashMap::new();
    for i in 0..lits.len() {
        let r = find(&mut parent, i);
        groups.entry(r).or_default().push(i);
    }
    let mut out: Vec<Vec<usize>> = groups.into_values().collect();
    out.sort();
    out
}

/// The keyword relations every engine reads.
const PLAY_AND_GOALS: [Sym; 8] = [
    kw::ROLE,
    kw::INIT,
    kw::LEGAL,
    kw::NEXT,
    kw::GOAL,
    kw::TERMINAL,
    kw::BASE,
    kw::INPUT,
];

#[cfg(test)]
pub(crate) mod tests;

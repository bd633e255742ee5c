//! The test instruments of the fingerprint (and of the benchmarks that use
//! it): [`scramble`] makes the copy of a game a manager may send, and
//! [`canonical_rules`] compares two games' rules as text, with code that
//! shares nothing with the matcher of [`super::find_mapping`].

use std::collections::HashMap;

use crate::gdl::ast::{Description, Literal, Rule, Term};
use crate::gdl::symbol::{Sym, Symbols};

use super::{fixed_text, SymbolMap};

/// SplitMix64: a seeded generator whose sequence no crate upgrade can change,
/// so a scrambled copy made from a seed is the same everywhere.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            items.swap(i, self.below(i + 1));
        }
    }

    /// A lower-case name of `len` letters after `prefix`.
    fn name(&mut self, prefix: &str, len: usize) -> String {
        let mut s = prefix.to_string();
        for _ in 0..len {
            s.push((b'a' + self.below(26) as u8) as char);
        }
        s
    }
}

/// A scrambled copy of a game, as a game manager may send it: every renamable
/// symbol (all but keywords and integers) renamed to a random fresh name,
/// variables renamed, the rules, each body and each `or`/`and` list shuffled.
/// The same seed gives the same copy on every machine. A test instrument (and
/// a benchmark's): [`fingerprint`] must not see the difference, and
/// [`find_mapping`] must find the way back.
pub fn scramble(desc: &Description, seed: u64) -> Description {
    let mut rng = SplitMix(seed ^ 0x5c4a_3b1e_d00d_f00d);
    let mut symbols = Symbols::with_keywords();
    let mut names: HashMap<Sym, Sym> = HashMap::new();
    let mut rules = desc.rules.clone();
    rng.shuffle(&mut rules);
    let mut s = Scrambler {
        from: &desc.symbols,
        symbols: &mut symbols,
        names: &mut names,
        vars: HashMap::new(),
        rng: &mut rng,
    };
    let rules = rules
        .iter()
        .map(|r| {
            s.vars.clear();
            let head = s.term(&r.head);
            let mut body: Vec<Literal> = r.body.iter().map(|l| s.literal(l)).collect();
            s.rng.shuffle(&mut body);
            Rule {
                head,
                body,
                pos: r.pos,
            }
        })
        .collect();
    Description {
        symbols,
        rules,
        source: format!("{} (scrambled, seed {seed})", desc.source),
    }
}

struct Scrambler<'s> {
    from: &'s Symbols,
    symbols: &'s mut Symbols,
    names: &'s mut HashMap<Sym, Sym>,
    vars: HashMap<Sym, Sym>,
    rng: &'s mut SplitMix,
}

impl Scrambler<'_> {
    /// A name no symbol of the new table has yet.
    fn fresh(&mut self, prefix: &str) -> Sym {
        loop {
            let name = self.rng.name(prefix, 8);
            if self.symbols.get(&name).is_none() {
                return self.symbols.intern(&name);
            }
        }
    }

    fn sym(&mut self, s: Sym) -> Sym {
        if let Some(&t) = self.names.get(&s) {
            return t;
        }
        let t = match fixed_text(self.from, s) {
            Some(_) => self.symbols.intern(self.from.name(s)),
            None => self.fresh("s"),
        };
        self.names.insert(s, t);
        t
    }

    fn term(&mut self, t: &Term) -> Term {
        match t {
            Term::Var(v) => {
                if let Some(&w) = self.vars.get(v) {
                    return Term::Var(w);
                }
                let w = self.fresh("?v");
                self.vars.insert(*v, w);
                Term::Var(w)
            }
            Term::Const(s) => Term::Const(self.sym(*s)),
            Term::Func(f, args) => {
                let f = self.sym(*f);
                Term::Func(f, args.iter().map(|a| self.term(a)).collect())
            }
        }
    }

    fn literal(&mut self, l: &Literal) -> Literal {
        match l {
            Literal::Pos(t) => Literal::Pos(self.term(t)),
            Literal::Not(t) => Literal::Not(self.term(t)),
            Literal::Distinct(a, b) => Literal::Distinct(self.term(a), self.term(b)),
            Literal::Equal(a, b) => Literal::Equal(self.term(a), self.term(b)),
            Literal::Or(ls) | Literal::And(ls) => {
                let mut ls: Vec<Literal> = ls.iter().map(|l| self.literal(l)).collect();
                self.rng.shuffle(&mut ls);
                if matches!(l, Literal::Or(_)) {
                    Literal::Or(ls)
                } else {
                    Literal::And(ls)
                }
            }
        }
    }
}

/// The rules as a sorted list of strings, each with its variables blanked
/// and its body and `or`/`and` members sorted, in lower case; with a map,
/// translated first and printed with the target's symbols (every symbol of
/// `d` must be mapped). Equal lists for two games say the map takes one's
/// rules to the other's, but for variable identities, which the matcher
/// inside [`super::find_mapping`] checks. A test instrument: a check of a map
/// that shares no code with the matcher.
pub fn canonical_rules(d: &Description, map: Option<(&SymbolMap, &Symbols)>) -> Vec<String> {
    let name = |s: Sym| match map {
        Some((m, to)) => to
            .name(m.get(s).expect("every symbol is mapped"))
            .to_string(),
        None => d.symbols.name(s).to_string(),
    };
    let mut rules: Vec<String> = d
        .rules
        .iter()
        .map(|r| {
            let mut body: Vec<String> = r.body.iter().map(|l| literal_text(l, &name)).collect();
            body.sort();
            let head = term_text(&r.head, &name);
            format!("{head} <= {}", body.join(" ")).to_lowercase()
        })
        .collect();
    rules.sort();
    rules
}

fn term_text(x: &Term, name: &dyn Fn(Sym) -> String) -> String {
    match x {
        Term::Var(_) => "?".into(),
        Term::Const(s) => name(*s),
        Term::Func(f, args) => {
            let args: Vec<String> = args.iter().map(|a| term_text(a, name)).collect();
            format!("({} {})", name(*f), args.join(" "))
        }
    }
}

fn literal_text(x: &Literal, name: &dyn Fn(Sym) -> String) -> String {
    match x {
        Literal::Pos(a) => term_text(a, name),
        Literal::Not(a) => format!("(not {})", term_text(a, name)),
        Literal::Distinct(a, b) => {
            format!("(distinct {} {})", term_text(a, name), term_text(b, name))
        }
        Literal::Equal(a, b) => format!("(= {} {})", term_text(a, name), term_text(b, name)),
        Literal::Or(ls) | Literal::And(ls) => {
            let mut ls: Vec<String> = ls.iter().map(|l| literal_text(l, name)).collect();
            ls.sort();
            let op = if matches!(x, Literal::Or(_)) {
                "or"
            } else {
                "and"
            };
            format!("({op} {})", ls.join(" "))
        }
    }
}

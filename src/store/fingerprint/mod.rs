//! A game's identity up to renaming. Game managers scramble every symbol of a
//! game but the GDL keywords and the integers (as ggp-base's scrambler does),
//! and may reorder the rules, the literals of a body and the alternatives of an
//! `or`; variable names are arbitrary. This module owns
//! - [`fingerprint`]: a stable 128-bit [`Fingerprint`], equal for a game and
//!   every such copy of it, stored on disk to find a solved game again;
//! - [`find_mapping`]: the explicit [`SymbolMap`] from a stored game's symbols
//!   to a new copy's, checked rule by rule, so that a stored plan's moves can
//!   be played in the new game;
//! - [`scramble`] (scramble.rs): the test instruments, which make such copies
//!   and compare rules as text with code of their own.
//!
//! An equal fingerprint is a candidate, not a proof: colour refinement cannot
//! tell some different rule sets apart (one hexagon of `edge` facts and two
//! triangles colour alike), so a store keeps every game under its fingerprint
//! and asks [`find_mapping`], which checks rule by rule, which one it is.
//!
//! Both rest on colour refinement (Weisfeiler-Lehman) over a flat copy of the
//! rules: a symbol starts from what renaming keeps (a keyword or number by its
//! text, any other symbol just "renamable"), a term's, literal's and rule's
//! colour is computed bottom-up from the colours of its symbols and variables,
//! and a symbol's or variable's next colour adds the multiset of the places it
//! occurs at (the chain of colours from its rule down to it). Rounds repeat
//! until no class of symbols or variables splits. Everything is computed from
//! colours alone, never from symbol ids, names or rule order, so the result
//! cannot depend on them.
//!
//! The fingerprint is taken from the parsed [`Description`], not from the
//! normal form [`crate::gdl::Game`]: building a `Game` makes fresh symbols (the
//! variables that make rules safe, `?x`, `?x_`, ...) whose names depend on the
//! symbols already in the table, and it expands `or`, so the same game written
//! two ways could come out differently. The description is exactly what the
//! manager sent, and the `Game` built from it keeps its symbols' ids, so moves
//! read with either table translate the same.

mod scramble;
mod search;
#[cfg(test)]
mod tests;

pub use scramble::{canonical_rules, scramble};
use search::Search;

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

use crate::gdl::ast::{Description, Literal, Rule, Term};
use crate::gdl::symbol::{kw, Sym, Symbols};

/// A game's identity up to renaming: 128 bits, shown as 32 lowercase hex
/// digits. Stored on disk, so the colour hash, the byte encoding and the tag in
/// [`fingerprint`] are a file format: changing any of them changes every
/// fingerprint (bump the tag then).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct Fingerprint(pub u128);

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:032x}", self.0)
    }
}

impl FromStr for Fingerprint {
    type Err = String;

    /// Exactly 32 hex digits (either case), as [`Fingerprint`] displays.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.len() != 32 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(format!("a fingerprint is 32 hex digits, not {s:?}"));
        }
        u128::from_str_radix(s, 16)
            .map(Fingerprint)
            .map_err(|e| format!("bad fingerprint {s:?}: {e}"))
    }
}

/// The fingerprint of a game: equal for any copy with its renamable symbols
/// consistently renamed, its rules, bodies and `or` alternatives reordered and
/// its variables renamed; different (but for a hash collision, or rule sets
/// colour refinement cannot tell apart) for anything else, a duplicated rule
/// included. [`find_mapping`] confirms a match.
pub fn fingerprint(desc: &Description) -> Fingerprint {
    let flat = Flat::new(desc);
    let mut colours = flat.initial();
    let mut nodes = Vec::new();
    let mut scratch = Scratch::default();
    let mut work = 0;
    flat.refine(&mut colours, &mut nodes, &mut scratch, &mut work, u64::MAX);
    let (rules, syms, _) = flat.invariants(&colours, &nodes);

    // FNV-1a 128 over a canonical byte encoding: small, stable, written here
    // so that no crate's or Rust version's hasher can change stored values.
    let mut h = Fnv128::new();
    h.bytes(b"ggp-asp fingerprint 1\0");
    for part in [&rules, &syms] {
        h.bytes(&(part.len() as u64).to_le_bytes());
        for c in part {
            h.bytes(&c.to_le_bytes());
        }
    }
    Fingerprint(h.0)
}

/// How much refinement [`find_mapping`] may spend, in nodes coloured (one
/// round over a game colours each of its nodes once): about a second.
const WORK_BUDGET: u64 = 40_000_000;
/// How many matching steps the rule-by-rule check may take in all.
const MATCH_BUDGET: u64 = 2_000_000;

/// A bijection of the renamable symbols under which `stored`'s rules become
/// exactly `new`'s, as a multiset (each rule up to variable renaming, the order
/// of its body and of `or` alternatives); keywords map to themselves and
/// numbers to the same number. `None` when there is none, or when the search
/// runs out of its budget (highly symmetric rules that colours cannot split):
/// it never hangs, and a map it returns has been checked rule by rule.
///
/// Candidates come from equal colours. Where colours leave a tie (symmetric
/// constants), one symbol is individualised, paired in turn with each
/// candidate, and refinement runs again, backtracking on a mismatch.
pub fn find_mapping(stored: &Description, new: &Description) -> Option<SymbolMap> {
    let a = Flat::new(stored);
    let b = Flat::new(new);
    if a.nodes.len() != b.nodes.len()
        || a.roots.len() != b.roots.len()
        || a.syms.len() != b.syms.len()
        || a.nvars != b.nvars
    {
        return None;
    }
    // Keywords and numbers: the same text in both, or no map.
    let texts: HashMap<&str, u32> = b
        .fixed
        .iter()
        .enumerate()
        .filter_map(|(i, t)| t.as_deref().map(|t| (t, i as u32)))
        .collect();
    let mut fixed = vec![NONE; a.syms.len()];
    for (i, t) in a.fixed.iter().enumerate() {
        if let Some(t) = t {
            fixed[i] = *texts.get(t.as_str())?;
        }
    }
    let map = Search::new(&a, &b, fixed).run(a.initial(), b.initial())?;
    Some(SymbolMap {
        map: map
            .iter()
            .enumerate()
            .map(|(i, &j)| (a.syms[i], b.syms[j as usize]))
            .collect(),
    })
}

/// A map from one game's symbols to another's (see [`find_mapping`]): every
/// keyword, number and renamable symbol of the first game's rules, to its
/// counterpart. Variables are not in it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SymbolMap {
    map: HashMap<Sym, Sym>,
}

impl SymbolMap {
    /// The counterpart of a symbol of the stored game.
    pub fn get(&self, s: Sym) -> Option<Sym> {
        self.map.get(&s).copied()
    }

    /// A ground term of the stored game (a move such as `(move 1 2)`, read
    /// with the stored game's symbols) in the new game's symbols; print it with
    /// the new game's table. `None` for a variable or a symbol the stored
    /// game's rules do not use (no move of the game can hold one).
    pub fn term(&self, t: &Term) -> Option<Term> {
        Some(match t {
            Term::Var(_) => return None,
            Term::Const(s) => Term::Const(self.get(*s)?),
            Term::Func(f, args) => Term::Func(
                self.get(*f)?,
                args.iter().map(|a| self.term(a)).collect::<Option<_>>()?,
            ),
        })
    }

    /// A plan of the stored game (its moves in order) in the new game's
    /// symbols, or `None` if a move does not translate (see [`Self::term`]).
    pub fn plan(&self, moves: &[Term]) -> Option<Vec<Term>> {
        moves.iter().map(|m| self.term(m)).collect()
    }

    /// The pairs (stored symbol, new symbol), in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (Sym, Sym)> + '_ {
        self.map.iter().map(|(a, b)| (*a, *b))
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

/// True for the symbols a scrambler leaves alone: the keywords (interned at
/// their fixed ids in every table) and integers, as ggp-base's scrambler reads
/// them (Java's `Integer.parseInt`: an optional sign, digits, 32 bits).
fn fixed_text(symbols: &Symbols, s: Sym) -> Option<String> {
    if (s.0 as usize) < kw::NAMES.len() {
        return Some(kw::NAMES[s.0 as usize].to_string());
    }
    let text = symbols.name(s);
    text.parse::<i32>().is_ok().then(|| text.to_string())
}

// ---------------------------------------------------------------------------
// The flat copy of a description that colours are computed on.

const NONE: u32 = u32::MAX;
/// The edge label of a child whose place among its siblings means nothing
/// (body literals, `or` and `and` alternatives).
const UNORDERED: u32 = u32::MAX;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Rule,
    Pos,
    Not,
    Distinct,
    Equal,
    Or,
    And,
    Const,
    Func,
    Var,
}

/// One node: a rule, a literal or a term occurrence. `label` is the local
/// symbol index of a constant or function, the rule-local variable's global
/// index of a variable; children are `kids[first..first + len]`.
#[derive(Clone, Copy, Debug)]
struct Node {
    kind: Kind,
    label: u32,
    parent: u32,
    edge: u32,
    first: u32,
    len: u32,
}

/// Every rule as nodes in pre-order (a parent before its children, so colours
/// are computed backwards and contexts forwards), with the game's non-variable
/// symbols numbered locally.
#[derive(Default)]
struct Flat {
    nodes: Vec<Node>,
    kids: Vec<u32>,
    roots: Vec<u32>,
    /// Local symbol index -> the description's symbol.
    syms: Vec<Sym>,
    /// The text of a keyword or number, `None` for a renamable symbol.
    fixed: Vec<Option<String>>,
    /// Variables, each rule's numbered apart.
    nvars: usize,
}

struct Builder<'d> {
    flat: Flat,
    symbols: &'d Symbols,
    local: HashMap<Sym, u32>,
    vars: HashMap<Sym, u32>,
}

impl Builder<'_> {
    fn push(&mut self, kind: Kind, label: u32, parent: u32, edge: u32) -> u32 {
        let i = self.flat.nodes.len() as u32;
        self.flat.nodes.push(Node {
            kind,
            label,
            parent,
            edge,
            first: 0,
            len: 0,
        });
        i
    }

    fn set_kids(&mut self, node: u32, kids: &[u32]) {
        let n = &mut self.flat.nodes[node as usize];
        n.first = self.flat.kids.len() as u32;
        n.len = kids.len() as u32;
        self.flat.kids.extend_from_slice(kids);
    }

    fn sym(&mut self, s: Sym) -> u32 {
        if let Some(&i) = self.local.get(&s) {
            return i;
        }
        let i = self.flat.syms.len() as u32;
        self.flat.syms.push(s);
        self.flat.fixed.push(fixed_text(self.symbols, s));
        self.local.insert(s, i);
        i
    }

    fn rule(&mut self, r: &Rule) {
        self.vars.clear();
        let root = self.push(Kind::Rule, 0, NONE, 0);
        self.flat.roots.push(root);
        let mut kids = vec![self.term(&r.head, root, 0)];
        for l in &r.body {
            kids.push(self.literal(l, root, UNORDERED));
        }
        self.set_kids(root, &kids);
    }

    fn literal(&mut self, l: &Literal, parent: u32, edge: u32) -> u32 {
        let (kind, terms, lits): (_, Vec<&Term>, &[Literal]) = match l {
            Literal::Pos(t) => (Kind::Pos, vec![t], &[]),
            Literal::Not(t) => (Kind::Not, vec![t], &[]),
            Literal::Distinct(a, b) => (Kind::Distinct, vec![a, b], &[]),
            Literal::Equal(a, b) => (Kind::Equal, vec![a, b], &[]),
            Literal::Or(ls) => (Kind::Or, vec![], ls),
            Literal::And(ls) => (Kind::And, vec![], ls),
        };
        let node = self.push(kind, 0, parent, edge);
        let mut kids = Vec::new();
        for (i, t) in terms.into_iter().enumerate() {
            kids.push(self.term(t, node, i as u32));
        }
        for l in lits {
            kids.push(self.literal(l, node, UNORDERED));
        }
        self.set_kids(node, &kids);
        node
    }

    fn term(&mut self, t: &Term, parent: u32, edge: u32) -> u32 {
        match t {
            Term::Var(v) => {
                let next = self.flat.nvars as u32;
                let label = *self.vars.entry(*v).or_insert(next);
                if label == next {
                    self.flat.nvars += 1;
                }
                self.push(Kind::Var, label, parent, edge)
            }
            Term::Const(s) => {
                let label = self.sym(*s);
                self.push(Kind::Const, label, parent, edge)
            }
            Term::Func(f, args) => {
                let label = self.sym(*f);
                let node = self.push(Kind::Func, label, parent, edge);
                let kids: Vec<u32> = args
                    .iter()
                    .enumerate()
                    .map(|(i, a)| self.term(a, node, i as u32))
                    .collect();
                self.set_kids(node, &kids);
                node
            }
        }
    }
}

/// The colours refinement works on: one per local symbol, one per variable.
#[derive(Clone)]
struct Colours {
    sym: Vec<u64>,
    var: Vec<u64>,
}

/// Buffers one round reuses.
#[derive(Default)]
struct Scratch {
    ctx: Vec<u64>,
    sorted: Vec<u64>,
    occ: Vec<(u32, u64)>,
    occ_var: Vec<(u32, u64)>,
}

// Tags that keep the kinds of things hashed apart.
const T_SYM: u64 = 0x51;
const T_FIXED: u64 = 0x52;
const T_VAR: u64 = 0x53;
const T_OCC: u64 = 0x54;
const T_INDIVIDUAL: u64 = 0x55;

impl Kind {
    fn tag(self) -> u64 {
        0x100 + self as u64
    }
}

impl Flat {
    fn new(desc: &Description) -> Flat {
        let mut b = Builder {
            flat: Flat::default(),
            symbols: &desc.symbols,
            local: HashMap::new(),
            vars: HashMap::new(),
        };
        for r in &desc.rules {
            b.rule(r);
        }
        b.flat
    }

    fn kids(&self, n: &Node) -> &[u32] {
        &self.kids[n.first as usize..(n.first + n.len) as usize]
    }

    fn initial(&self) -> Colours {
        let sym = self
            .fixed
            .iter()
            .map(|t| match t {
                Some(text) => text
                    .bytes()
                    .fold(mix(T_FIXED, text.len() as u64), |h, b| mix(h, b as u64)),
                None => mix(T_SYM, 0),
            })
            .collect();
        Colours {
            sym,
            var: vec![mix(T_VAR, 0); self.nvars],
        }
    }

    /// Every node's colour from the symbols' and variables' colours.
    fn node_colours(&self, c: &Colours, out: &mut Vec<u64>, sorted: &mut Vec<u64>) {
        out.clear();
        out.resize(self.nodes.len(), 0);
        for i in (0..self.nodes.len()).rev() {
            let n = &self.nodes[i];
            let kids = self.kids(n);
            let mut h = mix(n.kind.tag(), n.len as u64);
            h = match n.kind {
                Kind::Var => mix(h, c.var[n.label as usize]),
                Kind::Const | Kind::Func => {
                    let h = mix(h, c.sym[n.label as usize]);
                    kids.iter().fold(h, |h, &k| mix(h, out[k as usize]))
                }
                Kind::Pos | Kind::Not | Kind::Distinct | Kind::Equal => {
                    kids.iter().fold(h, |h, &k| mix(h, out[k as usize]))
                }
                Kind::Or | Kind::And | Kind::Rule => {
                    // The head (a rule's first child) keeps its place; the rest
                    // are a multiset.
                    let skip = usize::from(n.kind == Kind::Rule);
                    let h = kids[..skip].iter().fold(h, |h, &k| mix(h, out[k as usize]));
                    sorted.clear();
                    sorted.extend(kids[skip..].iter().map(|&k| out[k as usize]));
                    sorted.sort_unstable();
                    sorted.iter().fold(h, |h, &x| mix(h, x))
                }
            };
            out[i] = h;
        }
    }

    /// The next colours: each symbol and variable with the multiset of the
    /// contexts it occurs in (the colours from its rule down to the
    /// occurrence, with the argument positions on the way).
    fn next_colours(&self, c: &Colours, nodes: &[u64], s: &mut Scratch) -> Colours {
        s.ctx.clear();
        s.occ.clear();
        s.occ_var.clear();
        for (i, n) in self.nodes.iter().enumerate() {
            let ctx = if n.parent == NONE {
                nodes[i]
            } else {
                mix(mix(s.ctx[n.parent as usize], n.edge as u64), nodes[i])
            };
            s.ctx.push(ctx);
            match n.kind {
                Kind::Var => s.occ_var.push((n.label, ctx)),
                Kind::Const | Kind::Func if self.fixed[n.label as usize].is_none() => {
                    s.occ.push((n.label, ctx))
                }
                _ => {}
            }
        }
        let mut next = c.clone();
        for (occ, colours) in [(&mut s.occ, &mut next.sym), (&mut s.occ_var, &mut next.var)] {
            occ.sort_unstable();
            for group in occ.chunk_by(|x, y| x.0 == y.0) {
                let i = group[0].0 as usize;
                let h = mix(mix(colours[i], T_OCC), group.len() as u64);
                colours[i] = group.iter().fold(h, |h, &(_, x)| mix(h, x));
            }
        }
        next
    }

    /// How many classes the renamable symbols and the variables fall into.
    fn classes(&self, c: &Colours, sorted: &mut Vec<u64>) -> usize {
        sorted.clear();
        sorted.extend(self.renamable().map(|i| c.sym[i]));
        sorted.sort_unstable();
        sorted.dedup();
        let syms = sorted.len();
        sorted.clear();
        sorted.extend_from_slice(&c.var);
        sorted.sort_unstable();
        sorted.dedup();
        syms + sorted.len()
    }

    fn renamable(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.syms.len()).filter(|&i| self.fixed[i].is_none())
    }

    /// Refines `c` until no class splits, leaving in `nodes` the node colours
    /// of the final `c`. Each round adds the node count to `work`; false when
    /// that passed `limit` first. The number of classes grows every round but
    /// the last, so there are at most as many rounds as symbols and variables.
    fn refine(
        &self,
        c: &mut Colours,
        nodes: &mut Vec<u64>,
        s: &mut Scratch,
        work: &mut u64,
        limit: u64,
    ) -> bool {
        let mut classes = self.classes(c, &mut s.sorted);
        for _ in 0..self.syms.len() + self.nvars + 2 {
            self.node_colours(c, nodes, &mut s.sorted);
            *work += self.nodes.len() as u64;
            let next = self.next_colours(c, nodes, s);
            let more = self.classes(&next, &mut s.sorted);
            if more <= classes {
                return true;
            }
            if *work > limit {
                return false;
            }
            *c = next;
            classes = more;
        }
        self.node_colours(c, nodes, &mut s.sorted);
        true
    }

    /// The sorted multisets of rule, renamable symbol and variable colours.
    fn invariants(&self, c: &Colours, nodes: &[u64]) -> (Vec<u64>, Vec<u64>, Vec<u64>) {
        let mut rules: Vec<u64> = self.roots.iter().map(|&r| nodes[r as usize]).collect();
        let mut syms: Vec<u64> = self.renamable().map(|i| c.sym[i]).collect();
        let mut vars = c.var.clone();
        rules.sort_unstable();
        syms.sort_unstable();
        vars.sort_unstable();
        (rules, syms, vars)
    }
}

// ---------------------------------------------------------------------------
// Hashing: small, stable, written here.

/// One word into a running 64-bit colour: a rotation, an xor and the
/// SplitMix64 finaliser (a bijection of the word for a given state).
#[inline]
fn mix(h: u64, x: u64) -> u64 {
    let mut z = (h.rotate_left(23) ^ x).wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// FNV-1a, 128 bits.
struct Fnv128(u128);

impl Fnv128 {
    fn new() -> Self {
        Fnv128(0x6c62_272e_07bb_0142_62b8_2175_6295_c58d)
    }

    fn bytes(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= b as u128;
            self.0 = self
                .0
                .wrapping_mul(0x0000_0000_0100_0000_0000_0000_0000_013b);
        }
    }
}

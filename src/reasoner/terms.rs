//! Hash-consed ground terms: every distinct ground term gets one `TermId`, so
//! comparing terms is comparing integers and a tuple of terms is a slice of ids.
//! A zero-argument function term `(f)` is a term of its own, not the constant
//! `f` (as in ggp-base): a game may use both, and a move goes back to the game
//! manager spelled as the game spells it.

use hashbrown::HashTable;
use std::hash::{BuildHasher, Hash, Hasher};

use crate::gdl::{Sym, Term};

pub type TermId = u32;

/// The argument count recorded for a zero-argument function term `(f)`.
const FUNC0: u32 = u32::MAX;

fn arity(len: u32) -> u32 {
    if len == FUNC0 {
        0
    } else {
        len
    }
}

/// The table's 64-bit hash from the 32 stored: hashbrown takes the bucket
/// from the low bits and a tag from the top seven, and the multiply puts the
/// stored bits in both.
#[inline]
fn spread(h: u32) -> u64 {
    (h as u64 | ((h as u64) << 32)).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// The pool of ground terms.
#[derive(Clone, Default)]
pub struct TermPool {
    /// For each term: its functor and the range of its arguments in `args`
    /// (the length [`FUNC0`] for `(f)`).
    nodes: Vec<(Sym, u32, u32)>,
    args: Vec<TermId>,
    /// Each term's id with 32 bits of its hash: growing the table then
    /// rehashes from the entries alone instead of rereading and rehashing
    /// every term (a fifth of a big grounding's time before).
    table: HashTable<(TermId, u32)>,
    hasher: hashbrown::DefaultHashBuilder,
}

impl TermPool {
    pub fn new() -> Self {
        TermPool {
            nodes: Vec::new(),
            args: Vec::new(),
            table: HashTable::new(),
            hasher: hashbrown::DefaultHashBuilder::default(),
        }
    }

    /// 32 bits of the term's hash: what the table stores.
    fn hash_of(&self, f: Sym, args: &[TermId], func0: bool) -> u32 {
        let mut h = self.hasher.build_hasher();
        f.hash(&mut h);
        args.hash(&mut h);
        func0.hash(&mut h);
        (h.finish() >> 32) as u32
    }

    /// The bytes the pool holds: its terms, their arguments and the table.
    pub fn bytes(&self) -> usize {
        self.nodes.capacity() * std::mem::size_of::<(Sym, u32, u32)>()
            + self.args.capacity() * std::mem::size_of::<TermId>()
            + self.table.capacity() * (std::mem::size_of::<(TermId, u32)>() + 1)
    }

    /// The id of `f(args)` if the term exists already.
    pub fn find(&self, f: Sym, args: &[TermId]) -> Option<TermId> {
        self.find_node(f, args, false)
    }

    fn find_node(&self, f: Sym, args: &[TermId], func0: bool) -> Option<TermId> {
        self.find_hashed(self.hash_of(f, args, func0), f, args, func0)
    }

    /// [`TermPool::find_node`] with the hash at hand (interning reuses it).
    fn find_hashed(&self, h: u32, f: Sym, args: &[TermId], func0: bool) -> Option<TermId> {
        let len = if func0 { FUNC0 } else { args.len() as u32 };
        self.table
            .find(spread(h), |&(id, hh)| {
                let (g, _, l) = self.nodes[id as usize];
                hh == h && g == f && l == len && self.args(id) == args
            })
            .map(|&(id, _)| id)
    }

    /// The id of `f(args)`, creating it when new. A constant has no arguments.
    pub fn intern(&mut self, f: Sym, args: &[TermId]) -> TermId {
        self.intern_node(f, args, false)
    }

    /// [`TermPool::intern`]; `func0` asks for the function term `(f)` rather
    /// than the constant `f` (`args` must then be empty).
    fn intern_node(&mut self, f: Sym, args: &[TermId], func0: bool) -> TermId {
        let h = self.hash_of(f, args, func0);
        if let Some(id) = self.find_hashed(h, f, args, func0) {
            return id;
        }
        let len = if func0 { FUNC0 } else { args.len() as u32 };
        let id = self.nodes.len() as TermId;
        self.nodes.push((f, self.args.len() as u32, len));
        self.args.extend_from_slice(args);
        self.table
            .insert_unique(spread(h), (id, h), |&(_, hh)| spread(hh));
        id
    }

    pub fn functor(&self, id: TermId) -> Sym {
        self.nodes[id as usize].0
    }

    pub fn args(&self, id: TermId) -> &[TermId] {
        let (_, s, l) = self.nodes[id as usize];
        &self.args[s as usize..(s + arity(l)) as usize]
    }

    /// Whether the term is a constant (`f`, not `(f)` nor `(f a)`).
    pub fn is_const(&self, id: TermId) -> bool {
        self.nodes[id as usize].2 == 0
    }

    /// Interns a ground AST term; `None` if it has a variable.
    pub fn from_term(&mut self, t: &Term) -> Option<TermId> {
        match t {
            Term::Var(_) => None,
            Term::Const(c) => Some(self.intern(*c, &[])),
            Term::Func(f, args) => {
                let ids = args
                    .iter()
                    .map(|a| self.from_term(a))
                    .collect::<Option<Vec<_>>>()?;
                Some(self.intern_node(*f, &ids, ids.is_empty()))
            }
        }
    }

    /// Looks a ground AST term up without creating it.
    pub fn find_term(&self, t: &Term) -> Option<TermId> {
        match t {
            Term::Var(_) => None,
            Term::Const(c) => self.find(*c, &[]),
            Term::Func(f, args) => {
                let ids = args
                    .iter()
                    .map(|a| self.find_term(a))
                    .collect::<Option<Vec<_>>>()?;
                self.find_node(*f, &ids, ids.is_empty())
            }
        }
    }

    pub fn to_term(&self, id: TermId) -> Term {
        let f = self.functor(id);
        if self.is_const(id) {
            Term::Const(f)
        } else {
            Term::Func(f, self.args(id).iter().map(|&a| self.to_term(a)).collect())
        }
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }
}

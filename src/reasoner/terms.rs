//! Hash-consed ground terms: every distinct ground term gets one `TermId`, so
//! comparing terms is comparing integers and a tuple of terms is a slice of ids.

use hashbrown::HashTable;
use std::hash::{BuildHasher, Hash, Hasher};

use crate::gdl::{Sym, Term};

pub type TermId = u32;

/// The pool of ground terms.
#[derive(Clone, Default)]
pub struct TermPool {
    /// For each term: its functor and the range of its arguments in `args`.
    nodes: Vec<(Sym, u32, u32)>,
    args: Vec<TermId>,
    table: HashTable<TermId>,
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

    fn hash_of(&self, f: Sym, args: &[TermId]) -> u64 {
        let mut h = self.hasher.build_hasher();
        f.hash(&mut h);
        args.hash(&mut h);
        h.finish()
    }

    /// The id of `f(args)` if the term exists already.
    pub fn find(&self, f: Sym, args: &[TermId]) -> Option<TermId> {
        let h = self.hash_of(f, args);
        self.table
            .find(h, |&id| self.functor(id) == f && self.args(id) == args)
            .copied()
    }

    /// The id of `f(args)`, creating it when new. A constant has no arguments.
    pub fn intern(&mut self, f: Sym, args: &[TermId]) -> TermId {
        let h = self.hash_of(f, args);
        let (nodes, all_args) = (&self.nodes, &self.args);
        if let Some(&id) = self.table.find(h, |&id| {
            let (g, s, l) = nodes[id as usize];
            g == f && &all_args[s as usize..(s + l) as usize] == args
        }) {
            return id;
        }
        let id = self.nodes.len() as TermId;
        self.nodes
            .push((f, self.args.len() as u32, args.len() as u32));
        self.args.extend_from_slice(args);
        let hasher = &self.hasher;
        let (nodes, all_args) = (&self.nodes, &self.args);
        self.table.insert_unique(h, id, |&id| {
            let (g, s, l) = nodes[id as usize];
            let mut hh = hasher.build_hasher();
            g.hash(&mut hh);
            all_args[s as usize..(s + l) as usize].hash(&mut hh);
            hh.finish()
        });
        id
    }

    pub fn functor(&self, id: TermId) -> Sym {
        self.nodes[id as usize].0
    }

    pub fn args(&self, id: TermId) -> &[TermId] {
        let (_, s, l) = self.nodes[id as usize];
        &self.args[s as usize..(s + l) as usize]
    }

    /// Whether the term was written as a function term (a constant has no list).
    /// Interned terms do not remember `(f)` versus `f`: GDL games never rely on it.
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
                Some(self.intern(*f, &ids))
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
                self.find(*f, &ids)
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

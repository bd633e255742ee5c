//! A relation's table: its rows as flattened tuples of term ids, a hash set
//! over them for deduplication, and indexes on parts of the rows, built on
//! demand and extended as the table grows. Rows are only ever appended, or cut
//! back to an earlier length when the prover moves to another state.

use hashbrown::HashTable;
use std::hash::BuildHasher;

use crate::gdl::Sym;
use crate::reasoner::terms::{TermId, TermPool};

/// One part of an index key: the value found at `argpos` and then down `steps`
/// (functor, arity, child) in a row's terms, or only a check that the term there
/// has a given functor and arity.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) struct KeyLeaf {
    pub(super) argpos: u16,
    pub(super) steps: Vec<(Sym, u16, u16)>,
    /// `None`: the leaf's value is part of the key; `Some(f, n)`: only a filter.
    pub(super) functor: Option<(Sym, u16)>,
}

pub(super) type KeySpec = Vec<KeyLeaf>;

/// The facts of one relation: flattened tuples, a set for deduplication, and
/// per-argument indexes built on demand.
#[derive(Clone)]
pub(super) struct Table {
    pub(super) arity: usize,
    pub(super) rows: Vec<TermId>,
    pub(super) set: HashTable<u32>,
    /// Indexes by key spec: rows by key, covering the first `covered` rows.
    pub(super) index: Vec<Index>,
    /// Rows that survive a new state (static) and a new move (static + state).
    pub(super) static_len: usize,
    pub(super) state_len: usize,
}

pub(super) const INDEX_MIN_ROWS: usize = 12;

impl Table {
    pub(super) fn new(arity: usize) -> Self {
        Table {
            arity,
            rows: Vec::new(),
            set: HashTable::new(),
            index: Vec::new(),
            static_len: 0,
            state_len: 0,
        }
    }

    /// Empties the table for reuse with `arity`, keeping its allocations.
    pub(super) fn reset(&mut self, arity: usize) {
        self.arity = arity;
        self.rows.clear();
        self.set.clear();
        self.index.clear();
        self.static_len = 0;
        self.state_len = 0;
    }

    pub(super) fn len(&self) -> usize {
        // A proposition's rows are markers of no width.
        self.rows
            .len()
            .checked_div(self.arity)
            .unwrap_or(self.rows.len())
    }

    pub(super) fn row(&self, i: usize) -> &[TermId] {
        &self.rows[i * self.arity..(i + 1) * self.arity]
    }

    pub(super) fn hash(h: &hashbrown::DefaultHashBuilder, t: &[TermId]) -> u64 {
        h.hash_one(t)
    }

    pub(super) fn contains(&self, h: &hashbrown::DefaultHashBuilder, t: &[TermId]) -> bool {
        if self.arity == 0 {
            return !self.rows.is_empty();
        }
        self.position(h, t).is_some()
    }

    /// The row number of a tuple (of a table of arity > 0).
    pub(super) fn position(
        &self,
        h: &hashbrown::DefaultHashBuilder,
        t: &[TermId],
    ) -> Option<usize> {
        let hv = Self::hash(h, t);
        self.set
            .find(hv, |&r| self.row(r as usize) == t)
            .map(|&r| r as usize)
    }

    /// Adds a tuple; false when it was there already.
    pub(super) fn insert(&mut self, h: &hashbrown::DefaultHashBuilder, t: &[TermId]) -> bool {
        if self.arity == 0 {
            if self.rows.is_empty() {
                // A proposition is stored as one row of no width: use a marker.
                self.rows.push(0);
                return true;
            }
            return false;
        }
        let hv = Self::hash(h, t);
        let arity = self.arity;
        if self
            .set
            .find(hv, |&r| {
                &self.rows[r as usize * arity..(r as usize + 1) * arity] == t
            })
            .is_some()
        {
            return false;
        }
        let r = self.len() as u32;
        self.rows.extend_from_slice(t);
        let rows = &self.rows;
        self.set.insert_unique(hv, r, |&r| {
            Self::hash(h, &rows[r as usize * arity..(r as usize + 1) * arity])
        });
        true
    }

    pub(super) fn truncate(&mut self, h: &hashbrown::DefaultHashBuilder, len: usize) {
        if self.arity == 0 {
            self.rows.truncate(len);
            return;
        }
        let n = self.len();
        if len >= n {
            return;
        }
        if n - len > len {
            // Most rows go: rebuilding the set from the rows kept is cheaper
            // than finding each row that goes.
            self.set.clear();
            let arity = self.arity;
            for r in 0..len {
                let hv = Self::hash(h, self.row(r));
                let rows = &self.rows;
                self.set.insert_unique(hv, r as u32, |&x| {
                    Self::hash(h, &rows[x as usize * arity..(x as usize + 1) * arity])
                });
            }
        } else {
            for r in len..n {
                let hv = Self::hash(h, self.row(r));
                if let Ok(e) = self.set.find_entry(hv, |&x| x as usize == r) {
                    e.remove();
                }
            }
        }
        self.rows.truncate(len * self.arity);
        for ix in self.index.iter_mut() {
            if ix.covered > len {
                // Buckets keep their allocation: the same keys come back with the next state.
                for rows in ix.map.values_mut() {
                    let keep = rows.partition_point(|&r| (r as usize) < len);
                    rows.truncate(keep);
                }
                ix.covered = len;
            }
        }
    }

    /// Rows whose key under index `slot` is `key` (the index is extended here).
    pub(super) fn lookup(&mut self, pool: &TermPool, slot: usize, key: &[TermId]) -> &[u32] {
        let n = self.len();
        let arity = self.arity;
        let ix = &mut self.index[slot];
        let mut buf = Vec::with_capacity(key.len());
        while ix.covered < n {
            let r = ix.covered;
            buf.clear();
            if extract_key(
                pool,
                &ix.spec,
                &self.rows[r * arity..(r + 1) * arity],
                &mut buf,
            ) {
                match ix.map.get_mut(buf.as_slice()) {
                    Some(rows) => rows.push(r as u32),
                    None => {
                        ix.map
                            .insert(buf.clone().into_boxed_slice(), vec![r as u32]);
                    }
                }
            }
            ix.covered += 1;
        }
        ix.map.get(key).map(Vec::as_slice).unwrap_or(&[])
    }
}

#[derive(Clone)]
pub(super) struct Index {
    pub(super) spec: KeySpec,
    pub(super) map: hashbrown::HashMap<Box<[TermId]>, Vec<u32>>,
    pub(super) covered: usize,
}

/// The key of a row under `spec`; false when the row cannot match (wrong shape).
pub(super) fn extract_key(
    pool: &TermPool,
    spec: &KeySpec,
    row: &[TermId],
    out: &mut Vec<TermId>,
) -> bool {
    for leaf in spec {
        let mut t = row[leaf.argpos as usize];
        for &(f, n, child) in &leaf.steps {
            if pool.is_const(t) || pool.functor(t) != f || pool.args(t).len() != n as usize {
                return false;
            }
            t = pool.args(t)[child as usize];
        }
        match leaf.functor {
            None => out.push(t),
            Some((f, n)) => {
                if pool.is_const(t) || pool.functor(t) != f || pool.args(t).len() != n as usize {
                    return false;
                }
            }
        }
    }
    true
}

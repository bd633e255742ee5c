//! The search tree's node store: append-only, with addresses that never move,
//! so threads searching one tree (tree parallel) add nodes and read others'
//! nodes without a lock on the whole tree. Slots come in chunks allocated on
//! first use; a push reserves its index with one atomic add and publishes the
//! node through the slot's `OnceLock` before the index is handed to anyone.
//!
//! Invariants: every index below `len()` was pushed (its slot is set once the
//! push returned); `len()` never exceeds the capacity given at creation.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// Slots per chunk: a chunk is allocated whole the first time one of its slots
/// is used, so small trees (the start of a search, tests) stay small.
const CHUNK_BITS: u32 = 12;
const CHUNK: usize = 1 << CHUNK_BITS;

type Chunk<T> = Box<[OnceLock<T>]>;

pub(crate) struct AppendOnly<T> {
    chunks: Box<[OnceLock<Chunk<T>>]>,
    /// Indices handed out, possibly past `cap` (those pushes failed). On a
    /// cache line of its own: every thread adds to it at every expansion.
    next: Padded<AtomicUsize>,
    cap: usize,
}

/// A value alone on its cache line (two lines: neighbouring-line prefetch).
#[repr(align(128))]
struct Padded<T>(T);

impl<T> std::ops::Deref for Padded<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> AppendOnly<T> {
    /// An empty store for at most `cap` values (at least one).
    pub fn new(cap: usize) -> Self {
        let cap = cap.clamp(1, u32::MAX as usize);
        let chunks = cap.div_ceil(CHUNK);
        AppendOnly {
            chunks: (0..chunks).map(|_| OnceLock::new()).collect(),
            next: Padded(AtomicUsize::new(0)),
            cap,
        }
    }

    pub fn capacity(&self) -> usize {
        self.cap
    }

    /// Values pushed (and being pushed) so far.
    pub fn len(&self) -> usize {
        self.next.load(Ordering::Relaxed).min(self.cap)
    }

    pub fn is_full(&self) -> bool {
        self.len() >= self.cap
    }

    /// Appends `value` and returns its index, or gives it back when the store is
    /// full. Safe to call from several threads at once.
    pub fn push(&self, value: T) -> Result<u32, T> {
        if self.is_full() {
            return Err(value);
        }
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        if i >= self.cap {
            return Err(value);
        }
        let chunk = self.chunks[i >> CHUNK_BITS]
            .get_or_init(|| (0..CHUNK).map(|_| OnceLock::new()).collect());
        if chunk[i & (CHUNK - 1)].set(value).is_err() {
            unreachable!("store slot {i} was handed out twice");
        }
        Ok(i as u32)
    }

    /// The value at `i`.
    ///
    /// # Panics
    /// When `i` was never returned by [`AppendOnly::push`]: indices reach readers only
    /// after their push, so this is a bug in the caller.
    #[inline]
    pub fn get(&self, i: u32) -> &T {
        let i = i as usize;
        self.chunks[i >> CHUNK_BITS]
            .get()
            .and_then(|c| c[i & (CHUNK - 1)].get())
            .unwrap_or_else(|| panic!("store index {i} read before it was pushed"))
    }

    /// Every value in index order, moved out (for re-numbering the tree).
    pub fn into_values(self) -> Vec<Option<T>> {
        let len = self.len();
        let mut out = Vec::with_capacity(len);
        for chunk in self.chunks.into_vec() {
            let Some(chunk) = chunk.into_inner() else {
                break;
            };
            for slot in chunk.into_vec() {
                if out.len() == len {
                    break;
                }
                out.push(slot.into_inner());
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pushes_from_several_threads_get_distinct_indices_and_stay_put() {
        let a = AppendOnly::new(3 * CHUNK + 5);
        std::thread::scope(|s| {
            for t in 0..4u32 {
                let a = &a;
                s.spawn(move || {
                    for k in 0..CHUNK as u32 {
                        // Four threads push a chunk each into room for 3 and a bit.
                        if let Ok(i) = a.push((t, k)) {
                            assert_eq!(*a.get(i), (t, k));
                        }
                    }
                });
            }
        });
        assert_eq!(a.len(), a.capacity());
        assert!(a.push((9, 9)).is_err());
        let mut seen: Vec<(u32, u32)> = a.into_values().into_iter().flatten().collect();
        assert_eq!(seen.len(), 3 * CHUNK + 5);
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), 3 * CHUNK + 5, "no value lost or doubled");
    }

    #[test]
    fn a_full_store_gives_the_value_back() {
        let a = AppendOnly::new(2);
        assert_eq!(a.push("x"), Ok(0));
        assert_eq!(a.push("y"), Ok(1));
        assert_eq!(a.push("z"), Err("z"));
        assert_eq!(a.len(), 2);
        assert_eq!(a.into_values(), vec![Some("x"), Some("y")]);
    }
}

//! Compressed rows: a table of variable-length rows kept in two flat vectors
//! (each row's start, and the items of all rows in order), so a per-node list
//! costs no allocation of its own and a row is one slice.

/// Rows of `T`, row `i` being `items[start[i]..start[i + 1]]`.
#[derive(Clone, Debug)]
pub(super) struct Rows<T> {
    start: Vec<u32>,
    items: Vec<T>,
}

impl<T> Default for Rows<T> {
    fn default() -> Self {
        Rows {
            start: vec![0],
            items: Vec::new(),
        }
    }
}

impl<T: Copy> Rows<T> {
    /// `n` empty rows.
    pub(super) fn empty(n: usize) -> Self {
        Rows {
            start: vec![0; n + 1],
            items: Vec::new(),
        }
    }

    /// The rows `rows`, in order.
    pub(super) fn from_rows<R: AsRef<[T]>>(rows: impl IntoIterator<Item = R>) -> Self {
        let mut out = Rows::default();
        for r in rows {
            out.push(r.as_ref());
        }
        out
    }

    /// Appends a row.
    pub(super) fn push(&mut self, row: &[T]) {
        self.items.extend_from_slice(row);
        self.start.push(self.items.len() as u32);
    }

    /// Row `i`.
    #[inline]
    pub(super) fn row(&self, i: usize) -> &[T] {
        &self.items[self.start[i] as usize..self.start[i + 1] as usize]
    }

    /// Whether row `i` has no item.
    #[inline]
    pub(super) fn is_empty_row(&self, i: usize) -> bool {
        self.start[i] == self.start[i + 1]
    }

    /// The items of all rows, in order.
    pub(super) fn iter(&self) -> std::slice::Iter<'_, T> {
        self.items.iter()
    }

    /// The number of rows.
    pub(super) fn len(&self) -> usize {
        self.start.len() - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_keep_their_items_in_order() {
        let r = Rows::from_rows([vec![1, 2], vec![], vec![3]]);
        assert_eq!(r.len(), 3);
        assert_eq!(r.iter().copied().collect::<Vec<_>>(), [1, 2, 3]);
        assert_eq!(r.row(0), &[1, 2]);
        assert!(r.row(1).is_empty() && r.is_empty_row(1));
        assert_eq!(r.row(2), &[3]);
        let e: Rows<u32> = Rows::empty(2);
        assert_eq!(e.len(), 2);
        assert!(e.row(1).is_empty());
    }
}

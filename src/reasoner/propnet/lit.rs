//! Node numbers and literals: the two integers the network is made of, as
//! newtypes so a node is never read as a literal or a literal as an index.
//!
//! A literal packs a node and a sign in one `u32` (`node << 1 | negated`): the
//! packing keeps gate inputs, fan-out entries and guards one word each, and
//! orders literals by node then sign, the order the builder's sorting, sharing
//! and tie-breaks rely on.

use std::fmt;

/// The first fluent input's node.
const FLUENT_BASE: usize = 2;

/// A node of the network: an index into its gates and into a scratch's values.
#[repr(transparent)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub(super) struct Node(pub(super) u32);

impl Node {
    /// The constant nodes: false, then true; fluent inputs follow.
    pub(super) const FALSE: Node = Node(0);
    pub(super) const TRUE: Node = Node(1);

    /// Fluent `i`'s input node.
    #[inline]
    pub(super) fn fluent(i: usize) -> Node {
        Node((FLUENT_BASE + i) as u32)
    }

    /// The fluent whose input the node is, given the number of fluents.
    #[inline]
    pub(super) fn fluent_index(self, fluents: usize) -> Option<usize> {
        self.idx().checked_sub(FLUENT_BASE).filter(|&i| i < fluents)
    }

    /// The node numbered `i`.
    #[inline]
    pub(super) fn at(i: usize) -> Node {
        Node(i as u32)
    }

    /// The node's index into per-node arrays.
    #[inline]
    pub(super) fn idx(self) -> usize {
        self.0 as usize
    }
}

/// A node or its negation.
#[repr(transparent)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) struct Lit(u32);

impl Lit {
    pub(super) const FALSE: Lit = Lit::pos(Node::FALSE);
    pub(super) const TRUE: Lit = Lit::pos(Node::TRUE);

    /// `n` itself.
    #[inline]
    pub(super) const fn pos(n: Node) -> Lit {
        Lit(n.0 << 1)
    }

    /// `n`, negated when `negated`.
    #[inline]
    pub(super) fn new(n: Node, negated: bool) -> Lit {
        Lit(n.0 << 1 | negated as u32)
    }

    /// The constant literal `v`.
    #[inline]
    pub(super) fn constant(v: bool) -> Lit {
        if v {
            Lit::TRUE
        } else {
            Lit::FALSE
        }
    }

    #[inline]
    pub(super) fn node(self) -> Node {
        Node(self.0 >> 1)
    }

    #[inline]
    pub(super) fn negated(self) -> bool {
        self.0 & 1 == 1
    }

    /// The value of the literal in `vals` (one byte, 0 or 1, per node).
    #[inline]
    pub(super) fn value(self, vals: &[u8]) -> bool {
        vals[(self.0 >> 1) as usize] ^ (self.0 & 1) as u8 == 1
    }

    /// The value of the literal when its node is a constant node, or `None`.
    pub(super) fn const_value(self) -> Option<bool> {
        match self.node() {
            Node::FALSE | Node::TRUE => Some((self.node() == Node::TRUE) != self.negated()),
            _ => None,
        }
    }
}

impl std::ops::Not for Lit {
    type Output = Lit;

    #[inline]
    fn not(self) -> Lit {
        Lit(self.0 ^ 1)
    }
}

impl fmt::Debug for Lit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let neg = if self.negated() { "!" } else { "" };
        write!(f, "{neg}{}", self.node().0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_literal_keeps_its_node_and_sign_and_orders_by_node_then_sign() {
        let (a, b) = (Node(7), Node(8));
        assert_eq!(Lit::pos(a).node(), a);
        assert!(!Lit::pos(a).negated());
        assert!((!Lit::pos(a)).negated());
        assert_eq!(!!Lit::pos(a), Lit::pos(a));
        assert_eq!(Lit::new(a, true), !Lit::pos(a));
        assert!(Lit::pos(a) < !Lit::pos(a) && !Lit::pos(a) < Lit::pos(b));
        assert_eq!(Lit::TRUE.const_value(), Some(true));
        assert_eq!((!Lit::TRUE).const_value(), Some(false));
        assert_eq!(Lit::FALSE.const_value(), Some(false));
        assert_eq!(Lit::pos(a).const_value(), None);
        let vals = [0, 1, 0, 0, 0, 0, 0, 1, 0];
        assert!(Lit::pos(a).value(&vals) && (!Lit::pos(b)).value(&vals));
    }
}

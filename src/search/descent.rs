//! One iteration's record, from selection to backup: the path taken down the
//! tree and the moves chosen there, where the playout starts, and what the
//! playout (or a solved node) found. The tree ([`super::tree`]) makes it and
//! backs it up; the playout phase ([`super::playouts`]) fills in its part.

use super::node::NodeId;
use crate::reasoner::StateMachine;

/// One iteration between selection and backup: the path taken (node and the
/// offset of its move indices in `moves`), the line of joint moves (one-player
/// games), where the playout starts (`None` when the descent ended in a solved
/// node) and, once known, the values.
pub(crate) struct Descent<M: StateMachine> {
    pub path: Vec<(NodeId, usize)>,
    pub moves: Vec<usize>,
    pub line: Vec<Vec<M::Move>>,
    /// RAVE and MAST: the playout's joint moves, role after role.
    pub tail: Vec<M::Move>,
    pub from: Option<M::State>,
    pub values: Vec<f64>,
    pub terminal: bool,
    pub played: bool,
    pub one_player: bool,
    /// This descent added the last node of its path to the tree.
    pub grew: bool,
    /// [`super::LeafUse::Prior`]: the new node's value per role, and the
    /// visits it counts for on the edge into it (empty: none).
    pub prior: Vec<f64>,
    pub prior_visits: u64,
}

impl<M: StateMachine> Descent<M> {
    /// A descent from the root that has chosen nothing yet.
    pub fn new(one_player: bool) -> Self {
        Descent {
            path: Vec::new(),
            moves: Vec::new(),
            line: Vec::new(),
            tail: Vec::new(),
            from: None,
            values: Vec::new(),
            terminal: false,
            played: false,
            one_player,
            grew: false,
            prior: Vec::new(),
            prior_visits: 0,
        }
    }
}

//! What a person watching a match sees ([`MatchView`]): our role, the step,
//! the clocks, the engine, our last moves with what chose them and the
//! search's visits and value, and the solver's state on one-player games.
//! The worker writes it as it plays; the service's match page reads it. A
//! view is a copy made under a short lock: reading it never waits on the
//! search.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use serde::Serialize;

/// The moves a view keeps, the latest last.
const MOVES_KEPT: usize = 30;

/// One of our moves.
#[derive(Clone, Debug, Serialize)]
pub struct MoveView {
    /// The step the move was played at (1 for the first move).
    pub step: usize,
    #[serde(rename = "move")]
    pub text: String,
    /// What chose it ([`super::Decision`]'s name).
    pub by: String,
    pub engine: String,
    /// The move's visits at the root and their mean value (0-100) when the
    /// search chose it or saw it.
    pub visits: u64,
    pub value: Option<f64>,
    /// Playouts made for this move (pondering included).
    pub playouts: u64,
    pub seconds: f64,
}

/// A match as a page shows it.
#[derive(Clone, Debug, Default, Serialize)]
pub struct MatchView {
    pub id: String,
    pub role: String,
    pub roles: usize,
    /// `starting`, `playing`, `over` (STOP), `aborted`.
    pub state: String,
    pub step: usize,
    pub start_clock_s: f64,
    pub play_clock_s: f64,
    pub engine: String,
    pub moves: VecDeque<MoveView>,
    /// On one-player games: the solver's state in words.
    pub solver: Option<String>,
    /// The goals when the match is over.
    pub goals: Option<String>,
    /// When START arrived (UTC).
    pub started: String,
}

/// A match's view, shared by its worker and the server.
#[derive(Clone, Default)]
pub struct Watch(Arc<Mutex<MatchView>>);

impl Watch {
    pub fn new(view: MatchView) -> Watch {
        Watch(Arc::new(Mutex::new(view)))
    }

    /// A copy of the view now.
    pub fn view(&self) -> MatchView {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Changes the view.
    pub fn update(&self, f: impl FnOnce(&mut MatchView)) {
        f(&mut self.0.lock().unwrap_or_else(|p| p.into_inner()));
    }

    /// Adds one of our moves, forgetting the oldest past [`MOVES_KEPT`].
    pub fn played(&self, m: MoveView) {
        self.update(|v| {
            v.step = m.step;
            v.engine = m.engine.clone();
            v.state = "playing".into();
            v.moves.push_back(m);
            while v.moves.len() > MOVES_KEPT {
                v.moves.pop_front();
            }
        });
    }
}

//! In-process players: `random`, `legal` (the first legal move, as ggp-base's
//! legal player), `mc` (flat Monte Carlo, the classic baseline) and `uct` (the
//! tree search of [`crate::search`]). Each follows the match from the joint moves
//! the referee sends, as a remote player would, and answers within its clock.

use std::sync::Arc;
use std::time::Instant;

use anyhow::{anyhow, bail, Result};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::{MatchInfo, Player};
use crate::gdl::print::term_to_string;
use crate::gdl::Term;
use crate::reasoner::StateMachine;
use crate::search::policy::{playout, Evaluator, GoalEvaluator, MoveStats, RandomPlayout};
use crate::search::{Mcts, SearchConfig};

/// The engine's joint move for the referee's terms.
fn joint_of<M: StateMachine>(m: &M, terms: &[Term]) -> Result<Vec<M::Move>> {
    if terms.len() != m.num_roles() {
        bail!(
            "a joint move of {} moves for {} roles",
            terms.len(),
            m.num_roles()
        );
    }
    terms
        .iter()
        .map(|t| {
            m.parse_move(t)
                .ok_or_else(|| anyhow!("unknown move {}", term_to_string(t, &m.game().symbols)))
        })
        .collect()
}

/// The current state of a match, followed from the joint moves played.
struct Follower<M: StateMachine> {
    machine: Arc<M>,
    state: M::State,
}

impl<M: StateMachine> Follower<M> {
    fn new(machine: Arc<M>) -> Self {
        let state = machine.initial_state();
        Follower { machine, state }
    }

    fn update(&mut self, previous: Option<&[Term]>) -> Result<()> {
        if let Some(p) = previous {
            let joint = joint_of(&*self.machine, p)?;
            self.state = self.machine.next_state(&self.state, &joint);
        }
        Ok(())
    }

    fn legal(&self, role: usize) -> Result<Vec<M::Move>> {
        let l = self.machine.legal(&self.state, role);
        if l.is_empty() {
            bail!("no legal move for role {role}");
        }
        Ok(l)
    }
}

/// A uniformly random legal move.
pub struct RandomPlayer<M: StateMachine> {
    f: Follower<M>,
    rng: SmallRng,
}

impl<M: StateMachine> RandomPlayer<M> {
    pub fn new(machine: Arc<M>, seed: u64) -> Self {
        RandomPlayer {
            f: Follower::new(machine),
            rng: SmallRng::seed_from_u64(seed),
        }
    }
}

impl<M: StateMachine> Player for RandomPlayer<M> {
    fn start(&mut self, _info: &MatchInfo) -> Result<()> {
        self.f.state = self.f.machine.initial_state();
        Ok(())
    }
    fn play(&mut self, previous: Option<&[Term]>, info: &MatchInfo) -> Result<Term> {
        self.f.update(previous)?;
        let l = self.f.legal(info.role)?;
        let mv = &l[self.rng.gen_range(0..l.len())];
        Ok(self.f.machine.move_term(mv))
    }
    fn stop(&mut self, _previous: &[Term], _info: &MatchInfo) {}
    fn name(&self) -> String {
        "random".into()
    }
}

/// The first legal move in the engine's order.
pub struct LegalPlayer<M: StateMachine> {
    f: Follower<M>,
}

impl<M: StateMachine> LegalPlayer<M> {
    pub fn new(machine: Arc<M>) -> Self {
        LegalPlayer {
            f: Follower::new(machine),
        }
    }
}

impl<M: StateMachine> Player for LegalPlayer<M> {
    fn start(&mut self, _info: &MatchInfo) -> Result<()> {
        self.f.state = self.f.machine.initial_state();
        Ok(())
    }
    fn play(&mut self, previous: Option<&[Term]>, info: &MatchInfo) -> Result<Term> {
        self.f.update(previous)?;
        let l = self.f.legal(info.role)?;
        Ok(self.f.machine.move_term(&l[0]))
    }
    fn stop(&mut self, _previous: &[Term], _info: &MatchInfo) {}
    fn name(&self) -> String {
        "legal".into()
    }
}

/// Flat Monte Carlo: random playouts after each of our moves in turn (the other
/// roles' moves random), until the deadline; the best mean goal wins.
pub struct McPlayer<M: StateMachine> {
    f: Follower<M>,
    rng: SmallRng,
    max_playout_steps: usize,
    playouts: Option<u64>,
}

impl<M: StateMachine> McPlayer<M> {
    pub fn new(machine: Arc<M>, seed: u64) -> Self {
        McPlayer {
            f: Follower::new(machine),
            rng: SmallRng::seed_from_u64(seed),
            max_playout_steps: SearchConfig::default().max_playout_steps,
            playouts: None,
        }
    }

    /// Runs about `n` playouts per move (whole rounds over the legal moves)
    /// instead of playing out to the clock: reproducible play.
    pub fn with_playouts(mut self, n: u64) -> Self {
        self.playouts = Some(n);
        self
    }

    /// Mean goal of each of `role`'s legal moves, from playouts until `deadline`
    /// if one is given (or `max_rounds` rounds over all moves).
    pub fn evaluate(
        &mut self,
        role: usize,
        deadline: Option<Instant>,
        max_rounds: u64,
    ) -> Result<Vec<(M::Move, MoveStats)>> {
        let m = &*self.f.machine;
        let state = &self.f.state;
        let ours = self.f.legal(role)?;
        let mut stats = vec![MoveStats::default(); ours.len()];
        let mut others: Vec<Vec<M::Move>> = Vec::new();
        for r in 0..m.num_roles() {
            others.push(if r == role {
                Vec::new()
            } else {
                self.f.legal(r)?
            });
        }
        let mut buf = Vec::new();
        let mut values = Vec::new();
        let mut rounds = 0;
        // With one move there is nothing to compare: answer at once.
        'outer: while ours.len() > 1 && rounds < max_rounds {
            for (i, mv) in ours.iter().enumerate() {
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    break 'outer;
                }
                let joint: Vec<M::Move> = others
                    .iter()
                    .enumerate()
                    .map(|(r, l)| {
                        if r == role {
                            mv.clone()
                        } else {
                            l[self.rng.gen_range(0..l.len())].clone()
                        }
                    })
                    .collect();
                let next = m.next_state(state, &joint);
                let Some((end, terminal, _)) = playout(
                    m,
                    next,
                    &RandomPlayout,
                    &mut self.rng,
                    self.max_playout_steps,
                    deadline,
                    None,
                    &mut buf,
                ) else {
                    break 'outer;
                };
                GoalEvaluator.evaluate(m, &end, terminal, &mut values);
                stats[i].visits += 1;
                stats[i].sum += values[role];
            }
            rounds += 1;
        }
        Ok(ours.into_iter().zip(stats).collect())
    }
}

impl<M: StateMachine> Player for McPlayer<M> {
    fn start(&mut self, _info: &MatchInfo) -> Result<()> {
        self.f.state = self.f.machine.initial_state();
        Ok(())
    }
    fn play(&mut self, previous: Option<&[Term]>, info: &MatchInfo) -> Result<Term> {
        let deadline = MatchInfo::deadline(Instant::now(), info.play_clock);
        self.f.update(previous)?;
        let stats = match self.playouts {
            Some(n) => {
                let moves = self.f.legal(info.role)?.len() as u64;
                self.evaluate(info.role, None, n.div_ceil(moves.max(1)))?
            }
            None => self.evaluate(info.role, Some(deadline), u64::MAX)?,
        };
        let best = stats
            .iter()
            .max_by(|a, b| a.1.mean().total_cmp(&b.1.mean()))
            .map(|(mv, _)| mv.clone())
            .ok_or_else(|| anyhow!("no legal move"))?;
        Ok(self.f.machine.move_term(&best))
    }
    fn stop(&mut self, _previous: &[Term], _info: &MatchInfo) {}
    fn name(&self) -> String {
        "mc".into()
    }
}

/// UCT ([`crate::search::Mcts`]): searches during the start clock and every play
/// clock, keeping the tree from move to move.
pub struct UctPlayer<M: StateMachine> {
    machine: Arc<M>,
    cfg: SearchConfig,
    search: Option<Mcts<M>>,
    iterations: Option<u64>,
}

impl<M: StateMachine + 'static> UctPlayer<M> {
    pub fn new(machine: Arc<M>, seed: u64, threads: usize) -> Self {
        UctPlayer {
            machine,
            cfg: SearchConfig {
                seed,
                threads: threads.max(1),
                ..SearchConfig::default()
            },
            search: None,
            iterations: None,
        }
    }

    /// Runs exactly `n` iterations per move (one thread) instead of searching to
    /// the clock, and none at start: reproducible play.
    pub fn with_iterations(mut self, n: u64) -> Self {
        self.iterations = Some(n);
        self.cfg.threads = 1;
        self
    }

    /// Cuts playouts off after `n` joint moves (scored by the game's goals there).
    pub fn with_playout_steps(mut self, n: usize) -> Self {
        self.cfg.max_playout_steps = n;
        self
    }

    /// The search, for inspection (statistics) after a move.
    pub fn search(&self) -> Option<&Mcts<M>> {
        self.search.as_ref()
    }
}

impl<M: StateMachine + 'static> Player for UctPlayer<M> {
    fn start(&mut self, info: &MatchInfo) -> Result<()> {
        let deadline = MatchInfo::deadline(Instant::now(), info.start_clock);
        let state = self.machine.initial_state();
        let mut s = Mcts::new(Arc::clone(&self.machine), state, self.cfg.clone());
        if self.iterations.is_none() {
            s.search_until(deadline);
        }
        self.search = Some(s);
        Ok(())
    }

    fn play(&mut self, previous: Option<&[Term]>, info: &MatchInfo) -> Result<Term> {
        let deadline = MatchInfo::deadline(Instant::now(), info.play_clock);
        let s = match &mut self.search {
            Some(s) => s,
            None => {
                let state = self.machine.initial_state();
                self.search.insert(Mcts::new(
                    Arc::clone(&self.machine),
                    state,
                    self.cfg.clone(),
                ))
            }
        };
        if let Some(p) = previous {
            let joint = joint_of(&*self.machine, p)?;
            s.advance(&joint);
        }
        match self.iterations {
            Some(n) => s.search_iterations(n),
            None => s.search_until(deadline),
        }
        let mv = s
            .try_best_move(info.role)
            .ok_or_else(|| anyhow!("no legal move in the current state"))?;
        Ok(self.machine.move_term(&mv))
    }

    fn stop(&mut self, _previous: &[Term], _info: &MatchInfo) {
        self.search = None;
    }

    fn name(&self) -> String {
        "uct".into()
    }
}

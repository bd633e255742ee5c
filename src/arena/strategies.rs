//! In-process players: `random`, `legal` (the first legal move, as ggp-base's
//! legal player), `mc` (flat Monte Carlo, the classic baseline; `mcm` with
//! memory across moves), `uct` (the
//! tree search of [`crate::search`], with its enhancements: `uct+rave+mast`)
//! and the minimax family (`alphabeta`, `maxn`). Each follows the match from the joint moves
//! the referee sends, as a remote player would, and answers within its clock.

use std::sync::Arc;

use hashbrown::HashMap;
use std::time::Instant;

use anyhow::{anyhow, bail, Result};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::{MatchInfo, MoveReport, Player};
use crate::gdl::print::term_to_string;
use crate::gdl::Term;
use crate::reasoner::StateMachine;
use crate::search::minimax::{Kind, Minimax};
use crate::search::policy::{playout, Evaluator, GoalEvaluator, MoveStats, RandomPlayout};
use crate::search::{Mcts, SearchConfig};
use crate::strategy::{self, Searcher, UctSetup};

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
///
/// With memory (`mcm`, Monte Carlo with memory): every state of a playout in
/// which we had a choice keeps the statistics of the move we played there,
/// across moves, and a root met again starts from what its playouts said
/// before.
pub struct McPlayer<M: StateMachine> {
    f: Follower<M>,
    rng: SmallRng,
    max_playout_steps: usize,
    playouts: Option<u64>,
    memory: Option<HashMap<M::State, Vec<MoveStats>>>,
}

/// States Monte Carlo with memory keeps before it forgets them all.
const MEMORY_STATES: usize = 1_000_000;

impl<M: StateMachine + 'static> McPlayer<M> {
    pub fn new(machine: Arc<M>, seed: u64) -> Self {
        McPlayer {
            f: Follower::new(machine),
            rng: SmallRng::seed_from_u64(seed),
            max_playout_steps: SearchConfig::default().max_playout_steps,
            playouts: None,
            memory: None,
        }
    }

    /// Keeps statistics across moves (`mcm`).
    /// A memory with room for all the states it keeps: growing it would
    /// rehash up to a million states in the middle of a move's clock (replies
    /// came late at 1 s clocks). The room is reserved, not touched, until
    /// states arrive.
    fn empty_memory() -> HashMap<M::State, Vec<MoveStats>> {
        HashMap::with_capacity(MEMORY_STATES)
    }

    pub fn with_memory(mut self) -> Self {
        self.memory = Some(Self::empty_memory());
        self
    }

    /// A random playout from `state` that records, with memory on, each state
    /// where `role` has a choice, the index of its move there and the number
    /// of its moves; `None` when `deadline` cut it short.
    fn remembered_playout(
        &mut self,
        mut state: M::State,
        role: usize,
        deadline: Option<Instant>,
        seen: &mut Vec<(M::State, usize, usize)>,
    ) -> Option<(M::State, bool)> {
        let m = &*self.f.machine;
        let mut buf = Vec::new();
        let mut pacer = crate::reasoner::Pacer::new(deadline);
        let mut joint = Vec::with_capacity(m.num_roles());
        for _ in 0..self.max_playout_steps {
            if m.is_terminal(&state) {
                return Some((state, true));
            }
            if pacer.passed() {
                return None;
            }
            joint.clear();
            for r in 0..m.num_roles() {
                m.legal_moves(&state, r, &mut buf);
                if buf.is_empty() {
                    return Some((state, false));
                }
                let i = self.rng.gen_range(0..buf.len());
                if r == role && buf.len() > 1 {
                    seen.push((state.clone(), i, buf.len()));
                }
                joint.push(buf[i].clone());
            }
            state = m.next_state(&state, &joint);
        }
        let terminal = m.is_terminal(&state);
        Some((state, terminal))
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
        let machine = Arc::clone(&self.f.machine);
        let m = &*machine;
        let state = &self.f.state.clone();
        let ours = self.f.legal(role)?;
        let mut stats = vec![MoveStats::default(); ours.len()];
        if let Some(known) = self.memory.as_ref().and_then(|mem| mem.get(state)) {
            if known.len() == stats.len() {
                stats.clone_from(known);
            }
        }
        let mut seen = Vec::new();
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
                let end = if self.memory.is_some() {
                    seen.clear();
                    self.remembered_playout(next, role, deadline, &mut seen)
                } else {
                    let limits = crate::reasoner::PlayoutLimits {
                        max_steps: self.max_playout_steps,
                        deadline,
                        sure_wins: false,
                    };
                    playout(
                        m,
                        next,
                        &RandomPlayout,
                        &mut self.rng,
                        limits,
                        None,
                        &mut buf,
                    )
                    .map(|(end, terminal, _)| (end, terminal))
                };
                let Some((end, terminal)) = end else {
                    break 'outer;
                };
                GoalEvaluator.evaluate(m, &end, terminal, &mut values);
                stats[i].visits += 1;
                stats[i].sum += values[role];
                if let Some(mem) = &mut self.memory {
                    if mem.len() >= MEMORY_STATES {
                        // A million states take a tenth of a second to free:
                        // not on the clock.
                        crate::search::drop_elsewhere(std::mem::replace(mem, Self::empty_memory()));
                    }
                    for (s, k, n) in seen.drain(..) {
                        let e = mem.entry(s).or_default();
                        e.resize(n, MoveStats::default());
                        e[k].visits += 1;
                        e[k].sum += values[role];
                    }
                }
            }
            rounds += 1;
        }
        if let Some(mem) = &mut self.memory {
            mem.insert(state.clone(), stats.clone());
        }
        Ok(ours.into_iter().zip(stats).collect())
    }
}

impl<M: StateMachine + 'static> Player for McPlayer<M> {
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
    fn stop(&mut self, _previous: &[Term], _info: &MatchInfo) {
        if let Some(mem) = &mut self.memory {
            crate::search::drop_elsewhere(std::mem::replace(mem, Self::empty_memory()));
        }
    }
    fn name(&self) -> String {
        if self.memory.is_some() {
            "mcm".into()
        } else {
            "mc".into()
        }
    }
}

/// UCT ([`crate::search::Mcts`]): searches during the start clock and every play
/// clock, keeping the tree from move to move; set up (enhancements, a learned
/// model, iterations a move) by the strategy builder ([`UctSetup`]).
pub struct UctPlayer<M: StateMachine> {
    machine: Arc<M>,
    setup: UctSetup,
    search: Option<Mcts<M>>,
    last: Option<MoveReport>,
}

impl<M: StateMachine + 'static> UctPlayer<M> {
    pub fn new(machine: Arc<M>, setup: UctSetup) -> Self {
        UctPlayer {
            machine,
            setup,
            search: None,
            last: None,
        }
    }

    /// A new search from the initial state; with GIFL, its features learned
    /// first, in at most half the time left before `deadline` (all the
    /// walks when the player counts iterations instead of time).
    fn new_search(&self, deadline: Instant) -> Mcts<M> {
        let state = self.machine.initial_state();
        let mut s = self.setup.search(Arc::clone(&self.machine), state);
        if let Some(walks) = self.setup.cfg.enhancements.gifl {
            let now = Instant::now();
            let half = now + deadline.saturating_duration_since(now) / 2;
            let until = self.setup.iterations().is_none().then_some(half);
            let n = s.learn_features(walks, until);
            tracing::debug!("gifl: {n} features learned");
        }
        s
    }

    /// The search, for inspection (statistics) after a move.
    pub fn search(&self) -> Option<&Mcts<M>> {
        self.search.as_ref()
    }
}

impl<M: StateMachine + 'static> Player for UctPlayer<M> {
    fn start(&mut self, info: &MatchInfo) -> Result<()> {
        let deadline = MatchInfo::deadline(Instant::now(), info.start_clock);
        let mut s = self.new_search(deadline);
        if self.setup.iterations().is_none() {
            s.search_until(deadline);
        }
        self.search = Some(s);
        Ok(())
    }

    fn play(&mut self, previous: Option<&[Term]>, info: &MatchInfo) -> Result<Term> {
        let t0 = Instant::now();
        self.last = None;
        let deadline = MatchInfo::deadline(t0, info.play_clock);
        if self.search.is_none() {
            self.search = Some(self.new_search(deadline));
        }
        let Some(s) = &mut self.search else {
            bail!("no search");
        };
        if let Some(p) = previous {
            let joint = joint_of(&*self.machine, p)?;
            s.advance(&joint);
        }
        match self.setup.iterations() {
            Some(n) => s.search_iterations(n),
            None => s.search_until(deadline),
        }
        let mv = s
            .try_best_move(info.role)
            .ok_or_else(|| anyhow!("no legal move in the current state"))?;
        self.last = Some(uct_report(s, info.role, &mv, self.setup.name(), t0));
        Ok(self.machine.move_term(&mv))
    }

    fn stop(&mut self, _previous: &[Term], _info: &MatchInfo) {
        self.search = None;
    }

    fn name(&self) -> String {
        self.setup.name()
    }

    fn report(&self) -> Option<MoveReport> {
        self.last.clone()
    }
}

/// Joint moves a report's principal line holds at most.
const REPORT_LINE: usize = 8;

/// What search `s` thought of `mv`, its move for `role`, chosen since `t0`.
fn uct_report<M: StateMachine + 'static>(
    s: &Mcts<M>,
    role: usize,
    mv: &M::Move,
    player: String,
    t0: Instant,
) -> MoveReport {
    let m = s.machine();
    let name = |mv: &M::Move| term_to_string(&m.move_term(mv), &m.game().symbols);
    let stats = s
        .root_stats(role)
        .into_iter()
        .find(|(x, _)| x == mv)
        .map(|(_, st)| st)
        .unwrap_or_default();
    let st = s.stats();
    MoveReport {
        player,
        mv: name(mv),
        visits: stats.visits,
        value: 100.0 * stats.mean(),
        line: s
            .principal_line(role, mv, REPORT_LINE)
            .iter()
            .map(|joint| joint.iter().map(name).collect())
            .collect(),
        iterations: st.last_iterations,
        nodes: st.nodes,
        heuristic: s.heuristic(),
        seconds: t0.elapsed().as_secs_f64(),
        ..MoveReport::default()
    }
}

/// The minimax family ([`crate::search::minimax`]): paranoid alpha-beta
/// (`alphabeta`) or max^n (`maxn`), iterative deepening to the clock, the
/// table kept from move to move.
pub struct MinimaxPlayer<M: StateMachine> {
    f: Follower<M>,
    kind: Kind,
    search: Option<Minimax<M>>,
    nodes: Option<u64>,
    leaf: Option<crate::search::minimax::Leaf<M>>,
}

impl<M: StateMachine> MinimaxPlayer<M> {
    pub fn new(machine: Arc<M>, kind: Kind) -> Self {
        MinimaxPlayer {
            f: Follower::new(machine),
            kind,
            search: None,
            nodes: None,
            leaf: None,
        }
    }

    /// Scores leaves at the depth limit with `leaf` (`nn-alphabeta`).
    pub fn with_leaf(mut self, leaf: crate::search::minimax::Leaf<M>) -> Self {
        self.leaf = Some(leaf);
        self
    }

    fn new_search(&self, role: usize) -> Minimax<M> {
        let s = Minimax::new(Arc::clone(&self.f.machine), role, self.kind);
        match &self.leaf {
            Some(l) => s.with_leaf(Arc::clone(l)),
            None => s,
        }
    }

    /// Searches exactly `n` nodes per move (the last finished iteration
    /// answers) instead of to the clock: reproducible play.
    pub fn with_nodes(mut self, n: u64) -> Self {
        self.nodes = Some(n);
        self
    }
}

impl<M: StateMachine> Player for MinimaxPlayer<M> {
    fn start(&mut self, info: &MatchInfo) -> Result<()> {
        let deadline = MatchInfo::deadline(Instant::now(), info.start_clock);
        self.f.state = self.f.machine.initial_state();
        let mut s = self.new_search(info.role);
        if self.nodes.is_none() {
            // Half the clock to solve the game outright, the rest deepening.
            let now = Instant::now();
            let half = now + deadline.saturating_duration_since(now) / 2;
            let solved = s.solve(&self.f.state, Some(half), None);
            if let Some(a) = solved.or_else(|| s.search(&self.f.state, Some(deadline), None)) {
                tracing::info!(
                    "{}: value {} at depth {}{}",
                    self.name(),
                    a.value,
                    a.depth,
                    if a.complete { " (proven)" } else { "" }
                );
            }
        }
        self.search = Some(s);
        Ok(())
    }

    fn play(&mut self, previous: Option<&[Term]>, info: &MatchInfo) -> Result<Term> {
        let deadline = MatchInfo::deadline(Instant::now(), info.play_clock);
        self.f.update(previous)?;
        let legal = self.f.legal(info.role)?;
        if legal.len() == 1 {
            return Ok(self.f.machine.move_term(&legal[0]));
        }
        if self.search.is_none() {
            self.search = Some(self.new_search(info.role));
        }
        let Some(s) = &mut self.search else {
            bail!("no search");
        };
        let answer = match self.nodes {
            Some(n) => s.search(&self.f.state, None, Some(n)),
            None => s.search(&self.f.state, Some(deadline), None),
        };
        let mv = answer
            .and_then(|a| a.best)
            .filter(|m| legal.contains(m))
            .unwrap_or_else(|| legal[0].clone());
        Ok(self.f.machine.move_term(&mv))
    }

    fn stop(&mut self, _previous: &[Term], _info: &MatchInfo) {
        self.search = None;
    }

    fn name(&self) -> String {
        match (self.kind, self.leaf.is_some()) {
            (Kind::Paranoid, true) => "nn-alphabeta".into(),
            (Kind::Paranoid, false) => "alphabeta".into(),
            (Kind::MaxN, _) => "maxn".into(),
        }
    }
}

/// Meta-choice in process (`auto`): profiles the game in the first part of
/// the start clock ([`strategy::meta_choice`]) and plays the configuration
/// chosen, UCT with enhancements or alpha-beta.
pub struct AutoPlayer<M: StateMachine> {
    machine: Arc<M>,
    /// UCT's settings, the enhancements left to the choice; its iterations
    /// a move are alpha-beta's nodes.
    uct: UctSetup,
    inner: Option<Box<dyn Player>>,
    chosen: String,
    /// The pick is put to trial matches in half the start clock
    /// ([`strategy::trial_choice`]).
    trials: bool,
}

impl<M: StateMachine + 'static> AutoPlayer<M> {
    pub fn new(machine: Arc<M>, uct: UctSetup) -> Self {
        AutoPlayer {
            machine,
            uct,
            inner: None,
            chosen: String::new(),
            trials: false,
        }
    }

    /// This player with the trial matches (`auto+trials`) or without.
    pub fn with_trials(mut self, trials: bool) -> Self {
        self.trials = trials;
        self
    }
}

impl<M: StateMachine + 'static> Player for AutoPlayer<M> {
    fn start(&mut self, info: &MatchInfo) -> Result<()> {
        let t0 = Instant::now();
        let budget = strategy::profile_budget(info.start_clock);
        let state = self.machine.initial_state();
        let chosen = strategy::meta_choice(
            &self.machine,
            &state,
            info.role,
            budget,
            info.play_clock,
            self.uct.clone(),
        );
        let chosen = if self.trials {
            // Half the start clock for the trials, the rest for the search's
            // own start.
            strategy::trial_choice(&self.machine, &state, chosen, t0 + info.start_clock / 2)
        } else {
            chosen
        };
        let mut inner: Box<dyn Player> = match chosen.searcher {
            Searcher::AlphaBeta(proof) => {
                // The player proves the game again in its own start, on a
                // table of its own: the profile's is freed first.
                drop(proof);
                let mut p = MinimaxPlayer::new(Arc::clone(&self.machine), Kind::Paranoid);
                if let Some(n) = self.uct.iterations() {
                    p = p.with_nodes(n);
                }
                Box::new(p)
            }
            Searcher::Uct(u) => Box::new(UctPlayer::new(Arc::clone(&self.machine), u)),
        };
        self.chosen = inner.name();
        tracing::info!("auto: {} ({})", self.chosen, chosen.why);
        let rest = MatchInfo {
            start_clock: info.start_clock.saturating_sub(t0.elapsed()),
            ..info.clone()
        };
        inner.start(&rest)?;
        self.inner = Some(inner);
        Ok(())
    }

    fn play(&mut self, previous: Option<&[Term]>, info: &MatchInfo) -> Result<Term> {
        if self.inner.is_none() {
            self.start(&MatchInfo {
                start_clock: std::time::Duration::ZERO,
                ..info.clone()
            })?;
        }
        match &mut self.inner {
            Some(p) => p.play(previous, info),
            None => bail!("the auto player has no configuration"),
        }
    }

    fn stop(&mut self, previous: &[Term], info: &MatchInfo) {
        if let Some(p) = &mut self.inner {
            p.stop(previous, info);
        }
    }

    fn name(&self) -> String {
        if self.trials {
            "auto+trials".into()
        } else {
            "auto".into()
        }
    }

    fn report(&self) -> Option<MoveReport> {
        self.inner.as_ref()?.report()
    }
}

#[cfg(test)]
mod tests {
    use super::super::{run_match, MatchEnd, PlayerSpec, RefereeConfig};
    use crate::reasoner::Engine;
    use std::time::Duration;

    /// UCT scored by the heuristic, its iterations fixed, plays legal moves to
    /// the end in every seat of one-player, turn-taking, simultaneous and
    /// three-player games.
    #[test]
    fn uct_scored_by_the_heuristic_plays_every_kind_of_game_to_the_end() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let games = [
            root.join("puzzles/buttons.kif"),
            root.join("puzzles/tictactoe.kif"),
            root.join("puzzles/rps3.kif"),
            root.join("../shared/games/tictactoe_3player.kif"),
        ];
        let cfg = RefereeConfig {
            start_clock: Duration::from_secs(120),
            play_clock: Duration::from_secs(120),
            engine: Engine::Prover,
            iterations: Some(40),
            ..RefereeConfig::default()
        };
        for path in games {
            let g = crate::gdl::load(&path).expect("loads");
            let spec: PlayerSpec = "uct+heuristic".parse().expect("a player");
            let rec = run_match(&g, vec![spec; g.roles.len()], &cfg).expect("the match runs");
            assert_eq!(rec.end, MatchEnd::Terminal, "{}", path.display());
            assert!(
                rec.errors.is_empty(),
                "{}: {:?}",
                path.display(),
                rec.errors
            );
        }
    }
}

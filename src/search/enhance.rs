//! The search enhancements of the GGP literature that live inside UCT, each a
//! switch of [`Enhancements`]:
//!
//! - **RAVE** (all-moves-as-first, Gelly & Silver 2007; Centurio's and
//!   CadiaPlayer's choice): every node also keeps, per role and move, the
//!   values of the iterations in which that role played the move anywhere
//!   below the node (in the tree or the playout). A move's score mixes its own
//!   mean with that AMAF mean by `beta = sqrt(k / (3n + k))`, so the AMAF
//!   value leads while the move has few visits of its own and fades after.
//! - **Progressive widening** (Centurio, after Chaslot's progressive
//!   unpruning): at a node with many moves only the best `k(N) = ceil(2
//!   N^0.4)` are open to selection, more as the node's visits `N` grow;
//!   ranked by AMAF mean with RAVE, else by history (MAST's mean of the move
//!   over all iterations, whatever the state).
//! - **MAST** (move-average sampling, CadiaPlayer): a table per tree of every
//!   (role, move)'s mean value over all iterations, whatever the state;
//!   playouts pick moves by a Gibbs (Boltzmann) distribution over those means.
//! - **Decisive moves** (Teytaud & Teytaud 2010): in a playout, a role alone
//!   on the move takes a move that wins at once.
//! - **Cut-off**: playouts stop after a fixed number of joint moves and are
//!   scored by the game's goals there (for games whose goal says something
//!   before the end; the player's meta-choice tests that).
//! - **Heuristic** ([`super::heuristic`]): where random playouts do not
//!   finish within the clock, the state a playout stops in is scored by the
//!   goal and the material the rules define; playouts stop at once (the
//!   leaf itself is scored) or after the cut-off's moves when one is set.
//! - **Prior** (progressive bias from the rules; Gelly & Silver's prior
//!   knowledge, Sancho's heuristic node values): each node the search adds
//!   starts with the heuristic's value of its state counted as a few visits
//!   on the edge into it; the playouts are unchanged and their outcomes
//!   take over as the node's own visits grow. For games whose playouts fit
//!   the clock but whose material says who is ahead.

use std::fmt;
use std::str::FromStr;

use anyhow::{bail, Result};
use hashbrown::HashMap;
use rand::rngs::SmallRng;
use rand::Rng;
use serde::Serialize;

use super::policy::{MoveStats, PlayoutPolicy};
use crate::reasoner::{RoleIdx, StateMachine};

/// Which enhancements a search runs; all off is plain UCT.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Enhancements {
    /// RAVE with this equivalence parameter `k` (the visits at which a move's
    /// own mean and its AMAF mean weigh about the same).
    pub rave: Option<f64>,
    /// Progressive widening, by AMAF rank with `rave`, else by MAST's history
    /// (needs one of them).
    pub widening: bool,
    /// MAST playouts with this Gibbs temperature, on values scaled to 0..1.
    pub mast: Option<f64>,
    /// Playouts cut off after this many joint moves.
    pub cutoff: Option<usize>,
    /// Decisive moves in playouts: a role alone on the move takes a move
    /// that wins at once (Teytaud & Teytaud 2010).
    pub decisive: bool,
    /// GIFL playouts: features learned from this many random walks before
    /// the search (see [`super::gifl`]).
    pub gifl: Option<usize>,
    /// Playouts scored by [`super::heuristic::Heuristic`], cut off after
    /// `cutoff` joint moves (none: the leaf itself is scored).
    pub heuristic: bool,
    /// Each node added starts with [`super::heuristic::Heuristic`]'s value
    /// of its state counted as this many visits.
    pub prior: Option<u32>,
    /// The heuristic (and the prior) count material against its owner: a
    /// game won by losing pieces ([`super::heuristic::Heuristic::against`]).
    pub against: bool,
    /// Transpositions merged: a state reached by several lines is one node
    /// (see [`super::tree`]).
    pub transpositions: bool,
    /// The prior is the heuristic's value relative to the root's
    /// ([`super::heuristic::Relative`]; needs `prior`).
    pub relative: bool,
    /// MAST's playouts take a move that has always finished the game with
    /// a win ([`MastTable::finishes`]; needs `mast`).
    pub finish: bool,
    /// A node added where a role has a sure win legal (a move the rules
    /// make a win wherever it is legal: the compiled network's analysis,
    /// [`crate::reasoner::StateMachine::sure_wins`]) is solved at once
    /// ([`super::node`]'s `solved_by_sure_win`).
    pub wins: bool,
    /// Playouts take a sure win where one is legal
    /// ([`crate::reasoner::PlayoutLimits`]'s `sure_wins`): cheap where
    /// `decisive` tries every move. On breakthrough neither it nor `wins`
    /// beat `uct+mast+widen` by more than chance (docs/benchmarks.md).
    pub rush: bool,
    /// Implicit minimax backups of [`super::heuristic::Heuristic`]'s values,
    /// weighing this much (`alpha`) against the playouts' mean at the
    /// mover's choice.
    pub minimax: Option<f64>,
}

/// RAVE's default equivalence parameter.
pub const RAVE_K: f64 = 500.0;
/// MAST's default temperature: CadiaPlayer's 10 on goals of 0..100.
pub const MAST_TAU: f64 = 0.1;
/// The default cut-off depth.
pub const CUTOFF: usize = 20;
/// GIFL's default number of training walks (Maligne's).
pub const GIFL_WALKS: usize = 500;
/// Implicit minimax's default weight (Lanctot et al. 2014 found 0.3-0.6
/// best on their games).
pub const MINIMAX_ALPHA: f64 = 0.4;
/// The prior's default weight, in visits.
pub const PRIOR_VISITS: u32 = 10;
/// Nodes with at most this many moves are never narrowed by widening.
const WIDEN_ABOVE: usize = 4;

impl Enhancements {
    /// Whether iterations must record the moves they play (RAVE and MAST learn
    /// from them).
    pub fn records(&self) -> bool {
        self.rave.is_some() || self.mast.is_some()
    }

    /// Whether playouts need a policy other than uniform random moves.
    pub fn steers_playouts(&self) -> bool {
        self.mast.is_some() || self.decisive || self.gifl.is_some()
    }

    pub fn is_plain(&self) -> bool {
        *self == Enhancements::default()
    }
}

impl FromStr for Enhancements {
    type Err = anyhow::Error;

    /// `rave`, `mast`, `widen`, `gifl`, `decisive`, `heuristic`, `prior` or
    /// `prior:N`, `against` (with `heuristic`, `prior` or `imb`), `tt`
    /// (transpositions merged), `finish` (with `mast`), `wins` (nodes
    /// solved by sure wins), `rush` (sure wins in playouts), `relative` (with
    /// `prior`), `imb` or `imb:A` (implicit minimax), `cutoff` or
    /// `cutoff:N`, joined by `+`
    /// (`rave+mast`); the empty string is plain UCT.
    fn from_str(s: &str) -> Result<Self> {
        let mut e = Enhancements::default();
        for part in s.split('+').filter(|p| !p.is_empty()) {
            match part.split_once(':') {
                None if part == "rave" => e.rave = Some(RAVE_K),
                None if part == "mast" => e.mast = Some(MAST_TAU),
                None if part == "widen" => e.widening = true,
                None if part == "cutoff" => e.cutoff = Some(CUTOFF),
                None if part == "decisive" => e.decisive = true,
                None if part == "gifl" => e.gifl = Some(GIFL_WALKS),
                None if part == "heuristic" => e.heuristic = true,
                None if part == "prior" => e.prior = Some(PRIOR_VISITS),
                None if part == "against" => e.against = true,
                None if part == "tt" => e.transpositions = true,
                None if part == "finish" => e.finish = true,
                None if part == "wins" => e.wins = true,
                None if part == "rush" => e.rush = true,
                None if part == "relative" => e.relative = true,
                None if part == "imb" => e.minimax = Some(MINIMAX_ALPHA),
                Some(("imb", a)) => match a.parse::<f64>() {
                    Ok(a) if (0.0..=1.0).contains(&a) => e.minimax = Some(a),
                    _ => bail!("imb:{a}: the weight must be a number from 0 to 1"),
                },
                Some(("prior", n)) => match n.parse::<u32>() {
                    Ok(n) if n > 0 => e.prior = Some(n),
                    _ => bail!("prior:{n}: the weight must be a positive number of visits"),
                },
                Some(("gifl", n)) => match n.parse::<usize>() {
                    Ok(n) if n > 0 => e.gifl = Some(n),
                    _ => bail!("gifl:{n}: the walks must be a positive number"),
                },
                Some(("cutoff", n)) => match n.parse::<usize>() {
                    Ok(n) if n > 0 => e.cutoff = Some(n),
                    _ => bail!("cutoff:{n}: the depth must be a positive number of moves"),
                },
                Some(("rave", k)) => match k.parse::<f64>() {
                    Ok(k) if k > 0.0 && k.is_finite() => e.rave = Some(k),
                    _ => bail!("rave:{k}: k must be a positive number"),
                },
                Some(("mast", t)) => match t.parse::<f64>() {
                    Ok(t) if t > 0.0 && t.is_finite() => e.mast = Some(t),
                    _ => bail!("mast:{t}: the temperature must be a positive number"),
                },
                _ => bail!(
                    "unknown enhancement {part:?}: expected rave, widen, mast, gifl, decisive, heuristic, prior (prior:N), against, relative, tt, finish, wins, rush, imb (imb:A) or cutoff (cutoff:N)"
                ),
            }
        }
        if e.against && !e.heuristic && e.prior.is_none() && e.minimax.is_none() {
            bail!("against turns the heuristic's material round: add heuristic, prior or imb");
        }
        if e.relative && e.prior.is_none() {
            bail!("relative makes the prior's value relative to the root's: add prior");
        }
        if e.finish && e.mast.is_none() {
            bail!("finish is learned by MAST's table: add mast");
        }
        if e.gifl.is_some() && e.mast.is_some() {
            bail!("gifl and mast both choose the playouts' moves: take one");
        }
        if e.widening && e.rave.is_none() && e.mast.is_none() {
            bail!(
                "widen ranks moves by their RAVE values or MAST's history: add rave or mast \
                 (uct+rave+widen, uct+mast+widen)"
            );
        }
        Ok(e)
    }
}

impl fmt::Display for Enhancements {
    /// The form [`Enhancements::from_str`] reads, defaults written short.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        match self.rave {
            Some(k) if k == RAVE_K => parts.push("rave".to_string()),
            Some(k) => parts.push(format!("rave:{k}")),
            None => {}
        }
        if self.widening {
            parts.push("widen".into());
        }
        match self.mast {
            Some(t) if t == MAST_TAU => parts.push("mast".to_string()),
            Some(t) => parts.push(format!("mast:{t}")),
            None => {}
        }
        match self.cutoff {
            Some(CUTOFF) => parts.push("cutoff".into()),
            Some(n) => parts.push(format!("cutoff:{n}")),
            None => {}
        }
        match self.gifl {
            Some(GIFL_WALKS) => parts.push("gifl".into()),
            Some(n) => parts.push(format!("gifl:{n}")),
            None => {}
        }
        if self.decisive {
            parts.push("decisive".into());
        }
        if self.heuristic {
            parts.push("heuristic".into());
        }
        match self.prior {
            Some(PRIOR_VISITS) => parts.push("prior".into()),
            Some(n) => parts.push(format!("prior:{n}")),
            None => {}
        }
        if self.against {
            parts.push("against".into());
        }
        if self.transpositions {
            parts.push("tt".into());
        }
        if self.finish {
            parts.push("finish".into());
        }
        if self.relative {
            parts.push("relative".into());
        }
        if self.wins {
            parts.push("wins".into());
        }
        if self.rush {
            parts.push("rush".into());
        }
        match self.minimax {
            Some(a) if a == MINIMAX_ALPHA => parts.push("imb".into()),
            Some(a) => parts.push(format!("imb:{a}")),
            None => {}
        }
        f.write_str(&parts.join("+"))
    }
}

/// RAVE's choice among one role's moves: `stats` the moves' own statistics,
/// `amaf` their AMAF statistics (empty before the node's first backup),
/// `visits` the node's. An untried move scores its AMAF mean (1 when it has
/// none: first-play urgency) plus the exploration of a move tried once.
pub fn select_rave(
    stats: &[MoveStats],
    amaf: &[MoveStats],
    visits: u64,
    k: f64,
    exploration: f64,
    widening: bool,
    rng: &mut SmallRng,
) -> usize {
    let ln_n = ((visits + 1) as f64).ln();
    let amaf_of = |i: usize| amaf.get(i).copied().unwrap_or_default();
    let score = |i: usize| {
        let s = stats[i];
        let a = amaf_of(i);
        let a_mean = if a.visits > 0 { a.mean() } else { 1.0 };
        if s.visits == 0 {
            return a_mean + exploration * ln_n.sqrt();
        }
        let n = s.visits as f64;
        let beta = if a.visits > 0 {
            (k / (3.0 * n + k)).sqrt()
        } else {
            0.0
        };
        (1.0 - beta) * s.mean() + beta * a_mean + exploration * (ln_n / n).sqrt()
    };
    let open = if widening {
        open_moves(stats.len(), visits)
    } else {
        stats.len()
    };
    let mut best = 0;
    let mut best_v = f64::NEG_INFINITY;
    if open >= stats.len() {
        for i in 0..stats.len() {
            let v = score(i) + rng.gen::<f64>() * 1e-9;
            if v > best_v {
                best_v = v;
                best = i;
            }
        }
        return best;
    }
    // Widening: the `open` moves of highest AMAF mean (then most visited).
    let mut order: Vec<usize> = (0..stats.len()).collect();
    let rank = |i: usize| {
        let a = amaf_of(i);
        (if a.visits > 0 { a.mean() } else { 0.5 }, stats[i].visits)
    };
    order.select_nth_unstable_by(open - 1, |&x, &y| {
        let (ax, vx) = rank(x);
        let (ay, vy) = rank(y);
        ay.total_cmp(&ax).then(vy.cmp(&vx))
    });
    for &i in &order[..open] {
        let v = score(i) + rng.gen::<f64>() * 1e-9;
        if v > best_v {
            best_v = v;
            best = i;
        }
    }
    best
}

/// How many of `moves` moves progressive widening leaves open at a node of
/// `visits` visits: `ceil(2 (N+1)^0.4)`, all of them at nodes of few moves.
fn open_moves(moves: usize, visits: u64) -> usize {
    if moves > WIDEN_ABOVE {
        ((2.0 * ((visits + 1) as f64).powf(0.4)).ceil() as usize).min(moves)
    } else {
        moves
    }
}

/// Progressive widening's scratch, kept to avoid allocating per node.
#[derive(Default)]
pub struct WidenScratch {
    open: Vec<usize>,
    sub: Vec<MoveStats>,
    history: Vec<f64>,
}

/// Progressive widening by history: `policy` chooses among the moves open at
/// this node's `visits`, the best ranked by `history` (a move's mean over all
/// iterations, MAST's table; asked once per move) and then by their own visits.
pub fn select_widened(
    stats: &[MoveStats],
    history: impl Fn(usize) -> f64,
    visits: u64,
    policy: &dyn super::policy::TreePolicy,
    rng: &mut SmallRng,
    w: &mut WidenScratch,
) -> usize {
    let k = open_moves(stats.len(), visits);
    if k >= stats.len() {
        return policy.select(stats, visits, rng);
    }
    w.history.clear();
    w.history.extend((0..stats.len()).map(history));
    let h = &w.history;
    w.open.clear();
    w.open.extend(0..stats.len());
    w.open.select_nth_unstable_by(k - 1, |&x, &y| {
        h[y].total_cmp(&h[x])
            .then(stats[y].visits.cmp(&stats[x].visits))
    });
    w.open.truncate(k);
    w.sub.clear();
    w.sub.extend(w.open.iter().map(|&i| stats[i]));
    w.open[policy.select(&w.sub, visits, rng)]
}

/// MAST's table: per (role, move), its value over every iteration that played
/// it, in any state, and how often it ended the game.
pub struct MastTable<M: StateMachine> {
    map: HashMap<(RoleIdx, M::Move), MastEntry>,
}

/// One (role, move)'s line in [`MastTable`].
#[derive(Clone, Copy, Debug, Default)]
struct MastEntry {
    stats: MoveStats,
    /// Times the move ended the game with the best goal for its role.
    won: u32,
    /// Times it did anything else (the game went on, or ended otherwise).
    other: u32,
}

/// Times a move must have ended the game with a win, and never done
/// anything else, to count as finishing ([`MastTable::finishes`]).
pub const FINISH_SEEN: u32 = 2;

impl MastEntry {
    /// See [`MastTable::finishes`].
    fn finishes(&self) -> bool {
        self.won >= FINISH_SEEN && self.other == 0
    }
}

impl<M: StateMachine> Default for MastTable<M> {
    fn default() -> Self {
        MastTable {
            map: HashMap::new(),
        }
    }
}

impl<M: StateMachine> MastTable<M> {
    /// Counts one iteration of value `value` for `role`'s move `m`; `ended`
    /// when the move was part of the joint move that ended the game.
    pub fn add(&mut self, role: RoleIdx, m: &M::Move, value: f64, ended: bool) {
        let e = self.map.entry((role, m.clone())).or_default();
        e.stats.visits += 1;
        e.stats.sum += value;
        if ended && value >= 1.0 {
            e.won += 1;
        } else {
            e.other += 1;
        }
    }

    /// The statistics of `role`'s move `m` (zero when never played).
    pub fn get(&self, role: RoleIdx, m: &M::Move) -> MoveStats {
        self.map
            .get(&(role, m.clone()))
            .map(|e| e.stats)
            .unwrap_or_default()
    }

    /// `role`'s move `m` ended the game with its best goal every time it
    /// was played, at least [`FINISH_SEEN`] times: a move to the last row
    /// in breakthrough, never a connect-four drop (which wins only on some
    /// boards). Learned, so no move is tried ahead to find it.
    pub fn finishes(&self, role: RoleIdx, m: &M::Move) -> bool {
        self.map
            .get(&(role, m.clone()))
            .is_some_and(MastEntry::finishes)
    }

    /// Every (role, move) that [`MastTable::finishes`].
    pub fn finishing(&self) -> impl Iterator<Item = (RoleIdx, &M::Move)> {
        self.map
            .iter()
            .filter(|(_, e)| e.finishes())
            .map(|((r, m), _)| (*r, m))
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

/// Playout moves by MAST: a Gibbs distribution over each legal move's mean in
/// the table, `exp(Q / tau)`; a move never played counts as a win (1), so
/// every move gets tried. With `finish`, a move that has always finished
/// the game with a win ([`MastTable::finishes`]) is taken at once.
pub struct MastPolicy<'a, M: StateMachine> {
    pub table: &'a MastTable<M>,
    pub tau: f64,
    pub finish: bool,
}

impl<M: StateMachine> PlayoutPolicy<M> for MastPolicy<'_, M> {
    fn choose(
        &self,
        _machine: &M,
        _state: &M::State,
        role: RoleIdx,
        legal: &[M::Move],
        rng: &mut SmallRng,
    ) -> usize {
        self.pick(role, legal, &mut Vec::new(), rng)
    }
}

impl<M: StateMachine> MastPolicy<'_, M> {
    /// [`PlayoutPolicy::choose`] with the moves' values looked up once, into
    /// `q` (scratch kept by a caller that picks many times).
    pub fn pick(
        &self,
        role: RoleIdx,
        legal: &[M::Move],
        q: &mut Vec<f64>,
        rng: &mut SmallRng,
    ) -> usize {
        if legal.len() == 1 {
            return 0;
        }
        q.clear();
        for (i, m) in legal.iter().enumerate() {
            let Some(e) = self.table.map.get(&(role, m.clone())) else {
                q.push(1.0);
                continue;
            };
            if self.finish && e.finishes() {
                return i;
            }
            q.push(if e.stats.visits == 0 {
                1.0
            } else {
                e.stats.mean()
            });
        }
        gibbs(q.iter().copied(), self.tau, rng)
    }
}

/// Decisive moves: where `role` alone has a choice, a move after which the
/// game is over with goal 100 for it is taken; otherwise `inner` chooses.
pub struct DecisivePolicy<'a, M: StateMachine> {
    pub inner: &'a dyn PlayoutPolicy<M>,
}

impl<M: StateMachine> PlayoutPolicy<M> for DecisivePolicy<'_, M> {
    fn choose(
        &self,
        machine: &M,
        state: &M::State,
        role: RoleIdx,
        legal: &[M::Move],
        rng: &mut SmallRng,
    ) -> usize {
        if legal.len() > 1 {
            let mut joint = Vec::with_capacity(machine.num_roles());
            let mut alone = true;
            let mut buf = Vec::new();
            for r in 0..machine.num_roles() {
                if r == role {
                    joint.push(legal[0].clone());
                    continue;
                }
                machine.legal_moves(state, r, &mut buf);
                if buf.len() != 1 {
                    alone = false;
                    break;
                }
                joint.push(buf[0].clone());
            }
            if alone {
                for (i, mv) in legal.iter().enumerate() {
                    joint[role] = mv.clone();
                    let next = machine.next_state(state, &joint);
                    if machine.is_terminal(&next) && machine.goal(&next, role) == Some(100) {
                        return i;
                    }
                }
            }
        }
        self.inner.choose(machine, state, role, legal, rng)
    }
}

/// An index drawn with probability proportional to `exp(q / tau)`.
pub fn gibbs(q: impl Iterator<Item = f64> + Clone, tau: f64, rng: &mut SmallRng) -> usize {
    let max = q.clone().fold(f64::NEG_INFINITY, f64::max);
    let total: f64 = q.clone().map(|v| ((v - max) / tau).exp()).sum();
    let mut x = rng.gen::<f64>() * total;
    let mut last = 0;
    for (i, v) in q.enumerate() {
        let w = ((v - max) / tau).exp();
        if x < w {
            return i;
        }
        x -= w;
        last = i;
    }
    last
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn enhancements_read_and_print_alike() {
        for s in [
            "",
            "rave",
            "rave+widen",
            "widen+mast",
            "mast",
            "rave+mast+cutoff",
            "cutoff:7",
            "rave:50",
            "widen+mast+prior",
            "prior:3",
            "heuristic+against",
            "widen+mast+prior+against",
            "widen+mast+wins",
            "mast+tt+wins+rush",
        ] {
            let e: Enhancements = s.parse().unwrap();
            assert_eq!(e.to_string(), s);
        }
        assert!("widen".parse::<Enhancements>().is_err());
        assert!("rave+fast".parse::<Enhancements>().is_err());
        assert!("cutoff:0".parse::<Enhancements>().is_err());
        assert!("prior:0".parse::<Enhancements>().is_err());
        assert!("mast+against".parse::<Enhancements>().is_err());
    }

    #[test]
    fn gibbs_follows_the_values_and_the_temperature() {
        let mut rng = SmallRng::seed_from_u64(1);
        let q = [0.0, 1.0];
        let hot = (0..10_000)
            .filter(|_| gibbs(q.iter().copied(), 100.0, &mut rng) == 1)
            .count();
        let cold = (0..10_000)
            .filter(|_| gibbs(q.iter().copied(), 0.1, &mut rng) == 1)
            .count();
        // exp(10) / (1 + exp(10)) of draws at tau 0.1; about half at 100.
        assert!((4_500..5_500).contains(&hot), "{hot}");
        assert!(cold > 9_990, "{cold}");
    }

    #[test]
    fn rave_prefers_a_move_whose_amaf_value_is_high_until_its_own_visits_say_otherwise() {
        let mut rng = SmallRng::seed_from_u64(1);
        let ms = |visits, sum| MoveStats { visits, sum };
        // Equal own statistics; move 1 has the better AMAF value.
        let stats = [ms(10, 5.0), ms(10, 5.0)];
        let amaf = [ms(100, 20.0), ms(100, 80.0)];
        assert_eq!(
            select_rave(&stats, &amaf, 20, 500.0, 0.0, false, &mut rng),
            1
        );
        // With many visits of its own, move 0's better mean wins.
        let stats = [ms(100_000, 70_000.0), ms(100_000, 50_000.0)];
        assert_eq!(
            select_rave(&stats, &amaf, 200_000, 500.0, 0.0, false, &mut rng),
            0
        );
        // Widening: of 10 untried moves at the node's first visits only the
        // two best by AMAF are open.
        let stats = [MoveStats::default(); 10];
        let mut amaf = [ms(10, 1.0); 10];
        amaf[7] = ms(10, 9.0);
        amaf[3] = ms(10, 8.0);
        for _ in 0..20 {
            let i = select_rave(&stats, &amaf, 0, 500.0, 0.7, true, &mut rng);
            assert!(i == 7 || i == 3, "{i}");
        }
    }

    #[test]
    fn widening_by_history_opens_the_best_ranked_moves_as_visits_grow() {
        let mut rng = SmallRng::seed_from_u64(2);
        let ucb = super::super::policy::Ucb1 { exploration: 0.7 };
        let history = |i: usize| match i {
            7 => 0.9,
            3 => 0.8,
            5 => 0.7,
            _ => 0.1,
        };
        let mut w = WidenScratch::default();
        let mut pick = |stats: &[MoveStats], visits, rng: &mut SmallRng| {
            select_widened(stats, history, visits, &ucb, rng, &mut w)
        };
        // Ten untried moves at a node's first visit: two open, the best two
        // by history.
        let stats = [MoveStats::default(); 10];
        for _ in 0..20 {
            let i = pick(&stats, 0, &mut rng);
            assert!(i == 7 || i == 3, "{i}");
        }
        // ceil(2 * 4^0.4) = 4 open at three visits: the third best joins (the
        // fourth is a tie of the rest, broken by visits: none).
        let mut seen = [false; 10];
        for _ in 0..200 {
            seen[pick(&stats, 3, &mut rng)] = true;
        }
        assert!(seen[7] && seen[3] && seen[5], "{seen:?}");
        assert_eq!(seen.iter().filter(|&&x| x).count(), 4, "{seen:?}");
        // At many visits every move is open, and UCB picks the untried one.
        let mut stats = [MoveStats {
            visits: 100,
            sum: 50.0,
        }; 10];
        stats[0] = MoveStats::default();
        assert_eq!(pick(&stats, 1000, &mut rng), 0);
        // Few moves are never narrowed.
        let few = [
            MoveStats {
                visits: 1,
                sum: 1.0,
            },
            MoveStats::default(),
        ];
        assert_eq!(pick(&few, 1, &mut rng), 1);
    }
}

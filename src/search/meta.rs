//! Meta-choice: what a game allows, measured in a moment at the start clock
//! ([`profile`]), and the search configuration chosen from it ([`choose`]),
//! with the reasons in words for the log.
//!
//! Measured from random playouts of the initial state: playouts a second,
//! their length, the branching of the roles that choose, whether moves are
//! simultaneous, and whether the goal relation says something before the end
//! (defined at nearly every playout's halfway state, not constant, and
//! correlated with the final goal: goal stability in the sense of
//! CadiaPlayer and Sancho), and whether material ([`Heuristic`]) is good or
//! bad for its owner at the end. The rate counts the walks alone, not the
//! goals the profile reads along them. Then, in a turn-taking game, paranoid alpha-beta is given the
//! rest of the time: a tree it solves is played by it, proven.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;

use super::enhance::{Enhancements, CUTOFF, MAST_TAU};
use super::heuristic::{self, Heuristic};
use super::minimax::{Kind, Minimax};
use crate::reasoner::{RoleIdx, StateMachine};

/// Random playouts a second from which MAST's playouts are chosen, in
/// two-player games. MAST learns each move's average over the playouts, and
/// its bias is only as good as those averages. At a second a move
/// (docs/benchmarks.md, 40 matches each against plain UCT, with the
/// profile's rates) it scored 67.5% on connect four, 65% on breakthrough and
/// 60% at simultaneous moves, whose playouts run well above this rate, but
/// 40% on checkers, whose playouts run below it; against two plain UCTs in
/// three-player connect four 43.5 over 62 matches, where an equal player's
/// mean goal is 50, so games of more than two players get none. At 0.2 s a
/// move, before its playouts ran on the engine's own loop, it lost on every
/// game.
pub const MAST_MIN_PLAYOUTS_PER_S: f64 = 5_000.0;

/// How closely the goal halfway through a random playout must predict the
/// final goal for playouts to be cut off and scored by it. Where random
/// playouts run at [`MAST_MIN_PLAYOUTS_PER_S`] or more, the playouts' own
/// outcomes are plentiful and only a close predictor (r >= 0.9) is worth
/// their bias; below that a looser one pays: on checkers (goal = who has
/// more pieces, r = 0.62, slow random playouts of 100 moves) `uct+cutoff`
/// beat plain UCT (docs/benchmarks.md).
pub const CUTOFF_MIN_CORRELATION: f64 = 0.9;
/// [`CUTOFF_MIN_CORRELATION`] where random playouts are slow.
pub const CUTOFF_MIN_CORRELATION_SLOW: f64 = 0.5;

/// What the game allows, from the initial state.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Profile {
    pub roles: usize,
    pub playouts: u64,
    pub playouts_per_s: f64,
    /// Mean length of a random playout, in joint moves.
    pub depth: f64,
    /// Mean number of legal moves of a role with a choice.
    pub branching: f64,
    /// Some state of the playouts had two roles with a choice.
    pub simultaneous: bool,
    /// Correlation of the goal halfway through a playout with the final one
    /// (over roles and playouts); `None` when the goal is not defined at
    /// nearly every playout's halfway state, or never varies.
    pub goal_correlation: Option<f64>,
    /// Correlation of a role's material lead at the end of a playout
    /// ([`Heuristic::leads`]) with its final goal (over roles and playouts);
    /// `None` where no place holds material or either side never varies.
    /// Negative in games won by losing pieces.
    pub material_correlation: Option<f64>,
    /// Sure wins the engine reads off the rules, over all roles
    /// ([`StateMachine::sure_wins`]): moves that win wherever legal.
    pub sure_wins: usize,
    /// Paranoid alpha-beta's proven value of the game for our role, when its
    /// slice of the time sufficed (turn-taking games only).
    pub proven: Option<f64>,
}

impl Profile {
    /// The goal relation scores non-terminal states well enough to stop a
    /// playout early and score it by the goal: halfway through a playout it
    /// predicts the final goal closely.
    pub fn goal_informative(&self) -> bool {
        let least = if self.playouts_per_s < MAST_MIN_PLAYOUTS_PER_S {
            CUTOFF_MIN_CORRELATION_SLOW
        } else {
            CUTOFF_MIN_CORRELATION
        };
        self.goal_correlation.is_some_and(|c| c >= least)
    }

    /// Material counts against its owner: at the end of the random
    /// playouts, the more a role holds the lower its goal (r <=
    /// [`MATERIAL_AGAINST`]).
    pub fn material_against(&self) -> bool {
        self.material_correlation
            .is_some_and(|r| r <= MATERIAL_AGAINST)
    }
}

/// The correlation of material with the final goal at or below which the
/// heuristic counts material against its owner. Games whose material is
/// good show a positive one (chess, breakthrough, checkers); suicide
/// othello, won by the fewer discs, a strongly negative one. The margin
/// keeps noise from a few playouts from turning a game round.
pub const MATERIAL_AGAINST: f64 = -0.3;

/// The configuration chosen.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Choice {
    /// UCT with these enhancements.
    Uct(Enhancements),
    /// Alpha-beta, which proved the game's value at the start.
    AlphaBeta,
}

/// Measures `machine` from `state` for `role` within about `budget` (the
/// playouts take at most half, alpha-beta the rest). Deterministic but for
/// the clock: the playouts are seeded.
pub fn profile<M: StateMachine + 'static>(
    machine: &Arc<M>,
    state: &M::State,
    role: RoleIdx,
    budget: Duration,
) -> Profile {
    profile_keeping(machine, state, role, budget).0
}

/// [`profile`], also giving back the alpha-beta searcher when it proved the
/// game: its table holds the proof, so the player answers from it at once.
pub fn profile_keeping<M: StateMachine + 'static>(
    machine: &Arc<M>,
    state: &M::State,
    role: RoleIdx,
    budget: Duration,
) -> (Profile, Option<Minimax<M>>) {
    let t0 = Instant::now();
    let mut p = walks(&**machine, state, Some(t0 + budget / 2), 5_000);
    let ab_end = t0 + budget;
    // Paranoid alpha-beta lets the others answer knowing our move: at
    // simultaneous moves its value is not the game's.
    if !p.simultaneous && Instant::now() < ab_end {
        let mut ab = Minimax::new(Arc::clone(machine), role, Kind::Paranoid);
        if let Some(a) = ab.solve(state, Some(ab_end), None) {
            if a.complete {
                p.proven = Some(a.value);
                return (p, Some(ab));
            }
        }
    }
    (p, None)
}

/// The profile's random playouts from `state`: at most `playouts` of them,
/// and none begun or finished after `end` (a playout cut short by it is not
/// counted). Seeded, so a count without a clock gives the same profile on
/// every machine but for its rate.
pub fn walks<M: StateMachine>(
    m: &M,
    state: &M::State,
    end: Option<Instant>,
    playouts: u64,
) -> Profile {
    let roles = m.num_roles();
    let mut p = Profile {
        roles,
        sure_wins: (0..roles).map(|r| m.sure_wins(r).len()).sum(),
        ..Profile::default()
    };
    let mut rng = SmallRng::seed_from_u64(0x5eed);
    let past = |end: Option<Instant>| end.is_some_and(|e| Instant::now() >= e);
    let (mut steps, mut choice_points, mut branching_sum) = (0u64, 0u64, 0u64);
    let (mut sampled, mut defined) = (0u64, 0u64);
    let mut pairs: Vec<(f64, f64)> = Vec::new();
    let material = Heuristic::new(m);
    let mut material_pairs: Vec<(f64, f64)> = Vec::new();
    // The time of the walks alone: the goals read below are the profile's
    // own questions, not a playout's work, and on games whose goal counts
    // the board they cost more than the walk (reversi's rate read 14 times
    // too low while each step's goals were asked).
    let mut walking = Duration::ZERO;
    let mut buf = Vec::new();
    let mut line: Vec<M::State> = Vec::new();
    while !past(end) && p.playouts < playouts {
        let walk_start = Instant::now();
        let mut s = state.clone();
        line.clear();
        let mut ended = true;
        while !m.is_terminal(&s) {
            if line.len() >= 500 || past(end) {
                ended = false;
                break;
            }
            line.push(s.clone());
            let mut joint = Vec::with_capacity(roles);
            let mut choosers = 0;
            for r in 0..roles {
                m.legal_moves(&s, r, &mut buf);
                if buf.is_empty() {
                    break;
                }
                if buf.len() > 1 {
                    choosers += 1;
                    choice_points += 1;
                    branching_sum += buf.len() as u64;
                }
                joint.push(buf[rng.gen_range(0..buf.len())].clone());
            }
            if joint.len() < roles {
                break;
            }
            p.simultaneous |= choosers > 1;
            s = m.next_state(&s, &joint);
        }
        walking += walk_start.elapsed();
        if !ended {
            break;
        }
        p.playouts += 1;
        steps += line.len() as u64;
        let finals: Vec<Option<u8>> = (0..roles).map(|r| m.goal(&s, r)).collect();
        if let Some(mid) = line.get(line.len() / 2) {
            let goals: Vec<Option<u8>> = (0..roles).map(|r| m.goal(mid, r)).collect();
            sampled += 1;
            defined += u64::from(goals.iter().all(Option::is_some));
            for (g, f) in goals.iter().zip(&finals) {
                if let (Some(a), Some(b)) = (g, f) {
                    pairs.push((f64::from(*a), f64::from(*b)));
                }
            }
        }
        if let Some(leads) = material.leads(m, &s) {
            for (lead, f) in leads.iter().zip(&finals) {
                if let Some(b) = f {
                    material_pairs.push((*lead, f64::from(*b)));
                }
            }
        }
    }
    let secs = walking.as_secs_f64().max(1e-9);
    p.playouts_per_s = p.playouts as f64 / secs;
    p.depth = steps as f64 / p.playouts.max(1) as f64;
    p.branching = branching_sum as f64 / choice_points.max(1) as f64;
    if sampled > 0 && defined * 10 >= sampled * 9 {
        p.goal_correlation = correlation(&pairs);
    }
    p.material_correlation = correlation(&material_pairs);
    p
}

/// Pearson's correlation; `None` when either side never varies.
fn correlation(pairs: &[(f64, f64)]) -> Option<f64> {
    let n = pairs.len() as f64;
    if pairs.len() < 10 {
        return None;
    }
    let (mx, my) = pairs
        .iter()
        .fold((0.0, 0.0), |(a, b), (x, y)| (a + x / n, b + y / n));
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (x, y) in pairs {
        sxy += (x - mx) * (y - my);
        sxx += (x - mx) * (x - mx);
        syy += (y - my) * (y - my);
    }
    (sxx > 1e-9 && syy > 1e-9).then(|| sxy / (sxx * syy).sqrt())
}

/// The configuration for a game so profiled, and why.
///
/// - A turn-taking game that alpha-beta proved at the start is played by
///   alpha-beta: every move it makes keeps the proven value.
/// - Otherwise UCT, with MAST playouts where random playouts run at
///   [`MAST_MIN_PLAYOUTS_PER_S`] or more in a two-player game, and in a
///   turn-taking one progressive widening ranked by MAST's history too: at a
///   second a move against plain UCT (docs/benchmarks.md, 40 matches each)
///   `uct+mast+widen` scored 77.5 on connect four and 67.5 on breakthrough
///   (`uct+mast` 67.5 and 65.0), at simultaneous moves 36.2 (`uct+mast`
///   60.0), and widening costs no iterations. RAVE and decisive playouts
///   are options (`uct+rave`, ...), not chosen: in the arena series of
///   docs/benchmarks.md neither beat plain UCT, and they cost iterations the
///   clock does not give back. GIFL is not chosen either: it is the best
///   option on breakthrough (80.0) and loses on connect four (36.2), and
///   nothing the profile measures tells the two apart yet.
/// - The profile's other findings (an informative goal, long playouts) are
///   logged with the choice; a cut-off is chosen where the goal halfway
///   predicts the final goal (r >= 0.9, or 0.5 where random playouts are
///   slow, see [`CUTOFF_MIN_CORRELATION`]) and playouts are long.
pub fn choose(p: &Profile) -> (Choice, String) {
    if let Some(v) = p.proven {
        return (
            Choice::AlphaBeta,
            format!("alpha-beta proved the game's value ({v}) at the start"),
        );
    }
    let mut e = Enhancements::default();
    let mut why = vec![format!(
        "{:.0} playouts/s, {:.1} moves deep, branching {:.1}{}{}",
        p.playouts_per_s,
        p.depth,
        p.branching,
        if p.simultaneous {
            ", simultaneous moves"
        } else {
            ""
        },
        match p.goal_correlation {
            Some(r) => format!(", goal halfway against final goal r = {r:.2}"),
            None => ", no goal before the end".into(),
        }
    )];
    if p.sure_wins > 0 {
        // Measured and not chosen: `wins`, `rush` and both together came
        // within chance of `uct+mast+widen` on breakthrough or below it
        // (docs/benchmarks.md).
        why.push(format!("{} sure wins (not used)", p.sure_wins));
    }
    if p.goal_informative() && p.depth > 2.0 * CUTOFF as f64 {
        e.cutoff = Some(CUTOFF);
        why.push(format!(
            "cut-off at {CUTOFF}: the goal halfway predicts the final one"
        ));
    }
    if p.roles > 2 {
        why.push(format!(
            "no proof at the start; {} players: UCT without MAST (against two plain UCTs in three-player connect four it scored below an equal share)",
            p.roles
        ));
    } else if p.roles == 2 && p.playouts_per_s >= MAST_MIN_PLAYOUTS_PER_S {
        e.mast = Some(MAST_TAU);
        if p.simultaneous {
            why.push("no proof at the start: UCT with MAST playouts (no widening at simultaneous moves: it scored below plain UCT there)".into());
        } else {
            e.widening = true;
            why.push(
                "no proof at the start: UCT with MAST playouts and widening ranked by their history"
                    .into(),
            );
        }
    } else if p.roles == 2 {
        why.push(format!(
            "no proof at the start; too few playouts for MAST's averages (under {MAST_MIN_PLAYOUTS_PER_S}/s): UCT without MAST"
        ));
    }
    (Choice::Uct(e), why.join("; "))
}

/// [`choose`] for a match whose moves have `move_time` each: where UCT is
/// chosen in a game of several roles and whole random playouts do not fit
/// a move ([`heuristic::playouts_fit`]: fewer than
/// [`heuristic::MIN_PLAYOUTS_PER_MOVE`] at the profile's rate), the search
/// scores the states it reaches by the heuristic instead
/// ([`Enhancements::heuristic`]), its leaves themselves (no cut-off, no
/// MAST: neither has playouts to work on). One-player games keep their
/// choice: the line to the goal is what they search for.
pub fn choose_for_clock(p: &Profile, move_time: Duration) -> (Choice, String) {
    let (choice, why) = choose(p);
    let secs = move_time.as_secs_f64();
    match choice {
        Choice::Uct(_) if p.roles > 1 && !heuristic::playouts_fit(p.playouts_per_s, secs) => {
            let e = Enhancements {
                heuristic: true,
                against: p.material_against(),
                ..Enhancements::default()
            };
            let mut why = format!(
                "{why}; {:.0} whole playouts fit a move of {secs:.1} s (under {}): the search scores the states it reaches by the heuristic",
                p.playouts_per_s * secs,
                heuristic::MIN_PLAYOUTS_PER_MOVE
            );
            if let (true, Some(r)) = (e.against, p.material_correlation) {
                why.push_str(&format!(
                    ", material counted against its owner (its lead at the end of a playout against the final goal: r = {r:.2})"
                ));
            }
            (Choice::Uct(e), why)
        }
        _ => (choice, why),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reasoner::Propnet;

    /// Fast playouts in a two-player game: MAST, and widening by its history
    /// where the roles take turns, none at simultaneous moves; three players
    /// get neither.
    #[test]
    fn fast_two_player_games_get_mast_and_turn_taking_ones_widening() {
        let fast = |roles, simultaneous| Profile {
            roles,
            playouts: 1000,
            playouts_per_s: 40_000.0,
            depth: 30.0,
            branching: 7.0,
            simultaneous,
            ..Profile::default()
        };
        let uct = |p: &Profile| match choose(p) {
            (Choice::Uct(e), _) => e,
            (c, why) => panic!("{c:?}: {why}"),
        };
        let turns = uct(&fast(2, false));
        assert!(turns.mast.is_some() && turns.widening, "{turns:?}");
        let simultaneous = uct(&fast(2, true));
        assert!(simultaneous.mast.is_some() && !simultaneous.widening);
        let three = uct(&fast(3, false));
        assert!(three.mast.is_none() && !three.widening);
        let slow = uct(&Profile {
            playouts_per_s: 2_000.0,
            ..fast(2, false)
        });
        assert!(slow.mast.is_none() && !slow.widening);
    }

    /// The clock decides the heuristic: a fast game keeps today's choice at
    /// any clock of a second or more; a slow one (chess on the prover) is
    /// scored by the heuristic at a short clock and not at a long one; a
    /// one-player game and a proven one keep theirs.
    #[test]
    fn the_heuristic_is_chosen_where_whole_playouts_do_not_fit_the_clock() {
        let profile = |roles, playouts_per_s| Profile {
            roles,
            playouts: 10,
            playouts_per_s,
            depth: 60.0,
            branching: 20.0,
            ..Profile::default()
        };
        let second = Duration::from_secs(1);
        for p in [profile(2, 40_000.0), profile(2, 31.0), profile(3, 2_000.0)] {
            assert_eq!(choose_for_clock(&p, second).0, choose(&p).0, "{p:?}");
        }
        let slow = profile(2, 4.0);
        let (c, why) = choose_for_clock(&slow, 2 * second);
        assert!(matches!(c, Choice::Uct(e) if e.heuristic), "{why}");
        assert_eq!(choose_for_clock(&slow, 10 * second).0, choose(&slow).0);
        assert_eq!(
            choose_for_clock(&profile(1, 4.0), 2 * second).0,
            choose(&profile(1, 4.0)).0
        );
        let none_finished = profile(2, 0.0);
        assert!(
            matches!(choose_for_clock(&none_finished, 60 * second).0, Choice::Uct(e) if e.heuristic)
        );
        let proven = Profile {
            proven: Some(100.0),
            ..slow
        };
        assert_eq!(choose_for_clock(&proven, second).0, Choice::AlphaBeta);
    }

    fn net(file: &str) -> Propnet {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../shared/games")
            .join(file);
        Propnet::new(crate::gdl::load(&path).expect("loads")).expect("compiles")
    }

    /// Forty seeded random playouts, counted, not timed: at their end a
    /// role's material rises with its goal in othello, reversi and
    /// checkers and falls with it in the suicide variants, where the
    /// heuristic chosen for a clock no playout fits counts it against its
    /// owner, and says so.
    #[test]
    fn material_counts_against_its_owner_in_games_won_by_losing_pieces() {
        for game in ["othelloSuicide.kif", "reversiSuicide.kif"] {
            let m = net(game);
            let p = walks(&m, &m.initial_state(), None, 40);
            assert_eq!(p.playouts, 40, "{game}");
            assert!(p.material_against(), "{game}: {p:?}");
            let slow = Profile {
                playouts_per_s: 1.0,
                ..p
            };
            let (c, why) = choose_for_clock(&slow, Duration::from_secs(2));
            assert!(
                matches!(c, Choice::Uct(e) if e.heuristic && e.against),
                "{game}: {c:?}"
            );
            assert!(why.contains("material counted against its owner"), "{why}");
        }
        for game in ["Othello.kif", "reversi.kif", "checkers.kif"] {
            let m = net(game);
            let p = walks(&m, &m.initial_state(), None, 40);
            let r = p.material_correlation.expect("material");
            assert!(r > 0.5, "{game}: r = {r}");
            let slow = Profile {
                playouts_per_s: 1.0,
                ..p
            };
            let (c, _) = choose_for_clock(&slow, Duration::from_secs(2));
            assert!(
                matches!(c, Choice::Uct(e) if e.heuristic && !e.against),
                "{game}: {c:?}"
            );
        }
    }
}

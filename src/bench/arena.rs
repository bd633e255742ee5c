//! A player's strength against another over a series of matches refereed by
//! the [`arena`](crate::arena) (`ggp-asp bench arena`): by default UCT against
//! the baselines, or any player (`uct+rave+mast`, `alphabeta`) against any.

use std::collections::BTreeMap;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::arena::{run_match, MatchRecord, PlayerSpec, RefereeConfig};
use crate::gdl::Game;
use crate::show::plot;

/// One player against one opponent on one game.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ArenaResult {
    pub game: String,
    /// The player measured (`uct` unless asked otherwise).
    pub player: String,
    pub opponent: String,
    pub matches: usize,
    /// The player's mean goal, 0..100.
    pub mean_score: f64,
    /// Half width of the 95% confidence interval of the mean (normal approximation).
    pub ci95: f64,
    /// The player's goal in each match.
    pub scores: Vec<u8>,
    /// Games of three roles or more: the player head to head with each
    /// opponent, 0..100 (per match and opponent 100 when the player's goal is
    /// higher, 50 when equal, 0 when lower; the mean over opponents and
    /// matches). An equal player scores 50 here, where its mean goal is a
    /// share of the points (a third of them with three roles).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pairwise: Option<f64>,
    /// Half width of the 95% interval of `pairwise` (over matches).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pairwise_ci95: Option<f64>,
    /// Errors (timeouts, illegal moves) recorded for the player's seat.
    pub player_errors: usize,
    /// Player -> its slowest answer over all matches, in seconds (the clock
    /// is the start and play clock).
    pub worst_reply_s: BTreeMap<String, f64>,
}

impl ArenaResult {
    /// The result as a bar of [`plot::arena_bars`]: labelled by game,
    /// player and opponent, coloured by player.
    pub fn bar(&self) -> plot::Bar {
        plot::Bar {
            label: format!("{}: {} vs {}", self.game, self.player, self.opponent),
            player: self.player.clone(),
            mean: self.mean_score,
            ci95: self.ci95,
        }
    }
}

/// Mean and 95% half-interval of `xs`.
pub fn mean_ci95(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    if xs.is_empty() {
        return (0.0, 0.0);
    }
    let mean = xs.iter().sum::<f64>() / n;
    if xs.len() < 2 {
        return (mean, 0.0);
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, 1.96 * (var / n).sqrt())
}

/// Plays `matches` matches of `player` against `opponent` (every other seat),
/// the player's seat rotating through the roles. `on_match` sees each
/// finished match.
pub fn versus(
    name: &str,
    game: &Game,
    player: &PlayerSpec,
    opponent: &PlayerSpec,
    matches: usize,
    cfg: &RefereeConfig,
    mut on_match: impl FnMut(usize, usize, &MatchRecord),
) -> Result<ArenaResult> {
    let n = game.roles.len();
    let mut scores = Vec::with_capacity(matches);
    let mut pairs = Vec::with_capacity(matches);
    let mut player_errors = 0;
    let mut worst_reply_s: BTreeMap<String, f64> = BTreeMap::new();
    for i in 0..matches {
        let seat = i % n;
        let players = (0..n)
            .map(|r| {
                if r == seat {
                    player.clone()
                } else {
                    opponent.clone()
                }
            })
            .collect();
        let mcfg = RefereeConfig {
            seed: cfg.seed.wrapping_add(i as u64 * 7919),
            ..cfg.clone()
        };
        let rec = run_match(game, players, &mcfg)?;
        let role = &rec.roles[seat];
        player_errors += rec.errors.iter().filter(|e| &e.role == role).count();
        for (r, (_, took)) in rec.worst_reply_s.iter().enumerate() {
            let w = worst_reply_s.entry(rec.players[r].clone()).or_default();
            *w = w.max(*took);
        }
        scores.push(rec.score(seat));
        pairs.push(head_to_head(&rec, seat));
        on_match(i, seat, &rec);
    }
    let xs: Vec<f64> = scores.iter().map(|&s| s as f64).collect();
    let (mean_score, ci95) = mean_ci95(&xs);
    let (pairwise, pairwise_ci95) = if n >= 3 {
        let (m, c) = mean_ci95(&pairs);
        (Some(m), Some(c))
    } else {
        (None, None)
    };
    Ok(ArenaResult {
        game: name.to_string(),
        player: player.to_string(),
        opponent: opponent.to_string(),
        matches,
        mean_score,
        ci95,
        scores,
        pairwise,
        pairwise_ci95,
        player_errors,
        worst_reply_s,
    })
}

/// The player in `seat` head to head with every other seat of one match:
/// 100 per opponent it outscored, 50 per tie, averaged (0..100).
pub fn head_to_head(rec: &MatchRecord, seat: usize) -> f64 {
    let ours = rec.score(seat);
    let others: Vec<f64> = (0..rec.roles.len())
        .filter(|&r| r != seat)
        .map(|r| match ours.cmp(&rec.score(r)) {
            std::cmp::Ordering::Greater => 100.0,
            std::cmp::Ordering::Equal => 50.0,
            std::cmp::Ordering::Less => 0.0,
        })
        .collect();
    if others.is_empty() {
        return ours as f64;
    }
    others.iter().sum::<f64>() / others.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arena::MatchEnd;

    fn record(goals: &[u8]) -> MatchRecord {
        let roles: Vec<String> = (0..goals.len()).map(|r| format!("r{r}")).collect();
        MatchRecord {
            match_id: "m".into(),
            players: roles.clone(),
            moves: Vec::new(),
            errors: Vec::new(),
            goals: roles
                .iter()
                .zip(goals)
                .map(|(r, g)| (r.clone(), Some(*g)))
                .collect(),
            worst_reply_s: Vec::new(),
            reply_times: Default::default(),
            roles,
            end: MatchEnd::Terminal,
            engine: "prover".into(),
            engines: Vec::new(),
            move_reports: Vec::new(),
            seconds: 0.0,
        }
    }

    /// Three roles: a win beats both others, a loss to one of two others
    /// that tie with us is half a tie, an all-round draw is even.
    #[test]
    fn head_to_head_counts_each_opponent() {
        assert_eq!(head_to_head(&record(&[100, 0, 0]), 0), 100.0);
        assert_eq!(head_to_head(&record(&[0, 100, 0]), 0), 25.0);
        assert_eq!(head_to_head(&record(&[50, 50, 50]), 2), 50.0);
        assert_eq!(head_to_head(&record(&[0, 100]), 1), 100.0);
        assert_eq!(head_to_head(&record(&[70]), 0), 70.0);
    }
}

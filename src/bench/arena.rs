//! A player's strength against another over a series of matches refereed by
//! the [`arena`](crate::arena) (`ggp-asp bench arena`): by default UCT against
//! the baselines, or any player (`uct+rave+mast`, `alphabeta`) against any.

use std::collections::BTreeMap;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::arena::{run_match, MatchConfig, MatchRecord, PlayerSpec};
use crate::gdl::Game;

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
    /// Errors (timeouts, illegal moves) recorded for the player's seat.
    pub player_errors: usize,
    /// Player -> its slowest answer over all matches, in seconds (the clock
    /// is the start and play clock).
    pub worst_reply_s: BTreeMap<String, f64>,
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
    cfg: &MatchConfig,
    mut on_match: impl FnMut(usize, usize, &MatchRecord),
) -> Result<ArenaResult> {
    let n = game.roles.len();
    let mut scores = Vec::with_capacity(matches);
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
        let mcfg = MatchConfig {
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
        on_match(i, seat, &rec);
    }
    let xs: Vec<f64> = scores.iter().map(|&s| s as f64).collect();
    let (mean_score, ci95) = mean_ci95(&xs);
    Ok(ArenaResult {
        game: name.to_string(),
        player: player.to_string(),
        opponent: opponent.to_string(),
        matches,
        mean_score,
        ci95,
        scores,
        player_errors,
        worst_reply_s,
    })
}

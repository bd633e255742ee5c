//! The cross-entropy method for one real parameter (UCT's exploration
//! constant): sample values from a normal distribution, score each (a noisy
//! score: matches played), keep the elite fraction, refit the distribution to
//! them, repeat. Noisy CEM (Szita & Lőrincz, 2006): extra variance, fading
//! to none by the middle of the run, keeps the distribution from collapsing
//! before it has travelled to the optimum.

use rand::rngs::SmallRng;
use rand::Rng;
use serde::{Deserialize, Serialize};

/// Settings of a run.
#[derive(Clone, Debug)]
pub struct CemConfig {
    pub mean: f64,
    pub std: f64,
    /// Values tried are clamped to this range.
    pub min: f64,
    pub max: f64,
    pub samples: usize,
    /// The fraction of each generation kept as the elite.
    pub elite: f64,
    pub generations: usize,
    /// The standard deviation never falls below this (the scores are noisy:
    /// a distribution collapsed early stops learning).
    pub min_std: f64,
}

impl Default for CemConfig {
    fn default() -> Self {
        CemConfig {
            mean: 0.7,
            std: 0.4,
            min: 0.01,
            max: 3.0,
            samples: 10,
            elite: 0.3,
            generations: 8,
            min_std: 0.02,
        }
    }
}

/// One generation: the distribution it sampled from and its best score.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
pub struct Generation {
    pub mean: f64,
    pub std: f64,
    pub best_score: f64,
}

/// A standard normal draw (Box-Muller).
fn normal(rng: &mut SmallRng) -> f64 {
    let u: f64 = rng.gen_range(f64::EPSILON..1.0);
    let v: f64 = rng.gen();
    (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
}

/// Maximises `score` (higher is better) over one parameter; the final mean
/// and the generations. A score of `None` (out of time) ends the run: the
/// generation it belonged to is dropped, not refitted on missing scores.
pub fn cem(
    cfg: &CemConfig,
    rng: &mut SmallRng,
    mut score: impl FnMut(f64, &mut SmallRng) -> Option<f64>,
) -> (f64, Vec<Generation>) {
    let (mut mean, mut std) = (cfg.mean, cfg.std);
    let mut history = Vec::with_capacity(cfg.generations);
    let keep = ((cfg.samples as f64 * cfg.elite).ceil() as usize).clamp(1, cfg.samples.max(1));
    let half = (cfg.generations / 2).max(1) as f64;
    for t in 0..cfg.generations {
        let Some(mut scored) = (0..cfg.samples.max(1))
            .map(|_| {
                let x = (mean + std * normal(rng)).clamp(cfg.min, cfg.max);
                score(x, rng).map(|s| (x, s))
            })
            .collect::<Option<Vec<(f64, f64)>>>()
        else {
            break;
        };
        scored.sort_by(|a, b| b.1.total_cmp(&a.1));
        history.push(Generation {
            mean,
            std,
            best_score: scored[0].1,
        });
        let elite = &scored[..keep];
        mean = elite.iter().map(|e| e.0).sum::<f64>() / keep as f64;
        let var = elite.iter().map(|e| (e.0 - mean).powi(2)).sum::<f64>() / keep as f64;
        let extra = cfg.std * cfg.std / 4.0 * (1.0 - (t + 1) as f64 / half).max(0.0);
        std = (var + extra).sqrt().max(cfg.min_std);
    }
    (mean, history)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn cem_finds_the_best_constant_of_a_noisy_objective() {
        for (seed, best) in [(1, 1.3), (2, 0.4), (3, 2.2)] {
            let mut rng = SmallRng::seed_from_u64(seed);
            let cfg = CemConfig {
                samples: 30,
                generations: 15,
                ..CemConfig::default()
            };
            let (found, history) = cem(&cfg, &mut rng, |c, rng| {
                Some(-(c - best) * (c - best) + 0.05 * normal(rng))
            });
            assert!(
                (found - best).abs() < 0.15,
                "seed {seed}: {found} {history:?}"
            );
            assert_eq!(history.len(), 15);
        }
    }

    #[test]
    fn a_run_out_of_time_keeps_the_last_whole_generation() {
        let mut rng = SmallRng::seed_from_u64(4);
        let cfg = CemConfig {
            samples: 10,
            generations: 8,
            ..CemConfig::default()
        };
        // Time for two generations and half of the third.
        let mut calls = 0;
        let (found, history) = cem(&cfg, &mut rng, |c, _| {
            calls += 1;
            (calls <= 25).then_some(-(c - 1.5).abs())
        });
        assert_eq!(history.len(), 2, "{history:?}");
        assert!(calls == 26, "stopped at the first missing score: {calls}");
        // The mean after the second generation's refit, which moved it from
        // the start towards the optimum.
        assert!((found - cfg.mean).abs() > 1e-9, "{found}");
        assert!((found - 1.5).abs() < (cfg.mean - 1.5).abs(), "{found}");
    }
}

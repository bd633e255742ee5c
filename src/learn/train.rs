//! `ggp-asp learn`: examples from UCT self-play, a cascade-correlation network
//! trained on them, and UCT's exploration constant tuned by the cross-entropy
//! method, all within a time budget.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

use super::ccnn::{Cascade, Data, TrainConfig};
use super::cem::{cem, CemConfig};
/// The field of [`LearnConfig`] that says what the network learns; a model
/// records it, so it lives with the model file.
pub use super::model::Target;
use super::model::{mover, Model, Perspective};
use crate::gdl::print::term_to_string;
use crate::reasoner::StateMachine;
use crate::search::{Mcts, SearchConfig};

/// How `learn` spends its budget.
#[derive(Clone, Debug)]
pub struct LearnConfig {
    /// Examples wanted (states kept from self-play).
    pub examples: usize,
    /// The whole budget: about 60% to self-play, the rest to training and
    /// tuning.
    pub seconds: f64,
    /// UCT iterations per move of self-play.
    pub iterations: u64,
    pub seed: u64,
    /// Threads playing self-play matches at once.
    pub threads: usize,
    /// Which states of a match become examples.
    pub keep: Keep,
    /// What an example's value is.
    pub target: Target,
}

/// Which states of a self-play match become examples.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Keep {
    /// Of a match with one winner, the states where the winner was to move
    /// (all of them at simultaneous moves): Rezende and Chaimowicz's choice,
    /// less noise. Their values are the winner's own, so the network never
    /// sees the position of a side that went on to lose.
    #[default]
    Winner,
    /// Every state of every match played to the end, draws too: the values
    /// of the losing side's positions as well.
    All,
}

/// One kept state: its fluents (KIF) and the UCT value for the role to
/// move ([`Perspective::Mover`]).
struct Example {
    fluents: Vec<String>,
    value: f64,
}

/// Self-play: UCT against UCT from the initial state and from states a few
/// random moves in (the nearest to the start first), every state of a match
/// recorded with UCT's value estimate, those [`Keep`] says kept.
fn self_play<M: StateMachine + 'static>(
    machine: &Arc<M>,
    cfg: &LearnConfig,
    until: Instant,
    log: &mut dyn FnMut(&str),
) -> Vec<Example> {
    let threads = cfg.threads.max(1);
    let kept = AtomicUsize::new(0);
    let results: Vec<Played> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let kept = &kept;
                s.spawn(move || play_matches(machine, cfg, t, threads, until, kept))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_default())
            .collect()
    });
    let matches: u64 = results.iter().map(|r| r.matches).sum();
    let examples: Vec<Example> = results.into_iter().flat_map(|r| r.examples).collect();
    log(&format!(
        "self-play: {matches} matches on {threads} thread(s), {} examples kept",
        examples.len()
    ));
    examples
}

/// One thread's self-play: its examples and how many matches it played.
#[derive(Default)]
struct Played {
    examples: Vec<Example>,
    matches: u64,
}

/// One thread's share of [`self_play`]: matches `first`, `first + stride`,
/// ... until `kept` (over all threads) reaches the examples wanted or the
/// time is up.
fn play_matches<M: StateMachine + 'static>(
    machine: &Arc<M>,
    cfg: &LearnConfig,
    first: usize,
    stride: usize,
    until: Instant,
    kept: &AtomicUsize,
) -> Played {
    let m = &**machine;
    let syms = &m.game().symbols;
    let mut rng = SmallRng::seed_from_u64(cfg.seed.wrapping_add(first as u64));
    let mut out = Played::default();
    let mut matches = first as u64;
    while kept.load(Ordering::Relaxed) < cfg.examples && Instant::now() < until {
        // Matches 0-1 from the start, then 1, 2, ... random moves in.
        let prefix = (matches / 2) % 12;
        let mut state = m.initial_state();
        for _ in 0..prefix {
            if m.is_terminal(&state) {
                break;
            }
            let joint: Vec<M::Move> = (0..m.num_roles())
                .map(|r| {
                    let l = m.legal(&state, r);
                    l[rng.gen_range(0..l.len())].clone()
                })
                .collect();
            state = m.next_state(&state, &joint);
        }
        let mut search = Mcts::new(
            Arc::clone(machine),
            state.clone(),
            SearchConfig {
                threads: 1,
                seed: cfg.seed ^ matches,
                ..SearchConfig::default()
            },
        );
        let mut seen: Vec<(M::State, f64)> = Vec::new();
        while !m.is_terminal(&state) && Instant::now() < until {
            search.search_iterations(cfg.iterations);
            let stats = search.root_stats(Perspective::Mover.role(m, &state));
            let (n, sum) = stats
                .iter()
                .fold((0u64, 0.0), |(n, s), (_, st)| (n + st.visits, s + st.sum));
            seen.push((state.clone(), sum / n.max(1) as f64));
            let Some(joint) = (0..m.num_roles())
                .map(|r| search.try_best_move(r))
                .collect::<Option<Vec<_>>>()
            else {
                break;
            };
            state = m.next_state(&state, &joint);
            search.advance(&joint);
        }
        matches += stride as u64;
        out.matches += 1;
        if !m.is_terminal(&state) {
            continue;
        }
        let goals: Vec<u8> = (0..m.num_roles())
            .map(|r| m.goal(&state, r).unwrap_or(0))
            .collect();
        for (s, estimate) in seen {
            if kept_state(cfg.keep, &goals, mover(m, &s)) {
                let result = f64::from(goals[Perspective::Mover.role(m, &s)]) / 100.0;
                let value = cfg.target.value(estimate, result);
                let mut fluents: Vec<String> = m
                    .fluents(&s)
                    .iter()
                    .map(|f| term_to_string(f, syms))
                    .collect();
                fluents.sort();
                out.examples.push(Example { fluents, value });
                kept.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
    out
}

/// Whether a state of a match that ended with `goals` is kept, `mover`
/// the one role with a choice there (`None`: several or none).
fn kept_state(keep: Keep, goals: &[u8], mover: Option<usize>) -> bool {
    let top = goals.iter().copied().max().unwrap_or(0);
    let mut winners = (0..goals.len()).filter(|&r| goals[r] == top);
    match (keep, winners.next(), winners.next()) {
        (Keep::All, _, _) => true,
        (Keep::Winner, Some(w), None) => mover.is_none_or(|r| r == w),
        (Keep::Winner, _, _) => false,
    }
}

/// One match of UCT with exploration `a` (in seat `seat`) against UCT with
/// `b` in every other seat, `iterations` a move each: `a`'s goal, 0..1;
/// `None` when `until` came first.
pub fn duel<M: StateMachine + 'static>(
    machine: &Arc<M>,
    a: f64,
    b: f64,
    seat: usize,
    iterations: u64,
    seed: u64,
    until: Instant,
) -> Option<f64> {
    let m = &**machine;
    let mut state = m.initial_state();
    let make = |c: f64, s: u64| {
        Mcts::new(
            Arc::clone(machine),
            m.initial_state(),
            SearchConfig {
                threads: 1,
                exploration: c,
                seed: s,
                ..SearchConfig::default()
            },
        )
    };
    let mut sa = make(a, seed);
    let mut sb = make(b, seed.wrapping_add(1));
    let mut steps = 0;
    while !m.is_terminal(&state) && steps < 500 {
        if Instant::now() >= until {
            return None;
        }
        sa.search_iterations(iterations);
        sb.search_iterations(iterations);
        let joint: Option<Vec<M::Move>> = (0..m.num_roles())
            .map(|r| {
                if r == seat {
                    sa.try_best_move(r)
                } else {
                    sb.try_best_move(r)
                }
            })
            .collect();
        let Some(joint) = joint else { break };
        state = m.next_state(&state, &joint);
        sa.advance(&joint);
        sb.advance(&joint);
        steps += 1;
    }
    Some(f64::from(m.goal(&state, seat).unwrap_or(0)) / 100.0)
}

/// Learns a model for the game `machine` runs (see the module's summary);
/// `log` gets the progress (examples, the errors per unit added, CEM's
/// generations).
pub fn learn<M: StateMachine + 'static>(
    machine: Arc<M>,
    cfg: &LearnConfig,
    log: &mut dyn FnMut(&str),
) -> Result<Model> {
    let t0 = Instant::now();
    let budget = Duration::from_secs_f64(cfg.seconds.max(0.1));
    if machine.num_roles() != 2 {
        bail!(
            "learn needs a two-player game (values are the role to move's, the other's their complement); this one has {} roles",
            machine.num_roles()
        );
    }
    log(&format!(
        "self-play: {} thread(s), until {} examples or {:.0} s; values: {:?}, states kept: {:?}",
        cfg.threads.max(1),
        cfg.examples,
        budget.mul_f64(0.6).as_secs_f64(),
        cfg.target,
        cfg.keep
    ));
    let examples = self_play(&machine, cfg, t0 + budget.mul_f64(0.6), log);
    if examples.len() < 10 {
        bail!(
            "self-play gave {} examples in the time; give more --seconds",
            examples.len()
        );
    }
    let mut vocab: Vec<String> = examples
        .iter()
        .flat_map(|e| e.fluents.iter().cloned())
        .collect();
    vocab.sort();
    vocab.dedup();
    let index: hashbrown::HashMap<String, usize> = vocab
        .iter()
        .enumerate()
        .map(|(i, f)| (f.clone(), i))
        .collect();
    let mut rows: Vec<(Vec<f64>, f64)> = examples
        .iter()
        .map(|e| {
            let mut x = vec![0.0; vocab.len()];
            for f in &e.fluents {
                x[index[f]] = 1.0;
            }
            (x, e.value)
        })
        .collect();
    rows.shuffle(&mut SmallRng::seed_from_u64(cfg.seed));
    let split = rows.len() * 4 / 5;
    let part = |r: &[(Vec<f64>, f64)]| {
        let xs: Vec<Vec<f64>> = r.iter().map(|(x, _)| x.clone()).collect();
        let ys: Vec<f64> = r.iter().map(|(_, y)| *y).collect();
        Data::new(&xs, &ys)
    };
    let (train, test) = (part(&rows[..split]), part(&rows[split..]));
    log(&format!(
        "training on {} examples, {} held out, {} inputs",
        train.len(),
        test.len(),
        vocab.len()
    ));
    // Units until 90% of the budget, the rest to CEM.
    let tc = TrainConfig {
        seed: cfg.seed,
        deadline: Some(t0 + budget.mul_f64(0.9)),
        ..TrainConfig::default()
    };
    let mut last = Instant::now();
    let (network, reports) = Cascade::train(&train, &test, &tc, |r| {
        log(&format!(
            "unit {:>2}: train error {:.4}, test error {:.4} ({:.1} s)",
            r.units,
            r.train_mse,
            r.test_mse,
            last.elapsed().as_secs_f64()
        ));
        last = Instant::now();
    });
    let left = budget.saturating_sub(t0.elapsed());
    let exploration = tune_exploration(&machine, cfg, Instant::now() + left, log);
    let mut model = Model::new(
        machine.game(),
        vocab,
        network,
        exploration,
        reports,
        examples.len(),
    );
    model.target = cfg.target;
    Ok(model)
}

/// CEM on UCT's exploration constant until `until`: each sample plays two
/// matches, seats alternated, against the default constant. The default when
/// there is no time for a first match.
fn tune_exploration<M: StateMachine + 'static>(
    machine: &Arc<M>,
    cfg: &LearnConfig,
    until: Instant,
    log: &mut dyn FnMut(&str),
) -> f64 {
    let default_c = SearchConfig::default().exploration;
    let mut rng = SmallRng::seed_from_u64(cfg.seed ^ 0xcee);
    let cem_cfg = CemConfig {
        mean: default_c,
        samples: 6,
        generations: 5,
        ..CemConfig::default()
    };
    // The constant suits the budget it was tuned at: the matches get the
    // most iterations a move that lets them all end in 80% of the time left,
    // at least a quarter of self-play's. A first match at that quarter,
    // timed, plans it (a match's time grows with its iterations).
    let least = (cfg.iterations / 4).max(20);
    let timed = Instant::now();
    if duel(machine, default_c, default_c, 0, least, 0, until).is_none() {
        log("no time left for CEM: the default exploration constant is kept");
        return default_c;
    }
    let took = timed.elapsed().as_secs_f64().max(1e-6);
    let matches = (cem_cfg.samples * cem_cfg.generations * 2) as f64;
    let left = until
        .saturating_duration_since(Instant::now())
        .as_secs_f64();
    let iterations = ((least as f64 * 0.8 * left / matches / took) as u64).clamp(least, 200_000);
    log(&format!(
        "CEM: {} samples x {} generations, two matches each at {iterations} iterations a move (a match at {least} took {took:.3} s)",
        cem_cfg.samples, cem_cfg.generations
    ));
    let mut k = 0u64;
    let (c, history) = cem(&cem_cfg, &mut rng, |c, _| {
        k += 1;
        let first = duel(machine, c, default_c, 0, iterations, k, until)?;
        let second = duel(machine, c, default_c, 1, iterations, k, until)?;
        Some((first + second) / 2.0)
    });
    for (i, g) in history.iter().enumerate() {
        log(&format!(
            "CEM generation {i}: mean {:.3}, std {:.3}, best score {:.2}",
            g.mean, g.std, g.best_score
        ));
    }
    if history.len() < cem_cfg.generations {
        log(&format!(
            "CEM: the time ran out after {} whole generations of {}",
            history.len(),
            cem_cfg.generations
        ));
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_winners_states_or_all_are_kept() {
        // A win: the winner's turns and simultaneous states.
        for (mover, kept) in [(Some(0), true), (None, true), (Some(1), false)] {
            assert_eq!(kept_state(Keep::Winner, &[100, 0], mover), kept);
            assert!(kept_state(Keep::All, &[100, 0], mover));
        }
        // A draw has no winner: nothing, or everything.
        assert!(!kept_state(Keep::Winner, &[50, 50], Some(0)));
        assert!(!kept_state(Keep::Winner, &[50, 50], None));
        assert!(kept_state(Keep::All, &[50, 50], Some(1)));
    }

    #[test]
    fn examples_valued_by_result_hold_the_movers_goal() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/puzzles/tictactoe.kif");
        let game = crate::gdl::load(std::path::Path::new(path)).expect("loads");
        let machine = Arc::new(crate::reasoner::Propnet::new(game).expect("compiles"));
        let value_sets = [Target::Estimate, Target::Result].map(|target| {
            let cfg = LearnConfig {
                examples: 60,
                seconds: 60.0,
                iterations: 30,
                seed: 5,
                threads: 1,
                keep: Keep::All,
                target,
            };
            let until = Instant::now() + Duration::from_secs(60);
            let examples = self_play(&machine, &cfg, until, &mut |_| {});
            assert!(examples.len() >= 60, "{} examples", examples.len());
            examples.iter().map(|e| e.value).collect::<Vec<f64>>()
        });
        // The same seed plays the same matches: a state's result is its
        // match's goal for the mover, its estimate anything between.
        let [estimates, results] = value_sets;
        assert_eq!(estimates.len(), results.len());
        assert!(results.iter().all(|&v| [0.0, 0.5, 1.0].contains(&v)));
        assert!(estimates.iter().any(|&v| ![0.0, 0.5, 1.0].contains(&v)));
    }

    #[test]
    fn a_target_is_the_estimate_the_result_or_their_mean() {
        assert_eq!(Target::Estimate.value(0.6, 1.0), 0.6);
        assert_eq!(Target::Result.value(0.6, 1.0), 1.0);
        assert!((Target::Blend.value(0.6, 0.0) - 0.3).abs() < 1e-12);
    }
}

//! Cascade-correlation networks (Fahlman & Lebiere, 1990): a value function
//! that grows its own hidden units.
//!
//! Training starts with the inputs wired straight to one sigmoid output. Then,
//! one at a time, a hidden unit is added: a pool of candidates, each fed by
//! the inputs, a bias and every earlier hidden unit, is trained to maximise
//! the correlation of its activation with the output's residual error; the
//! best is frozen into the network and the output retrained over the inputs
//! and all hidden units. Growth stops when the error on held-out examples has
//! not improved for `patience` units; the network kept is the one with the
//! lowest held-out error. Gradient steps are Adam's on minibatches (the
//! whole set when it is smaller than one), the step size decaying linearly
//! to a tenth, so that a training costs a few passes over the examples
//! whatever their number.

use std::time::Instant;

use ndarray::{s, Array1, Array2, ArrayView1, ArrayView2, Axis, CowArray, Ix1, Ix2};
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

/// A trained network: `hidden[k]` weighs the inputs, the bias and hidden
/// units `0..k`; `out` weighs the inputs, the bias and every hidden unit.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Cascade {
    pub inputs: usize,
    pub hidden: Vec<Vec<f64>>,
    pub out: Vec<f64>,
}

/// Examples: one row of inputs per example, one target (0..1) each.
#[derive(Clone, Debug)]
pub struct Data {
    pub x: Array2<f64>,
    pub y: Array1<f64>,
}

impl Data {
    pub fn new(rows: &[Vec<f64>], targets: &[f64]) -> Data {
        let n = rows.len();
        let d = rows.first().map_or(0, Vec::len);
        let mut x = Array2::zeros((n, d));
        for (i, r) in rows.iter().enumerate() {
            for (j, v) in r.iter().enumerate() {
                x[[i, j]] = *v;
            }
        }
        Data {
            x,
            y: Array1::from(targets.to_vec()),
        }
    }

    pub fn len(&self) -> usize {
        self.y.len()
    }

    pub fn is_empty(&self) -> bool {
        self.y.is_empty()
    }
}

/// How a network is grown.
#[derive(Clone, Debug)]
pub struct TrainConfig {
    pub max_units: usize,
    /// Candidates trained for each unit added.
    pub candidates: usize,
    /// Passes over the training examples of each output and candidate
    /// training, at most [`TrainConfig::max_steps`] gradient steps.
    pub epochs: usize,
    /// Examples per gradient step.
    pub batch: usize,
    /// The most gradient steps of one training: on many examples, fewer
    /// passes than `epochs`.
    pub max_steps: usize,
    pub learning_rate: f64,
    /// Units added without a better held-out error before growth stops.
    pub patience: usize,
    pub seed: u64,
    /// No unit is begun that would end after this (judged by the last
    /// unit's time): `learn --seconds` bounds the whole run.
    pub deadline: Option<Instant>,
}

impl Default for TrainConfig {
    fn default() -> Self {
        TrainConfig {
            max_units: 40,
            candidates: 8,
            epochs: 400,
            batch: 256,
            max_steps: 6000,
            learning_rate: 0.05,
            patience: 3,
            seed: 1,
            deadline: None,
        }
    }
}

/// The errors after a unit was added (`units` 0: the network without
/// hidden units).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
pub struct UnitReport {
    pub units: usize,
    /// Mean squared error on the training and the held-out examples.
    pub train_mse: f64,
    pub test_mse: f64,
}

fn sigmoid(v: f64) -> f64 {
    1.0 / (1.0 + (-v).exp())
}

/// Adam's state for one weight vector.
struct Adam {
    m: Array1<f64>,
    v: Array1<f64>,
    t: i32,
}

impl Adam {
    fn new(n: usize) -> Adam {
        Adam {
            m: Array1::zeros(n),
            v: Array1::zeros(n),
            t: 0,
        }
    }

    /// Moves `w` against `grad` (descent) by one step of size `lr`.
    fn step(&mut self, w: &mut Array1<f64>, grad: &Array1<f64>, lr: f64) {
        const B1: f64 = 0.9;
        const B2: f64 = 0.999;
        self.t += 1;
        self.m = &self.m * B1 + grad * (1.0 - B1);
        self.v = &self.v * B2 + &(grad * grad) * (1.0 - B2);
        let mh = &self.m / (1.0 - B1.powi(self.t));
        let vh = &self.v / (1.0 - B2.powi(self.t));
        *w -= &(mh / (vh.mapv(f64::sqrt) + 1e-8) * lr);
    }
}

/// Inputs with a bias column of ones appended.
fn with_bias(x: &Array2<f64>) -> Array2<f64> {
    let (n, d) = x.dim();
    let mut f = Array2::ones((n, d + 1));
    f.slice_mut(s![.., ..d]).assign(x);
    f
}

/// Appends column `c` to `f`.
fn push_column(f: &Array2<f64>, c: &Array1<f64>) -> Array2<f64> {
    let (n, d) = f.dim();
    let mut g = Array2::zeros((n, d + 1));
    g.slice_mut(s![.., ..d]).assign(f);
    g.column_mut(d).assign(c);
    g
}

fn mse(f: &Array2<f64>, w: &Array1<f64>, y: &Array1<f64>) -> f64 {
    if y.is_empty() {
        return 0.0;
    }
    let p = f.dot(w).mapv(sigmoid);
    (&p - y).mapv(|e| e * e).mean().unwrap_or(0.0)
}

/// The minibatches of one training: row indices, each pass over the
/// examples in a fresh random order, [`TrainConfig::max_steps`] at most.
struct Batches {
    order: Vec<usize>,
    at: usize,
    size: usize,
    steps: usize,
}

impl Batches {
    fn new(n: usize, cfg: &TrainConfig) -> Batches {
        let size = cfg.batch.clamp(1, n.max(1));
        let per_pass = n.div_ceil(size).max(1);
        Batches {
            order: (0..n).collect(),
            at: n,
            size,
            steps: (cfg.epochs * per_pass).min(cfg.max_steps.max(cfg.epochs)),
        }
    }

    /// The next batch's rows (a whole pass when the set fits one batch).
    fn next(&mut self, rng: &mut SmallRng) -> &[usize] {
        if self.size >= self.order.len() {
            // In order: [`batch`] then takes the whole set without a copy.
            return &self.order;
        }
        if self.at + self.size > self.order.len() {
            self.order.shuffle(rng);
            self.at = 0;
        }
        let rows = &self.order[self.at..(self.at + self.size).min(self.order.len())];
        self.at += self.size;
        rows
    }

    /// The step size of step `t`: decaying linearly to a tenth.
    fn rate(&self, cfg: &TrainConfig, t: usize) -> f64 {
        cfg.learning_rate * (1.0 - 0.9 * t as f64 / self.steps.max(1) as f64)
    }
}

/// The rows `rows` of `f` and of `y` (all of them, without a copy, when
/// `rows` is every row in order).
fn batch<'a>(
    f: &'a Array2<f64>,
    y: &'a Array1<f64>,
    rows: &[usize],
) -> (CowArray<'a, f64, Ix2>, CowArray<'a, f64, Ix1>) {
    if rows.len() == y.len() && rows.iter().enumerate().all(|(i, &r)| i == r) {
        (f.view().into(), y.view().into())
    } else {
        (
            f.select(Axis(0), rows).into(),
            y.select(Axis(0), rows).into(),
        )
    }
}

/// Trains the output weights `w` over features `f` for targets `y`.
fn train_output(
    f: &Array2<f64>,
    y: &Array1<f64>,
    w: &mut Array1<f64>,
    cfg: &TrainConfig,
    rng: &mut SmallRng,
) {
    let mut adam = Adam::new(w.len());
    let mut batches = Batches::new(y.len(), cfg);
    for t in 0..batches.steps {
        let lr = batches.rate(cfg, t);
        let (fb, yb) = batch(f, y, batches.next(rng));
        let n = yb.len().max(1) as f64;
        let p = fb.dot(&*w).mapv(sigmoid);
        let delta = (&p - &yb) * &p.mapv(|q| q * (1.0 - q)) * (2.0 / n);
        let grad = fb.t().dot(&delta);
        adam.step(w, &grad, lr);
    }
}

/// Trains a candidate unit over features `f` to correlate with the
/// residuals `e`; its weights and the size of the correlation (over all
/// the examples).
fn train_candidate(
    f: &Array2<f64>,
    e: &Array1<f64>,
    cfg: &TrainConfig,
    rng: &mut SmallRng,
) -> (Array1<f64>, f64) {
    let d = f.ncols();
    let mut v = Array1::from_shape_fn(d, |_| rng.gen_range(-1.0..1.0));
    let mut adam = Adam::new(d);
    let mut batches = Batches::new(e.len(), cfg);
    // The covariance of the unit's activation with the residual, over the
    // rows given, and the activations.
    let corr = |f: &ArrayView2<f64>, e: &ArrayView1<f64>, v: &Array1<f64>| {
        let ec = e - e.mean().unwrap_or(0.0);
        let a = f.dot(v).mapv(f64::tanh);
        let ac = &a - a.mean().unwrap_or(0.0);
        (ac.dot(&ec), a, ec)
    };
    let n = e.len().max(1) as f64;
    for t in 0..batches.steps {
        let lr = batches.rate(cfg, t);
        let (fb, eb) = batch(f, e, batches.next(rng));
        // Scaled to the whole set, so the step sizes do not depend on the
        // batch's.
        let scale = n / eb.len().max(1) as f64;
        let (s, a, ec) = corr(&fb.view(), &eb.view(), &v);
        // d|S|/dv = sign(S) * F^T ((E - mean E) * (1 - a^2)); ascent.
        let g = fb.t().dot(&(&ec * &a.mapv(|x| 1.0 - x * x))) * (-s.signum() * scale);
        adam.step(&mut v, &g, lr);
    }
    let (s, _, _) = corr(&f.view(), &e.view(), &v);
    (v, s.abs())
}

impl Cascade {
    /// The network's value (0..1) for one input row.
    pub fn predict(&self, x: ArrayView1<f64>) -> f64 {
        let mut feats: Vec<f64> = x.to_vec();
        feats.push(1.0);
        for w in &self.hidden {
            let a: f64 = w.iter().zip(&feats).map(|(w, f)| w * f).sum();
            feats.push(a.tanh());
        }
        sigmoid(self.out.iter().zip(&feats).map(|(w, f)| w * f).sum())
    }

    /// [`Cascade::predict`] for a slice.
    pub fn value(&self, x: &[f64]) -> f64 {
        self.predict(ArrayView1::from(x))
    }

    /// [`Cascade::predict`] for inputs of 0 and 1 given by the indices of
    /// the ones (a state's fluents): a sum of weights per unit, no products
    /// with the inputs and no allocation once `hidden` (the activations) has
    /// grown.
    pub fn value_of_ones(&self, ones: &[usize], hidden: &mut Vec<f64>) -> f64 {
        let d = self.inputs;
        let net = |w: &[f64], hidden: &[f64]| {
            let from_inputs: f64 = ones.iter().map(|&i| w[i]).sum();
            let from_hidden: f64 = hidden.iter().zip(&w[d + 1..]).map(|(h, w)| h * w).sum();
            w[d] + from_inputs + from_hidden
        };
        hidden.clear();
        for w in &self.hidden {
            let a = net(w, hidden).tanh();
            hidden.push(a);
        }
        sigmoid(net(&self.out, hidden))
    }

    /// Grows a network on `train`, judged on `test` (the training examples
    /// again when `test` is empty); `on_unit` sees the errors after the
    /// start and after every unit added. Returns the network with the lowest
    /// held-out error and every report.
    pub fn train(
        train: &Data,
        test: &Data,
        cfg: &TrainConfig,
        mut on_unit: impl FnMut(&UnitReport),
    ) -> (Cascade, Vec<UnitReport>) {
        let test = if test.is_empty() { train } else { test };
        let mut rng = SmallRng::seed_from_u64(cfg.seed);
        let inputs = train.x.ncols();
        let mut f = with_bias(&train.x);
        let mut ft = with_bias(&test.x);
        let mut w = Array1::zeros(inputs + 1);
        let output_start = Instant::now();
        train_output(&f, &train.y, &mut w, cfg, &mut rng);
        // A unit trains its candidates and the output again: before the
        // first, that many output trainings are the estimate of its time.
        let mut took = output_start.elapsed() * (cfg.candidates.max(1) as u32 + 1);
        let mut net = Cascade {
            inputs,
            hidden: Vec::new(),
            out: w.to_vec(),
        };
        let first = UnitReport {
            units: 0,
            train_mse: mse(&f, &w, &train.y),
            test_mse: mse(&ft, &w, &test.y),
        };
        on_unit(&first);
        let mut reports = vec![first];
        let mut best = (first.test_mse, net.clone());
        let mut stale = 0;
        while net.hidden.len() < cfg.max_units && stale < cfg.patience {
            let started = Instant::now();
            if cfg.deadline.is_some_and(|d| started + took > d) {
                break;
            }
            let residual = f.dot(&w).mapv(sigmoid) - &train.y;
            let (unit, _) = (0..cfg.candidates.max(1))
                .map(|_| train_candidate(&f, &residual, cfg, &mut rng))
                .max_by(|a, b| a.1.total_cmp(&b.1))
                .expect("at least one candidate");
            f = push_column(&f, &f.dot(&unit).mapv(f64::tanh));
            ft = push_column(&ft, &ft.dot(&unit).mapv(f64::tanh));
            net.hidden.push(unit.to_vec());
            let mut grown = Array1::zeros(w.len() + 1);
            grown.slice_mut(s![..w.len()]).assign(&w);
            w = grown;
            train_output(&f, &train.y, &mut w, cfg, &mut rng);
            net.out = w.to_vec();
            let r = UnitReport {
                units: net.hidden.len(),
                train_mse: mse(&f, &w, &train.y),
                test_mse: mse(&ft, &w, &test.y),
            };
            on_unit(&r);
            reports.push(r);
            took = started.elapsed();
            if r.test_mse < best.0 - 1e-9 {
                best = (r.test_mse, net.clone());
                stale = 0;
            } else {
                stale += 1;
            }
        }
        (best.1, reports)
    }

    /// Mean squared error on `data`.
    pub fn mse(&self, data: &Data) -> f64 {
        if data.is_empty() {
            return 0.0;
        }
        data.x
            .axis_iter(Axis(0))
            .zip(data.y.iter())
            .map(|(row, t)| (self.predict(row) - t).powi(2))
            .sum::<f64>()
            / data.len() as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every input of `bits` bits with its parity as the target.
    fn parity(bits: usize) -> Data {
        let rows: Vec<Vec<f64>> = (0..1usize << bits)
            .map(|i| (0..bits).map(|b| ((i >> b) & 1) as f64).collect())
            .collect();
        let y: Vec<f64> = (0..1usize << bits)
            .map(|i| (i.count_ones() % 2) as f64)
            .collect();
        Data::new(&rows, &y)
    }

    #[test]
    fn xor_and_three_bit_parity_are_learned_by_adding_hidden_units() {
        for bits in [2, 3] {
            let data = parity(bits);
            let empty = Data::new(&[], &[]);
            let cfg = TrainConfig {
                patience: 4,
                ..TrainConfig::default()
            };
            let (net, reports) = Cascade::train(&data, &empty, &cfg, |_| {});
            // Without hidden units the output is a linear separator, which
            // parity defeats.
            assert!(reports[0].train_mse > 0.15, "{bits} bits: {reports:?}");
            assert!(!net.hidden.is_empty(), "{bits} bits");
            assert!(net.mse(&data) < 0.02, "{bits} bits: {reports:?}");
            for (i, t) in data.y.iter().enumerate() {
                let p = net.predict(data.x.row(i));
                assert_eq!(p > 0.5, *t > 0.5, "{bits} bits, example {i}: {p}");
            }
        }
    }

    #[test]
    fn the_value_of_the_ones_is_the_value_of_the_bits() {
        let data = parity(3);
        let cfg = TrainConfig {
            max_units: 3,
            patience: 3,
            ..TrainConfig::default()
        };
        let (net, _) = Cascade::train(&data, &data, &cfg, |_| {});
        assert!(!net.hidden.is_empty());
        let mut hidden = Vec::new();
        for row in data.x.rows() {
            let ones: Vec<usize> = (0..row.len()).filter(|&i| row[i] == 1.0).collect();
            let sparse = net.value_of_ones(&ones, &mut hidden);
            assert!((sparse - net.predict(row)).abs() < 1e-12, "{row}");
        }
    }

    #[test]
    fn the_network_kept_is_the_one_with_the_lowest_held_out_error() {
        let data = parity(3);
        let cfg = TrainConfig {
            max_units: 5,
            patience: 5,
            ..TrainConfig::default()
        };
        let (net, reports) = Cascade::train(&data, &data, &cfg, |_| {});
        let best = reports
            .iter()
            .map(|r| r.test_mse)
            .fold(f64::INFINITY, f64::min);
        let kept = net.mse(&data);
        // (A later unit that improves by less than 1e-9 does not count.)
        assert!(kept <= best + 1e-9, "{kept} {reports:?}");
        let own = reports[net.hidden.len()];
        assert!((own.test_mse - kept).abs() < 1e-9, "{own:?} {kept}");
    }
}

//! The linear algebra of [`super`]: the span of the sampled changes in
//! reduced echelon form, exactly, over the integers (128-bit, given up on
//! overflow) and over GF(2), and the invariants orthogonal to it.

use std::collections::HashSet;

use super::{Equation, Linear, Parity};

/// The span of the changes seen, kept in reduced echelon form twice: over
/// the integers (each row scaled to integers with no common factor, its
/// pivot column zero in every other row) and over GF(2).
pub(super) struct Space {
    n: usize,
    rows: Vec<(usize, Vec<i128>)>,
    bits: Vec<(usize, Vec<u64>)>,
}

fn gcd(a: i128, b: i128) -> i128 {
    let (mut a, mut b) = (a.abs(), b.abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Divides a row by the gcd of its entries and makes its first nonzero
/// entry positive.
fn normalise(v: &mut [i128]) {
    let g = v.iter().fold(0, |g, &x| gcd(g, x));
    let sign = v.iter().find(|&&x| x != 0).map_or(1, |x| x.signum());
    if g > 1 || sign < 0 {
        let d = g.max(1) * sign;
        v.iter_mut().for_each(|x| *x /= d);
    }
}

/// `a * x - b * y` entrywise into `x`; `None` on overflow.
fn combine(x: &mut [i128], a: i128, y: &[i128], b: i128) -> Option<()> {
    for (xi, yi) in x.iter_mut().zip(y) {
        *xi = xi.checked_mul(a)?.checked_sub(yi.checked_mul(b)?)?;
    }
    normalise(x);
    // Keep the entries far from overflow: a later combination multiplies.
    x.iter().all(|v| v.abs() < 1 << 60).then_some(())
}

impl Space {
    pub(super) fn new(n: usize) -> Space {
        Space {
            n,
            rows: Vec::new(),
            bits: Vec::new(),
        }
    }

    /// Adds a change to both spans; `None` when the arithmetic would
    /// overflow.
    pub(super) fn add(&mut self, change: &[(usize, i8)]) -> Option<()> {
        let mut v = vec![0i128; self.n];
        let mut b = vec![0u64; self.n.div_ceil(64)];
        for &(f, d) in change {
            v[f] = d as i128;
            b[f / 64] ^= 1 << (f % 64);
        }
        for (p, row) in &self.rows {
            if v[*p] != 0 {
                let (a, c) = (row[*p], v[*p]);
                combine(&mut v, a, row, c)?;
            }
        }
        if let Some(p) = v.iter().position(|&x| x != 0) {
            normalise(&mut v);
            for (_, row) in self.rows.iter_mut() {
                if row[p] != 0 {
                    let (a, c) = (v[p], row[p]);
                    combine(row, a, &v, c)?;
                }
            }
            self.rows.push((p, v));
        }
        for (p, row) in &self.bits {
            if b[p / 64] >> (p % 64) & 1 == 1 {
                b.iter_mut().zip(row).for_each(|(x, y)| *x ^= y);
            }
        }
        if let Some(p) = (0..self.n).find(|&f| b[f / 64] >> (f % 64) & 1 == 1) {
            for (_, row) in self.bits.iter_mut() {
                if row[p / 64] >> (p % 64) & 1 == 1 {
                    row.iter_mut().zip(&b).for_each(|(x, y)| *x ^= y);
                }
            }
            self.bits.push((p, b));
        }
        Some(())
    }

    /// Every vector orthogonal to the changes: a basis over the integers,
    /// then one over GF(2) of what those do not already give modulo 2, each
    /// with its value in the state `init`. `None` on overflow.
    pub(super) fn invariants(&self, init: &[usize]) -> Option<Linear> {
        let pivots: HashSet<usize> = self.rows.iter().map(|(p, _)| *p).collect();
        let mut equations = Vec::new();
        for j in (0..self.n).filter(|j| !pivots.contains(j)) {
            // x_j = L, and each pivot x_p = -row[j] * L / row[p].
            let mut l: i128 = 1;
            for (p, row) in &self.rows {
                if row[j] != 0 {
                    let d = row[*p].abs();
                    l = (l / gcd(l, d)).checked_mul(d)?;
                }
            }
            let mut c = vec![(j, l)];
            for (p, row) in &self.rows {
                if row[j] != 0 {
                    c.push((*p, (-row[j]).checked_mul(l / row[*p])?));
                }
            }
            let g = c.iter().fold(0, |g, &(_, w)| gcd(g, w));
            let terms: Vec<(usize, i64)> = c
                .into_iter()
                .map(|(f, w)| i64::try_from(w / g).ok().map(|w| (f, w)))
                .collect::<Option<_>>()?;
            equations.push(terms);
        }
        sparsen(&mut equations, self.n);
        let value = |terms: &[(usize, i64)]| -> i64 {
            terms
                .iter()
                .filter(|(f, _)| init.contains(f))
                .map(|(_, w)| w)
                .sum()
        };
        // The integer invariants modulo 2, reduced, so that a parity is kept
        // only where it says more.
        let words = self.n.div_ceil(64);
        let mut implied: Vec<(usize, Vec<u64>)> = Vec::new();
        let reduce = |mut b: Vec<u64>, basis: &[(usize, Vec<u64>)]| {
            for (p, row) in basis {
                if b[p / 64] >> (p % 64) & 1 == 1 {
                    b.iter_mut().zip(row).for_each(|(x, y)| *x ^= y);
                }
            }
            b
        };
        let insert = |b: Vec<u64>, basis: &mut Vec<(usize, Vec<u64>)>| -> bool {
            let b = reduce(b, basis);
            let Some(p) = (0..self.n).find(|&f| b[f / 64] >> (f % 64) & 1 == 1) else {
                return false;
            };
            for (_, row) in basis.iter_mut() {
                if row[p / 64] >> (p % 64) & 1 == 1 {
                    row.iter_mut().zip(&b).for_each(|(x, y)| *x ^= y);
                }
            }
            basis.push((p, b));
            true
        };
        for terms in &equations {
            let mut b = vec![0u64; words];
            for &(f, w) in terms {
                if w % 2 != 0 {
                    b[f / 64] ^= 1 << (f % 64);
                }
            }
            insert(b, &mut implied);
        }
        let bit_pivots: HashSet<usize> = self.bits.iter().map(|(p, _)| *p).collect();
        let mut parities = Vec::new();
        for j in (0..self.n).filter(|j| !bit_pivots.contains(j)) {
            let mut b = vec![0u64; words];
            b[j / 64] |= 1 << (j % 64);
            for (p, row) in &self.bits {
                if row[j / 64] >> (j % 64) & 1 == 1 {
                    b[p / 64] |= 1 << (p % 64);
                }
            }
            if insert(b.clone(), &mut implied) {
                let fluents: Vec<usize> = (0..self.n)
                    .filter(|&f| b[f / 64] >> (f % 64) & 1 == 1)
                    .collect();
                let odd = fluents.iter().filter(|f| init.contains(f)).count() % 2 == 1;
                parities.push(Parity { fluents, odd });
            }
        }
        Some(Linear {
            fluents: Vec::new(),
            equations: equations
                .into_iter()
                .map(|terms| Equation {
                    value: value(&terms),
                    terms,
                })
                .collect(),
            parities,
        })
    }
}

/// The most work (pairs of equations times fluents) [`sparsen`] does.
const MAX_SPARSEN: usize = 50_000_000;

/// Makes a basis of equations sparser, greedily: an equation is replaced by
/// its sum with, or difference from, another where that has a smaller sum
/// of absolute weights. The span is the same; clasp propagates a short
/// equation ("one counter value at a time") far better than a mix of
/// several with large weights, and the proof of a round is a search for a
/// state that satisfies them all.
fn sparsen(equations: &mut [Vec<(usize, i64)>], n: usize) {
    let k = equations.len();
    if k * k * n > MAX_SPARSEN {
        return;
    }
    let mut dense: Vec<Vec<i64>> = equations
        .iter()
        .map(|terms| {
            let mut v = vec![0; n];
            terms.iter().for_each(|&(f, w)| v[f] = w);
            v
        })
        .collect();
    let l1 = |v: &[i64]| v.iter().map(|x| x.unsigned_abs()).sum::<u64>();
    for _ in 0..8 {
        let mut improved = false;
        for i in 0..k {
            for j in 0..k {
                if i == j {
                    continue;
                }
                for sign in [1i64, -1] {
                    let sum: Option<Vec<i64>> = dense[i]
                        .iter()
                        .zip(&dense[j])
                        .map(|(a, b)| a.checked_add(b.checked_mul(sign)?))
                        .collect();
                    if let Some(sum) = sum {
                        if l1(&sum) < l1(&dense[i]) {
                            dense[i] = sum;
                            improved = true;
                        }
                    }
                }
            }
        }
        if !improved {
            break;
        }
    }
    for (terms, v) in equations.iter_mut().zip(dense) {
        *terms = v.into_iter().enumerate().filter(|(_, w)| *w != 0).collect();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_peg_line_leaves_the_classes_and_no_count() {
        // Five holes in a row; a jump takes two pegs and puts one down, both
        // ways.
        let mut changes: Vec<Vec<(usize, i8)>> = Vec::new();
        for a in 0..3 {
            changes.push(vec![(a, -1), (a + 1, -1), (a + 2, 1)]);
            changes.push(vec![(a, 1), (a + 1, -1), (a + 2, -1)]);
        }
        let mut s = Space::new(5);
        for c in &changes {
            s.add(c).unwrap();
        }
        let l = s.invariants(&[0, 1, 3, 4]).unwrap();
        // Every invariant is orthogonal to every change.
        for e in &l.equations {
            for c in &changes {
                let dot: i64 = c
                    .iter()
                    .map(|&(f, d)| d as i64 * e.terms.iter().find(|t| t.0 == f).map_or(0, |t| t.1))
                    .sum();
                assert_eq!(dot, 0, "{e:?}");
            }
        }
        assert!(l.equations.is_empty(), "the count falls: {:?}", l.equations);
        for p in &l.parities {
            for c in &changes {
                let n = c.iter().filter(|(f, _)| p.fluents.contains(f)).count();
                assert_eq!(n % 2, 0, "{p:?}");
            }
        }
        assert_eq!(l.parities.len(), 2, "five holes, three independent jumps");
        assert!(l.holds_in(&[0, 1, 3, 4]));
        assert!(l.holds_in(&[2, 3, 4]), "after the jump from 0 over 1");
        for single in 0..5 {
            assert!(
                !l.holds_in(&[single]),
                "one peg on {single} is another class"
            );
        }
    }

    #[test]
    fn a_counter_beside_the_pegs_gives_an_equation() {
        // Three holes and a counter of pegs (fluents 3, 4, 5: counts 0, 1, 2):
        // a jump 0,1 -> 2 takes the count from 2 to 1.
        let mut s = Space::new(6);
        s.add(&[(0, -1), (1, -1), (2, 1), (5, -1), (4, 1)]).unwrap();
        s.add(&[(2, -1), (1, -1), (0, 1), (5, -1), (4, 1)]).unwrap();
        s.add(&[(0, -1), (1, -1), (2, 1), (4, -1), (3, 1)]).unwrap();
        let l = s.invariants(&[0, 1, 5]).unwrap();
        // Pegs minus the count, and one count at a time, among others.
        assert!(l.holds_in(&[0, 1, 5]));
        assert!(l.holds_in(&[2, 4]));
        assert!(!l.holds_in(&[2, 5]), "one peg and a count of 2");
        assert!(!l.holds_in(&[2, 4, 5]), "two counts");
    }
}

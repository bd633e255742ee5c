//! Pattern databases: admissible goal distances computed from the rules, for
//! the A* search of [`super::breadth`] (Culberson and Schaeffer 1998;
//! Edelkamp 2001; Haslum et al. 2007).
//!
//! A pattern is a set of the game's fluents; its database holds the
//! distance to the goal of every state of the game projected onto it
//! ([`super::abstraction`]), computed once by a breadth-first search of the
//! abstract space. The choice of patterns reads the rules, never the game's
//! name:
//! - the *context*: the fluents the `legal` atoms read (the blank of a
//!   sliding puzzle), kept in every pattern so that the abstract moves are
//!   the real ones;
//! - the *groups*: the fluents goal 100 reads beyond the context, split by
//!   the argument position with the most distinct values among them, each
//!   group holding every fluent with its value there (`(cell ?r ?c 7)`: where
//!   tile 7 is);
//! - *patterns*: consecutive groups (in the order the goal reads them)
//!   joined while the abstract space stays within a bound, in [`TIERS`]:
//!   first small databases, which are soon built and serve the easy
//!   instances, then large ones, which serve the deep ones, each within
//!   the search's memory share.
//!
//! Several databases are *added* where that is proven admissible: each
//! pattern counts only the moves that change its own groups, and no move of
//! the abstract space of any two groups of different patterns (with the
//! context) changes both. Every concrete move projects onto such an
//! abstract move, so it counts in one pattern at most, and the sum of the
//! databases never exceeds the moves left (the sliding puzzles' Manhattan
//! distance is the sum of the one-tile databases). Where that check fails,
//! every move counts and the databases are combined by their maximum.

use std::sync::atomic::AtomicBool;

use hashbrown::{HashMap, HashSet};

use crate::gdl::{kw, Game, Term};
use crate::reasoner::ground::{AtomId, GroundProgram};
use crate::reasoner::StateMachine;

use super::abstraction::{self, Abstraction, Key, Rules, Space, Work};

/// The most abstract states one database holds, tier by tier (less when the
/// caller says so, from its memory share). Why two: the fifteen-puzzle's
/// three-tile databases (43,680 states each) are built in 4 s and bound
/// Korf's instance 1 (57 moves) at 43, and A* fills 8 million states short
/// of it; its four-tile ones (524,160 each) take 20 s and bound it at 45,
/// and A* proves it with 245,238 expansions. A puzzle 28 moves deep is
/// solved on the first tier long before the second is built.
pub const TIERS: [usize; 2] = [100_000, 1_000_000];
/// The most rule evaluations the databases and their checks may take.
const MAX_WORK: u64 = 2_000_000_000;
/// The most abstract states the additivity check explores for one pair.
const PAIR_STATES: usize = 200_000;

/// The pattern databases of a game and how they combine.
pub struct Heuristic {
    databases: Vec<Database>,
    additive: bool,
    /// Per engine fluent number: the (database, bit) pairs it sets.
    by_number: Vec<Vec<(u16, u16)>>,
    /// The same by fluent, for engines that do not number their fluents.
    by_term: HashMap<Term, Vec<(u16, u16)>>,
    /// What was built, for the progress line.
    pub description: String,
}

struct Database {
    index: HashMap<Key, u32>,
    dist: Vec<u16>,
}

/// Builds the pattern databases of `game` from its ground rules `g`, for
/// the engine `m`, `clocked` when a clock was taken out of the rules, tier
/// by tier ([`TIERS`], each database within `per_database` abstract states
/// too), and hands each tier to `found` as soon as it is built; a tier
/// whose patterns are those of the last is skipped. An error says why there
/// are none; a later tier that fails leaves the earlier ones.
pub fn build<M: StateMachine>(
    game: &Game,
    g: &GroundProgram,
    m: &M,
    clocked: bool,
    per_database: usize,
    stop: &AtomicBool,
    mut found: impl FnMut(Heuristic),
) -> Result<(), String> {
    let caps: Vec<usize> = TIERS.iter().map(|&t| t.min(per_database)).collect();
    let per_database = caps[0];
    let rules = Rules::new(game, g, clocked).ok_or("no goal 100 for a single role")?;
    let context: HashSet<AtomId> = rules.read_by_legal();
    // A clock that goal 100 reads (`(step 30)`) changes with every move: kept,
    // it would multiply every abstract space by its length and count in
    // every pattern. Left unknown, it is read as possibly anything.
    let clock = crate::asp::bounds::clock_fluent(game);
    let of_clock = |f: &AtomId| {
        let t = g.pool.args(g.atoms[*f as usize])[0];
        Some(g.pool.functor(t)) == clock
    };
    let mut goal_fluents: Vec<AtomId> = rules
        .read_by_goal()
        .into_iter()
        .filter(|f| !context.contains(f) && !of_clock(f))
        .collect();
    goal_fluents.sort_unstable();
    let mut context: Vec<AtomId> = context.into_iter().collect();
    context.sort_unstable();
    let groups = groups(&rules, &goal_fluents, &context);
    let holding: HashSet<AtomId> = m
        .fluents(&m.initial_state())
        .into_iter()
        .filter_map(|f| {
            let t = g.pool.find_term(&Term::Func(kw::TRUE, vec![f]))?;
            g.atom(t)
        })
        .collect();
    let mut work = Work {
        spent: 0,
        limit: MAX_WORK,
        stop,
    };
    let space_of = |kept: Vec<AtomId>, max: usize, work: &mut Work| {
        let mut a = Abstraction::new(&rules, kept)?;
        let init = a.project(&holding);
        let space = a.explore(init, max, work)?;
        Ok::<_, String>((a, space))
    };
    let base = space_of(context.clone(), per_database, &mut work)?
        .1
        .keys
        .len();
    // Each group's abstract space with the context, for its size.
    let mut sized: Vec<(Vec<AtomId>, usize)> = Vec::new();
    for group in groups {
        let kept = union(&context, &[&group]);
        match space_of(kept, per_database, &mut work) {
            Ok((_, space)) => sized.push((group, space.keys.len())),
            Err(e) if e == abstraction::STOPPED => return Err(e),
            Err(_) => {} // too large alone: left out, which keeps the bound
        }
    }
    if sized.is_empty() && context.is_empty() {
        return Err("no fluent that goal 100 or legality reads".into());
    }
    tracing::debug!(
        "patterns: context {} fluents ({base} states), {} groups, work {}",
        context.len(),
        sized.len(),
        work.spent
    );
    let mut pairs: HashMap<(usize, usize), bool> = HashMap::new();
    let mut last: Option<Vec<Vec<usize>>> = None;
    for (tier, &cap) in caps.iter().enumerate() {
        let blocks = blocks(&sized, base, cap);
        if last.as_ref() == Some(&blocks) {
            continue;
        }
        let built = databases(
            &rules, g, m, &context, &sized, &blocks, &holding, cap, &mut pairs, &mut work,
        );
        match built {
            Ok(h) => found(h),
            Err(e) if tier == 0 || e == abstraction::STOPPED => return Err(e),
            Err(e) => {
                tracing::debug!("patterns: tier {tier} not built: {e}");
                break;
            }
        }
        last = Some(blocks);
    }
    Ok(())
}

/// The databases of the patterns `blocks` (each a list of indices into
/// `sized`), each within `cap` abstract states (four times that where the
/// joined space came out larger than estimated), added where the
/// additivity check allows (`pairs` keeps its answers by pair of groups).
#[allow(clippy::too_many_arguments)]
fn databases<M: StateMachine>(
    rules: &Rules,
    g: &GroundProgram,
    m: &M,
    context: &[AtomId],
    sized: &[(Vec<AtomId>, usize)],
    blocks: &[Vec<usize>],
    holding: &HashSet<AtomId>,
    cap: usize,
    pairs: &mut HashMap<(usize, usize), bool>,
    work: &mut Work,
) -> Result<Heuristic, String> {
    let additive =
        blocks.len() < 2 || additive(rules, context, sized, blocks, holding, pairs, work)?;
    tracing::debug!(
        "patterns: {} blocks, additive {additive}, work {}",
        blocks.len(),
        work.spent
    );
    let mut databases = Vec::new();
    let mut kept_lists = Vec::new();
    let mut sizes = Vec::new();
    for block in blocks {
        let groups: Vec<&[AtomId]> = block.iter().map(|&i| sized[i].0.as_slice()).collect();
        let mut a = Abstraction::new(rules, union(context, &groups))?;
        let init = a.project(holding);
        // The joined space was estimated; it may come out larger.
        let space = a.explore(init, cap * 4, work)?;
        let owned = mask(&a.kept, &groups);
        let dist = if additive && blocks.len() > 1 {
            space.distances(|x, y| abstraction::differ(x, y, &owned))
        } else {
            space.distances(|_, _| true)
        };
        sizes.push(space.keys.len());
        databases.push(Database {
            index: space.index,
            dist,
        });
        kept_lists.push(a.kept);
    }
    let (by_number, by_term) = projection(g, m, &kept_lists);
    let description = format!(
        "{} pattern database{} ({} abstract states: {}), {}, context {} fluent{}; built with {} rule evaluations",
        databases.len(),
        if databases.len() == 1 { "" } else { "s" },
        sizes.iter().sum::<usize>(),
        sizes
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(" + "),
        match (databases.len(), additive) {
            (1, _) => "alone",
            (_, true) => "added",
            (_, false) => "their maximum",
        },
        context.len(),
        if context.len() == 1 { "" } else { "s" },
        work.spent
    );
    Ok(Heuristic {
        databases,
        additive,
        by_number,
        by_term,
        description,
    })
}

impl Heuristic {
    /// How many databases there are.
    pub fn databases(&self) -> usize {
        self.databases.len()
    }

    /// The abstract states the databases hold, in all.
    pub fn states(&self) -> usize {
        self.databases.iter().map(|d| d.dist.len()).sum()
    }

    /// Whether the databases are added (else their maximum is taken).
    pub fn additive(&self) -> bool {
        self.additive
    }

    /// The fewest moves from `state` to goal 100 the databases allow; `None`
    /// when some database finds the goal out of reach.
    pub fn estimate<M: StateMachine>(
        &self,
        m: &M,
        state: &M::State,
        scratch: &mut Vec<usize>,
    ) -> Option<u32> {
        let mut keys = vec![[0u64; 4]; self.databases.len()];
        if m.fluent_numbers(state, scratch) {
            for &n in scratch.iter() {
                for &(d, b) in self.by_number.get(n).into_iter().flatten() {
                    abstraction::set(&mut keys[d as usize], b as usize);
                }
            }
        } else {
            for f in m.fluents(state) {
                for &(d, b) in self.by_term.get(&f).into_iter().flatten() {
                    abstraction::set(&mut keys[d as usize], b as usize);
                }
            }
        }
        let mut total = 0u32;
        for (db, key) in self.databases.iter().zip(&keys) {
            // Every reachable state projects onto an explored abstract one;
            // were one missing, 0 would still be a bound.
            let d = db.index.get(key).map_or(0, |&i| db.dist[i as usize]);
            if d == u16::MAX {
                return None;
            }
            total = if self.additive {
                total + u32::from(d)
            } else {
                total.max(u32::from(d))
            };
        }
        Some(total)
    }
}

/// The groups of fluents beside the context: for each fluent schema goal
/// 100 reads, every fluent of it with one of the values the goal's fluents
/// have at the argument position where they have the most distinct values;
/// in the order the goal's fluents come.
fn groups(rules: &Rules, goal_fluents: &[AtomId], context: &[AtomId]) -> Vec<Vec<AtomId>> {
    let g = rules.program();
    let fluent = |x: AtomId| g.pool.args(g.atoms[x as usize])[0];
    let schema = |x: AtomId| {
        let f = fluent(x);
        (g.pool.functor(f), g.pool.args(f).len())
    };
    let in_context: HashSet<AtomId> = context.iter().copied().collect();
    let all: Vec<AtomId> = rules
        .fluents()
        .into_iter()
        .filter(|x| !in_context.contains(x))
        .collect();
    let mut out: Vec<Vec<AtomId>> = Vec::new();
    let mut done: HashSet<(crate::gdl::Sym, usize)> = HashSet::new();
    for &x in goal_fluents {
        let s = schema(x);
        if !done.insert(s) {
            continue;
        }
        if s.1 == 0 {
            out.push(vec![x]);
            continue;
        }
        let of_schema: Vec<AtomId> = goal_fluents
            .iter()
            .copied()
            .filter(|&y| schema(y) == s)
            .collect();
        let position = (0..s.1)
            .max_by_key(|&k| {
                let values: HashSet<_> = of_schema
                    .iter()
                    .map(|&y| g.pool.args(fluent(y))[k])
                    .collect();
                values.len()
            })
            .unwrap_or(0);
        let mut values = Vec::new();
        for &y in &of_schema {
            let v = g.pool.args(fluent(y))[position];
            if !values.contains(&v) {
                values.push(v);
            }
        }
        for v in values {
            let group: Vec<AtomId> = all
                .iter()
                .copied()
                .filter(|&y| schema(y) == s && g.pool.args(fluent(y))[position] == v)
                .collect();
            if !group.is_empty() {
                out.push(group);
            }
        }
    }
    out
}

/// The context and the groups' fluents, sorted.
fn union(context: &[AtomId], groups: &[&[AtomId]]) -> Vec<AtomId> {
    let mut kept: Vec<AtomId> = context.to_vec();
    for g in groups {
        kept.extend_from_slice(g);
    }
    kept.sort_unstable();
    kept.dedup();
    kept
}

/// The bits of `kept` that are the groups' fluents.
fn mask(kept: &[AtomId], groups: &[&[AtomId]]) -> Key {
    let own: HashSet<AtomId> = groups.iter().flat_map(|g| g.iter().copied()).collect();
    let mut m = [0; 4];
    for (i, f) in kept.iter().enumerate() {
        if own.contains(f) {
            abstraction::set(&mut m, i);
        }
    }
    m
}

/// Consecutive groups joined into patterns (lists of indices into `sized`)
/// while the estimated abstract space (the context's `base` states times
/// each group's factor) stays within `per_database`; one empty pattern (the
/// context alone) when there are no groups.
fn blocks(sized: &[(Vec<AtomId>, usize)], base: usize, per_database: usize) -> Vec<Vec<usize>> {
    if sized.is_empty() {
        return vec![Vec::new()];
    }
    let mut out: Vec<Vec<usize>> = Vec::new();
    let mut estimate = f64::INFINITY;
    for (i, (_, size)) in sized.iter().enumerate() {
        let factor = *size as f64 / base.max(1) as f64;
        match out.last_mut() {
            Some(block) if estimate * factor <= per_database as f64 => {
                estimate *= factor;
                block.push(i);
            }
            _ => {
                estimate = *size as f64;
                out.push(vec![i]);
            }
        }
    }
    out
}

/// Whether no abstract move changes groups of two patterns at once, checked
/// in the abstract space of each such pair of groups with the context (each
/// pair's answer kept in `pairs`, for the next tier).
fn additive(
    rules: &Rules,
    context: &[AtomId],
    sized: &[(Vec<AtomId>, usize)],
    blocks: &[Vec<usize>],
    holding: &HashSet<AtomId>,
    pairs: &mut HashMap<(usize, usize), bool>,
    work: &mut Work,
) -> Result<bool, String> {
    for (i, a) in blocks.iter().enumerate() {
        for b in &blocks[i + 1..] {
            for &ia in a {
                for &ib in b {
                    let disjoint = match pairs.get(&(ia, ib)) {
                        Some(&d) => d,
                        None => {
                            let (ga, gb) = (&sized[ia].0, &sized[ib].0);
                            let d = disjoint_moves(rules, context, ga, gb, holding, work)?;
                            pairs.insert((ia, ib), d);
                            d
                        }
                    };
                    if !disjoint {
                        return Ok(false);
                    }
                }
            }
        }
    }
    Ok(true)
}

/// Whether no move of the abstract space of groups `ga` and `gb` with the
/// context changes both (false too where that space is too large to tell).
fn disjoint_moves(
    rules: &Rules,
    context: &[AtomId],
    ga: &[AtomId],
    gb: &[AtomId],
    holding: &HashSet<AtomId>,
    work: &mut Work,
) -> Result<bool, String> {
    let mut abs = Abstraction::new(rules, union(context, &[ga, gb]))?;
    let (ma, mb) = (mask(&abs.kept, &[ga]), mask(&abs.kept, &[gb]));
    let init = abs.project(holding);
    let space: Space = match abs.explore(init, PAIR_STATES, work) {
        Ok(s) => s,
        Err(e) if e == abstraction::STOPPED => return Err(e),
        Err(_) => return Ok(false),
    };
    Ok(!space.edges.iter().any(|&(x, y)| {
        let (x, y) = (&space.keys[x as usize], &space.keys[y as usize]);
        abstraction::differ(x, y, &ma) && abstraction::differ(x, y, &mb)
    }))
}

/// Per engine fluent number (and per fluent term) the (database, bit)
/// pairs of the kept fluents.
#[allow(clippy::type_complexity)]
fn projection<M: StateMachine>(
    g: &GroundProgram,
    m: &M,
    kept: &[Vec<AtomId>],
) -> (Vec<Vec<(u16, u16)>>, HashMap<Term, Vec<(u16, u16)>>) {
    let mut by_term: HashMap<Term, Vec<(u16, u16)>> = HashMap::new();
    for (d, list) in kept.iter().enumerate() {
        for (b, &x) in list.iter().enumerate() {
            let f = g.pool.to_term(g.pool.args(g.atoms[x as usize])[0]);
            by_term.entry(f).or_default().push((d as u16, b as u16));
        }
    }
    let by_number = (0..m.numbered_fluents())
        .map(|i| {
            m.fluent_term(i)
                .and_then(|t| by_term.get(&t).cloned())
                .unwrap_or_default()
        })
        .collect();
    (by_number, by_term)
}

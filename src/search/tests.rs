//! Tests of the search: UCT on small games, leaf values mixed or as priors,
//! RAVE and MAST statistics, threads.

use super::*;
use crate::reasoner::Prover;

/// Three picks of `a` or `b`; the goal is 100 when `a` was picked at
/// least once, else 0. So every iteration that plays `a` anywhere wins,
/// and only `b b b` loses.
const THREE_PICKS: &str = "
    (role p)
    (init (step 0))
    (pick a) (pick b)
    (succ 0 1) (succ 1 2) (succ 2 3)
    (<= (legal p (take ?x)) (pick ?x))
    (<= (next (step ?y)) (true (step ?x)) (succ ?x ?y))
    (<= (next got) (does p (take a)))
    (<= (next got) (true got))
    (<= terminal (true (step 3)))
    (<= (goal p 100) (true got))
    (<= (goal p 0) (not (true got)))";

/// A leaf evaluator that values every state 1 for every role.
struct One;

impl<M: StateMachine> Evaluator<M> for One {
    fn evaluate(&self, m: &M, _: &M::State, _: bool, out: &mut Vec<f64>) {
        out.clear();
        out.resize(m.num_roles(), 1.0);
    }
}

/// Three picks as in THREE_PICKS, never won: every playout scores 0.
fn never_won() -> Arc<Prover> {
    let rules = THREE_PICKS.replace("(<= (next got) (does p (take a)))", "");
    let lost = crate::gdl::load_bytes(rules.as_bytes(), "lost.kif").expect("loads");
    Arc::new(Prover::try_new(lost).expect("builds"))
}

/// A leaf value mixed with the playouts: each playout here scores 0 and
/// the leaf value is 1, so with weight 0.5 every iteration that played
/// out backs up exactly 0.5 (and one that ended in a terminal node 0).
#[test]
fn leaf_values_are_mixed_with_the_playouts_by_their_weight() {
    let m = never_won();
    let cfg = SearchConfig {
        threads: 1,
        ..SearchConfig::default()
    };
    let mut plain = Mcts::new(Arc::clone(&m), m.initial_state(), cfg.clone());
    plain.search_iterations(6);
    let sum = |s: &Mcts<Prover>| {
        let root = s.trees[0].root();
        let st = root.stats(0);
        (
            st.iter().map(|x| x.sum).sum::<f64>(),
            st.iter().map(|x| x.visits).sum::<u64>(),
        )
    };
    assert_eq!(sum(&plain).0, 0.0);
    let mut mixed =
        Mcts::new(Arc::clone(&m), m.initial_state(), cfg).with_leaf_value(Arc::new(One), 0.5);
    mixed.search_iterations(6);
    let (total, visits) = sum(&mixed);
    assert_eq!(visits, 6);
    // The first iterations all expand a new node and play out from it.
    assert!(total >= 2.0 && (total * 2.0).fract() == 0.0, "{total}");
}

/// A prior: each node added counts the leaf value (1) as 4 visits on
/// the edge into it, once; the playouts (all lost) back up 0 unmixed.
#[test]
fn a_prior_counts_as_visits_on_the_edge_into_each_new_node() {
    let m = never_won();
    let cfg = SearchConfig {
        threads: 1,
        ..SearchConfig::default()
    };
    let mut s = Mcts::new(Arc::clone(&m), m.initial_state(), cfg).with_leaf_prior(Arc::new(One), 4);
    s.search_iterations(6);
    let root = s.trees[0].root();
    let st = root.stats(0);
    // Both root moves were tried (untried first), each adding a child.
    assert!(st.iter().all(|x| x.visits > 4), "{st:?}");
    assert_eq!(st.iter().map(|x| x.sum).sum::<f64>(), 8.0);
    assert_eq!(st.iter().map(|x| x.visits).sum::<u64>(), 6 + 8);
    assert_eq!(root.visits(), 6 + 8);
    // Deeper edges got theirs too, each once: a child's edges hold 4 a
    // node it added, and nothing else but visits.
    for (_, id) in root.children() {
        for x in s.trees[0].store.node(id).stats(0) {
            assert_eq!(x.sum, 4.0 * (x.sum / 4.0).round());
            assert!(x.sum == 0.0 || x.visits > 4);
        }
    }
    // A full tree adds no node, so no prior: a playout from a state with
    // no node of its own would otherwise count it again at every visit.
    let full = SearchConfig {
        threads: 1,
        node_limit: 1,
        ..SearchConfig::default()
    };
    let mut s =
        Mcts::new(Arc::clone(&m), m.initial_state(), full).with_leaf_prior(Arc::new(One), 4);
    s.search_iterations(6);
    let st = s.trees[0].root().stats(0);
    assert_eq!(st.iter().map(|x| x.visits).sum::<u64>(), 6);
    assert_eq!(st.iter().map(|x| x.sum).sum::<f64>(), 0.0);
}

#[test]
fn rave_and_mast_statistics_follow_the_moves_played() {
    let game = crate::gdl::load_bytes(THREE_PICKS.as_bytes(), "picks.kif").expect("loads");
    let m = Arc::new(Prover::try_new(game).expect("builds"));
    let cfg = SearchConfig {
        threads: 1,
        enhancements: "rave+mast".parse().expect("valid"),
        ..SearchConfig::default()
    };
    let mut s = Mcts::new(Arc::clone(&m), m.initial_state(), cfg);
    s.search_iterations(40);
    let t = &s.trees[0];
    let root = t.root();
    let idx = |name: &str| {
        root.moves[0]
            .iter()
            .position(|mv| {
                crate::gdl::print::term_to_string(&m.move_term(mv), &m.game().symbols)
                    == format!("(take {name})")
            })
            .expect("a move")
    };
    let (a, b) = (idx("a"), idx("b"));
    let amaf = root.amaf(0);
    // Every iteration that played `a` anywhere won: its AMAF mean is 1.
    assert!(amaf[a].visits > 0 && amaf[a].sum == amaf[a].visits as f64);
    // AMAF counts at least the iterations that chose the move here.
    assert!(amaf[a].visits >= root.stats(0)[a].visits);
    assert!(amaf[b].visits >= root.stats(0)[b].visits);
    // Each played iteration plays `a` or `b` at the root, and maybe the
    // other one below: the AMAF visits cover every played iteration.
    assert!(amaf[a].visits + amaf[b].visits >= t.local.playouts);
    // `b` wins exactly in the iterations that also played `a`.
    assert!(amaf[b].sum <= amaf[b].visits as f64);
    // MAST: `a` always won; every pick of `b` counted, won or lost.
    let ma = t.local.mast.get(0, &root.moves[0][a]);
    let mb = t.local.mast.get(0, &root.moves[0][b]);
    assert!(ma.visits > 0 && ma.mean() == 1.0, "{ma:?}");
    assert!(mb.visits > 0 && mb.mean() < 1.0, "{mb:?}");
    // Each played iteration made three picks, all in the table.
    assert_eq!(ma.visits + mb.visits, 3 * t.local.playouts);
}

/// Take one, two or three from a heap of 60; who takes the last wins.
/// Its tree (no transpositions) is far too big to solve in the test's
/// time, and it is a two-player turn game like the ones tree parallel is
/// for.
const NIM: &str = "
    (role a) (role b)
    (init (heap 60)) (init (control a))
    (<= (legal ?p (take 1)) (true (control ?p)) (true (heap ?n)) (succ ?m ?n))
    (<= (legal ?p (take 2)) (true (control ?p)) (true (heap ?n)) (succ ?m ?n) (succ ?k ?m))
    (<= (legal ?p (take 3)) (true (control ?p)) (true (heap ?n)) (succ ?m ?n) (succ ?k ?m)
        (succ ?j ?k))
    (<= (legal ?p noop) (role ?p) (not (true (control ?p))))
    (<= (next (heap ?m)) (does ?p (take 1)) (true (heap ?n)) (succ ?m ?n))
    (<= (next (heap ?k)) (does ?p (take 2)) (true (heap ?n)) (succ ?m ?n) (succ ?k ?m))
    (<= (next (heap ?j)) (does ?p (take 3)) (true (heap ?n)) (succ ?m ?n) (succ ?k ?m)
        (succ ?j ?k))
    (<= (next (control b)) (true (control a)))
    (<= (next (control a)) (true (control b)))
    (<= (next (last ?p)) (does ?p (take ?x)))
    (<= terminal (true (heap 0)))
    (<= (goal ?p 100) (true (last ?p)))
    (<= (goal ?p 0) (role ?p) (not (true (last ?p))))";

/// Four threads on one tree (two cores or fewer: they preempt each other
/// in the middle of updates) lose no count: at every node each role's
/// move visits add up to the node's visits, the children's visits to at
/// most the node's, value sums stay within the visits, and every node is
/// reached from the root once. Then the tree re-roots and goes on.
#[test]
fn four_threads_on_one_tree_lose_no_count() {
    let succ: String = (0..60).map(|i| format!("(succ {i} {})", i + 1)).collect();
    let rules = format!("{NIM} {succ}");
    let game = crate::gdl::load_bytes(rules.as_bytes(), "nim.kif").expect("loads");
    // The propnet: iterations short enough for the threads to collide.
    let m = Arc::new(crate::reasoner::Propnet::new(game).expect("compiles"));
    let cfg = SearchConfig {
        threads: 4,
        parallel: Parallel::Tree,
        seed: 3,
        ..SearchConfig::default()
    };
    let mut s = Mcts::new(Arc::clone(&m), m.initial_state(), cfg);
    // `before`: iterations and root visits before the last search.
    let check = |s: &Mcts<crate::reasoner::Propnet>, before: (u64, u64)| {
        let t = &s.trees[0];
        assert!(!t.root().solved(), "the heap is too big to solve here");
        assert_eq!(
            t.local.iterations - before.0,
            t.root().visits() - before.1,
            "every iteration passed the root once"
        );
        let mut seen = vec![false; t.node_count()];
        let mut stack = vec![0];
        while let Some(id) = stack.pop() {
            assert!(
                !std::mem::replace(&mut seen[id as usize], true),
                "node {id} twice"
            );
            let n = t.store.node(id);
            let kids = n.children();
            let below: u64 = kids.iter().map(|&(_, c)| t.store.node(c).visits()).sum();
            assert!(
                below <= n.visits(),
                "node {id}: children {below} > {}",
                n.visits()
            );
            if !n.solved() {
                for r in 0..n.moves.len() {
                    let st = n.stats(r);
                    let v: u64 = st.iter().map(|x| x.visits).sum();
                    assert_eq!(v, n.visits(), "node {id} role {r}");
                    for x in &st {
                        assert!(x.sum >= 0.0 && x.sum <= x.visits as f64, "{x:?}");
                    }
                }
            }
            stack.extend(kids.iter().map(|&(_, c)| c));
        }
        assert!(seen.iter().filter(|&&x| x).count() > 100);
    };
    s.search_until(Instant::now() + std::time::Duration::from_millis(400));
    check(&s, (0, 0));
    let take = |s: &Mcts<crate::reasoner::Propnet>| {
        let st = s.state().clone();
        let mv = s.best_move(s.trees[0].root().mover().expect("a turn"));
        let mut joint = Vec::new();
        for r in 0..2 {
            let legal = m.legal(&st, r);
            joint.push(if legal.len() == 1 { legal[0] } else { mv });
        }
        joint
    };
    let j = take(&s);
    s.advance(&j);
    let before = (s.trees[0].local.iterations, s.trees[0].root().visits());
    s.search_until(Instant::now() + std::time::Duration::from_millis(200));
    check(&s, before);
}

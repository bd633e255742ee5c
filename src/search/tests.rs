//! Tests of the search: UCT on small games, leaf values mixed or as priors,
//! RAVE and MAST statistics, threads.

use hashbrown::{HashMap, HashSet};

use super::node::NodeId;
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

/// Every node reachable from the root, each once (a graph's shared nodes
/// too).
fn reachable<M: StateMachine>(t: &tree::Tree<M>) -> Vec<NodeId> {
    let mut seen = HashSet::new();
    let mut stack = vec![0];
    let mut out = Vec::new();
    while let Some(id) = stack.pop() {
        if seen.insert(id) {
            out.push(id);
            stack.extend(t.store.node(id).children().into_iter().map(|(_, c)| c));
        }
    }
    out
}

/// The exact values of a turn-taking game's state (each role's goal,
/// 0..1, under best play by the mover), memoised by state.
fn exact<M: StateMachine>(m: &M, s: &M::State, memo: &mut HashMap<M::State, Vec<f64>>) -> Vec<f64> {
    if let Some(v) = memo.get(s) {
        return v.clone();
    }
    let roles = m.num_roles();
    let v = if m.is_terminal(s) {
        (0..roles)
            .map(|r| f64::from(m.goal(s, r).unwrap_or(0)) / 100.0)
            .collect()
    } else {
        let legal: Vec<Vec<M::Move>> = (0..roles).map(|r| m.legal(s, r)).collect();
        let mover = (0..roles).find(|&r| legal[r].len() > 1).unwrap_or(0);
        let mut best: Option<Vec<f64>> = None;
        for mv in &legal[mover] {
            let joint: Vec<M::Move> = (0..roles)
                .map(|r| {
                    if r == mover {
                        mv.clone()
                    } else {
                        legal[r][0].clone()
                    }
                })
                .collect();
            let v = exact(m, &m.next_state(s, &joint), memo);
            if best.as_ref().is_none_or(|b| v[mover] > b[mover]) {
                best = Some(v);
            }
        }
        best.expect("a mover has moves")
    };
    memo.insert(s.clone(), v.clone());
    v
}

/// Transpositions merged on tic-tac-toe (a corpus game full of them): no
/// two nodes hold the same state, the graph holds fewer nodes than the
/// tree after the same iterations, every node the solver proves on the
/// graph has the game's exact value, and after a move the kept part is
/// still one node per state.
#[test]
fn merged_transpositions_keep_one_node_per_state_and_solve_exactly() {
    let game =
        crate::gdl::load(std::path::Path::new("../shared/games/ticTacToe.kif")).expect("loads");
    let m = Arc::new(crate::reasoner::Propnet::new(game).expect("compiles"));
    let cfg = |tt| SearchConfig {
        threads: 1,
        seed: 5,
        enhancements: Enhancements {
            transpositions: tt,
            ..Enhancements::default()
        },
        ..SearchConfig::default()
    };
    let mut memo = HashMap::new();
    let mut check = |s: &Mcts<crate::reasoner::Propnet>| {
        let t = &s.trees[0];
        let ids = reachable(t);
        let states: HashSet<_> = ids
            .iter()
            .map(|&id| t.store.node(id).state.clone())
            .collect();
        assert_eq!(states.len(), ids.len(), "one node per state");
        let mut solved = 0;
        for &id in &ids {
            let n = t.store.node(id);
            if let Some(v) = n.values.get() {
                assert_eq!(v, &exact(&*m, &n.state, &mut memo), "node {id}");
                solved += 1;
            }
        }
        (ids.len(), solved)
    };
    let mut tree = Mcts::new(Arc::clone(&m), m.initial_state(), cfg(false));
    let mut graph = Mcts::new(Arc::clone(&m), m.initial_state(), cfg(true));
    tree.search_iterations(3_000);
    graph.search_iterations(3_000);
    let (nodes, _) = check(&graph);
    assert!(
        nodes < tree.stats().nodes,
        "{nodes} nodes merged against {} in the tree",
        tree.stats().nodes
    );
    graph.search_iterations(50_000);
    let (_, solved) = check(&graph);
    assert!(solved > 1_000, "{solved} nodes solved");
    let mover = graph.trees[0].root().mover().expect("a turn");
    let first = graph.best_move(mover);
    let joint: Vec<_> = (0..2)
        .map(|r| {
            let legal = m.legal(graph.state(), r);
            if r == mover {
                first
            } else {
                legal[0]
            }
        })
        .collect();
    graph.advance(&joint);
    check(&graph);
    graph.search_iterations(1_000);
    check(&graph);
}

/// A game whose states repeat (a switch flipped back and forth, no step
/// counter): merged, the graph has a cycle, and the search still ends
/// every iteration and finds the win.
#[test]
fn a_cycle_through_merged_states_ends_the_descent() {
    let rules = "
        (role p)
        (init off)
        (<= (legal p flip) (not (true won)))
        (<= (legal p win) (true on))
        (<= (next on) (true off) (does p flip))
        (<= (next off) (true on) (does p flip))
        (<= (next won) (does p win))
        (<= terminal (true won))
        (<= (goal p 100) (true won))
        (<= (goal p 0) (not (true won)))";
    let game = crate::gdl::load_bytes(rules.as_bytes(), "switch.kif").expect("loads");
    let m = Arc::new(Prover::try_new(game).expect("builds"));
    let cfg = SearchConfig {
        threads: 1,
        enhancements: Enhancements {
            transpositions: true,
            ..Enhancements::default()
        },
        ..SearchConfig::default()
    };
    let mut s = Mcts::new(Arc::clone(&m), m.initial_state(), cfg);
    s.search_iterations(500);
    assert_eq!(s.stats().iterations, 500);
    assert_eq!(s.stats().nodes, 3, "off, on and won: one node each");
    assert!(s.trees[0].root().solved(), "flip then win: a proven win");
}

/// Implicit minimax on breakthrough (a tree searched by one thread): at
/// every node the values are the mover's best expanded child's, a node
/// without children holds the heuristic's value of its state, and a solved
/// node its exact values; the mover's choice reads them.
#[test]
fn implicit_minimax_backs_up_the_best_child_for_the_mover() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/games/breakthrough.kif");
    let game = crate::gdl::load(&path).expect("loads");
    let m = Arc::new(crate::reasoner::Propnet::new(game).expect("compiles"));
    let cfg = SearchConfig {
        threads: 1,
        seed: 9,
        enhancements: "mast+imb".parse().expect("parses"),
        ..SearchConfig::default()
    };
    let h = heuristic::Heuristic::new(&*m);
    let mut s = Mcts::new(Arc::clone(&m), m.initial_state(), cfg);
    s.search_iterations(4_000);
    let t = &s.trees[0];
    let mut leaves = 0;
    for id in reachable(t).into_iter().filter(|&id| id != 0) {
        let n = t.store.node(id);
        let values: Vec<f64> = (0..2).map(|r| n.minimax_value(r).expect("kept")).collect();
        if let Some(exact) = n.values.get() {
            assert_eq!(&values, exact);
            continue;
        }
        let kids = n.children();
        if kids.is_empty() {
            let mut own = Vec::new();
            h.evaluate(&*m, &n.state, false, &mut own);
            assert_eq!(values, own, "node {id}");
            leaves += 1;
            continue;
        }
        let r = n.mover().expect("breakthrough takes turns");
        let best = kids
            .iter()
            .map(|&(_, c)| t.store.node(c).minimax_value(r).expect("kept"))
            .fold(f64::NEG_INFINITY, f64::max);
        assert_eq!(values[r], best, "node {id}");
    }
    assert!(leaves > 100, "{leaves} leaves");
}

/// The moves MAST's table learns as finishing the game: in breakthrough
/// only moves onto the opponent's home row (the other way to win, taking
/// the last piece, is not bound to a move); in connect four none, where a
/// drop wins on some boards only.
#[test]
fn mast_learns_moves_that_finish_the_game_and_only_those() {
    let load = |file: &str| {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../shared/games")
            .join(file);
        let game = crate::gdl::load(&path).expect("loads");
        Arc::new(crate::reasoner::Propnet::new(game).expect("compiles"))
    };
    let finishing = |m: &Arc<crate::reasoner::Propnet>| {
        let cfg = SearchConfig {
            threads: 1,
            seed: 4,
            enhancements: "mast+finish".parse().expect("parses"),
            ..SearchConfig::default()
        };
        let mut s = Mcts::new(Arc::clone(m), m.initial_state(), cfg);
        s.search_iterations(20_000);
        let symbols = &m.game().symbols;
        let mut found: Vec<(usize, String)> = s.trees[0]
            .local
            .mast
            .finishing()
            .map(|(r, mv)| {
                (
                    r,
                    crate::gdl::print::term_to_string(&m.move_term(mv), symbols),
                )
            })
            .collect();
        found.sort();
        found
    };
    let breakthrough = finishing(&load("breakthrough.kif"));
    assert!(breakthrough.len() >= 4, "{breakthrough:?}");
    for (r, mv) in &breakthrough {
        // white (role 0) moves up to row 8, black down to row 1.
        let row = if *r == 0 { " 8)" } else { " 1)" };
        assert!(mv.starts_with("(move ") && mv.ends_with(row), "{r} {mv}");
    }
    assert_eq!(finishing(&load("connectFour.kif")), vec![]);
}

//! The fingerprint's unit tests: small games written here, scrambled copies,
//! games that differ by one thing, and what colour refinement cannot tell
//! apart.

use super::*;
use crate::gdl::parse;
use crate::gdl::print::{description_to_string, term_to_string};

const TICTACTOE: &str = "
    (role xplayer) (role oplayer)
    (init (cell 1 1 b)) (init (cell 1 2 b)) (init (cell 2 1 b)) (init (cell 2 2 b))
    (init (control xplayer))
    (<= (legal ?w (mark ?x ?y)) (true (cell ?x ?y b)) (true (control ?w)))
    (<= (legal xplayer noop) (true (control oplayer)))
    (<= (legal oplayer noop) (true (control xplayer)))
    (<= (next (cell ?m ?n x)) (does xplayer (mark ?m ?n)) (true (cell ?m ?n b)))
    (<= (next (cell ?m ?n o)) (does oplayer (mark ?m ?n)) (true (cell ?m ?n b)))
    (<= (next (cell ?m ?n ?w)) (true (cell ?m ?n ?w)) (distinct ?w b))
    (<= (next (cell ?m ?n b)) (does ?w (mark ?j ?k)) (true (cell ?m ?n b))
        (or (distinct ?m ?j) (distinct ?n ?k)))
    (<= (next (control oplayer)) (true (control xplayer)))
    (<= (next (control xplayer)) (true (control oplayer)))
    (<= (row ?m ?x) (true (cell ?m 1 ?x)) (true (cell ?m 2 ?x)))
    (<= (line ?x) (row ?m ?x))
    (<= open (true (cell ?m ?n b)))
    (<= (goal xplayer 100) (line x))
    (<= (goal xplayer 0) (not (line x)))
    (<= (goal oplayer 100) (line o))
    (<= (goal oplayer 0) (not (line o)))
    (<= terminal (line x)) (<= terminal (line o)) (<= terminal (not open))
";

fn game(text: &str) -> Description {
    parse(text, "test").expect("the test game parses")
}

fn term(text: &str, symbols: &Symbols) -> Term {
    crate::gdl::parser::SExpr::parse_one(text, "term")
        .and_then(|e| e.to_ground(symbols))
        .expect("a ground term of the game")
}

#[test]
fn display_and_parse_round_trip() {
    let f = fingerprint(&game(TICTACTOE));
    let text = f.to_string();
    assert_eq!(text.len(), 32);
    assert_eq!(text, text.to_lowercase());
    assert_eq!(text.parse::<Fingerprint>(), Ok(f));
    assert!("xyz".parse::<Fingerprint>().is_err());
    assert!(format!("{text}0").parse::<Fingerprint>().is_err());
}

#[test]
fn stable_across_runs() {
    // Stored on disk: these values must never change without a new tag
    // in `fingerprint` (and a way to read the old stores).
    let f = fingerprint(&game("(role r) (init p) (<= (legal r a) (true p))"));
    let g = game("(role robot) (init q) (<= (legal robot b) (true q))");
    assert_eq!(fingerprint(&g), f);
    assert_eq!(f.to_string(), "50c8cefc02564ccb6fef833d1b765e64");
    assert_eq!(
        fingerprint(&game(TICTACTOE)).to_string(),
        "cd0b119e119fc0d4722cca03d99c05e9"
    );
}

#[test]
fn scrambled_copies_have_the_same_fingerprint_and_a_map() {
    let d = game(TICTACTOE);
    let f = fingerprint(&d);
    for seed in 0..20 {
        let s = scramble(&d, seed);
        assert_ne!(description_to_string(&s), description_to_string(&d));
        assert_eq!(fingerprint(&s), f, "seed {seed}");
        let map = find_mapping(&d, &s).expect("a map to the scrambled copy");
        assert_eq!(
            canonical_rules(&d, Some((&map, &s.symbols))),
            canonical_rules(&s, None)
        );
        // Numbers and keywords stay; a move translates to the same move
        // under the scrambled names.
        let mv = term("(mark 1 2)", &d.symbols);
        let moved = map.term(&mv).expect("the move translates");
        let text = term_to_string(&moved, &s.symbols);
        assert!(text.ends_with(" 1 2)"), "{text}");
        assert_eq!(map.get(kw::LEGAL), Some(kw::LEGAL));
        let back = find_mapping(&s, &d).expect("and back");
        assert_eq!(back.term(&moved), Some(mv));
    }
}

#[test]
fn symmetric_constants_still_map() {
    // Four interchangeable columns: colours never split them, so the map
    // comes from individualising one and refining again.
    let d = game(
        "(role p) (col a) (col b) (col c) (col d)
         (init (free a)) (init (free b)) (init (free c)) (init (free d))
         (<= (legal p (take ?c)) (true (free ?c)))
         (<= (next (free ?c)) (true (free ?c)) (not (does p (take ?c))))
         (<= (next (taken ?c)) (does p (take ?c)))
         (<= (pair ?x ?y) (col ?x) (col ?y) (distinct ?x ?y))
         (<= (goal p 100) (true (taken a)) (true (taken b)))
         (<= (goal p 100) (true (taken c)) (true (taken d)))
         (<= (goal p 0) (not (goal p 100)))
         (<= terminal (not (true (free a))))",
    );
    let f = fingerprint(&d);
    for seed in 0..10 {
        let s = scramble(&d, seed);
        assert_eq!(fingerprint(&s), f);
        let map = find_mapping(&d, &s).expect("a map despite the symmetry");
        // Under the map the rules are the scrambled rules, and {a, b}
        // and {c, d} stay the pairs the goals keep together.
        assert_eq!(
            canonical_rules(&d, Some((&map, &s.symbols))),
            canonical_rules(&s, None)
        );
        let name = |t: &str| {
            let m = map.term(&term(t, &d.symbols)).expect("translates");
            term_to_string(&m, &s.symbols)
        };
        let goals: Vec<String> = canonical_rules(&s, None)
            .into_iter()
            .filter(|r| r.contains("(goal ") && r.contains(" 100)"))
            .collect();
        for (x, y) in [("a", "b"), ("c", "d")] {
            let (x, y) = (name(x), name(y));
            assert!(
                goals.iter().any(|g| g.contains(&x) && g.contains(&y)),
                "{x} {y}"
            );
        }
    }
}

#[test]
fn differing_games_differ() {
    let base = game(TICTACTOE);
    let f = fingerprint(&base);
    let changes = [
        // One constant: the blank of one initial cell becomes a mark.
        ("(init (cell 2 2 b))", "(init (cell 2 2 x))"),
        // One number.
        ("(goal xplayer 0)", "(goal xplayer 50)"),
        // One negation dropped.
        ("(not (line o))", "(line o)"),
        // Two arguments swapped.
        ("(cell ?m 2 ?x)", "(cell 2 ?m ?x)"),
        // A variable made the same as another.
        ("(distinct ?n ?k)", "(distinct ?n ?j)"),
    ];
    for (from, to) in changes {
        assert!(TICTACTOE.contains(from), "{from}");
        let other = game(&TICTACTOE.replacen(from, to, 1));
        assert_ne!(fingerprint(&other), f, "{from} -> {to}");
        assert!(find_mapping(&base, &other).is_none(), "{from} -> {to}");
        assert!(find_mapping(&other, &base).is_none(), "{from} -> {to}");
        let scrambled = scramble(&other, 7);
        assert!(find_mapping(&base, &scrambled).is_none(), "{from} -> {to}");
    }
    // A rule written twice is a different multiset of rules.
    let twice = game(&format!("{TICTACTOE} (<= terminal (line x))"));
    assert_ne!(fingerprint(&twice), f);
    assert!(find_mapping(&base, &twice).is_none());
}

#[test]
fn keywords_and_numbers_are_not_renamed() {
    // `1` and `2` swapped is a different game, though a renaming of the
    // constants `one` and `two` would be the same game.
    let a =
        game("(role r) (init (s 1)) (<= (next (s 2)) (true (s 1))) (<= (goal r 100) (true (s 2)))");
    let b =
        game("(role r) (init (s 2)) (<= (next (s 1)) (true (s 2))) (<= (goal r 100) (true (s 1)))");
    assert_ne!(fingerprint(&a), fingerprint(&b));
    assert!(find_mapping(&a, &b).is_none());
    let c = game("(role r) (init (s one)) (<= (next (s two)) (true (s one))) (<= (goal r 100) (true (s two)))");
    let d = game("(role r) (init (s two)) (<= (next (s one)) (true (s two))) (<= (goal r 100) (true (s one)))");
    assert_eq!(fingerprint(&c), fingerprint(&d));
    let map = find_mapping(&c, &d).expect("one and two swap");
    let one = c.symbols.get("one").expect("one");
    assert_eq!(map.get(one), d.symbols.get("two"));
}

/// An undirected graph over constants `n0`, `n1`, ... as `edge` facts.
fn graph(edges: &[(usize, usize)]) -> Description {
    let mut text = String::from("(role r) (<= (goal r 100) (edge ?x ?y) (edge ?y ?z))");
    for (x, y) in edges {
        text.push_str(&format!(" (edge n{x} n{y}) (edge n{y} n{x})"));
    }
    game(&text)
}

/// `k` disjoint cycles of length `len`.
fn cycles(k: usize, len: usize) -> Vec<(usize, usize)> {
    (0..k)
        .flat_map(|c| (0..len).map(move |i| (c * len + i, c * len + (i + 1) % len)))
        .collect()
}

#[test]
fn what_colours_cannot_tell_apart_the_map_still_refuses() {
    // One hexagon and two triangles: every constant has two neighbours,
    // so colour refinement gives both graphs the same colours and the
    // same fingerprint (a known limit: the store must confirm a match
    // with `find_mapping`, which individualises and finds no map).
    let (hexagon, triangles) = (graph(&cycles(1, 6)), graph(&cycles(2, 3)));
    assert_eq!(fingerprint(&hexagon), fingerprint(&triangles));
    assert!(find_mapping(&hexagon, &triangles).is_none());
    assert!(find_mapping(&triangles, &hexagon).is_none());
    assert!(find_mapping(&hexagon, &scramble(&hexagon, 1)).is_some());
    assert!(find_mapping(&triangles, &scramble(&triangles, 1)).is_some());
}

#[test]
fn many_ties_are_settled_quickly() {
    // 40 triangles against 20 hexagons, and 40 triangles against a
    // scrambled copy: 120 interchangeable constants each. The map's search
    // gives up past a budget of work (`WORK_BUDGET`), so finding the map
    // says it fit.
    let (many, fewer) = (graph(&cycles(40, 3)), graph(&cycles(20, 6)));
    assert!(find_mapping(&many, &fewer).is_none());
    let copy = scramble(&many, 3);
    let map = find_mapping(&many, &copy).expect("a map among many ties");
    assert_eq!(
        canonical_rules(&many, Some((&map, &copy.symbols))),
        canonical_rules(&copy, None)
    );
}

#[test]
fn or_alternatives_and_distinct_sides() {
    let a = game("(role r) (<= (p ?x) (q ?x) (or (s ?x) (and (t ?x) (u ?x))))");
    let b = game("(role r) (<= (p ?y) (or (and (u ?y) (t ?y)) (s ?y)) (q ?y))");
    assert_eq!(fingerprint(&a), fingerprint(&b));
    assert!(find_mapping(&a, &b).is_some());
    let c = game("(role r) (<= (p ?y) (or (u ?y) (t ?y) (s ?y)) (q ?y))");
    assert_ne!(fingerprint(&a), fingerprint(&c));
    assert!(find_mapping(&a, &c).is_none());
}

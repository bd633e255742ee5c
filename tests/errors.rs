//! What a user sees for broken game descriptions: one insta snapshot per broken
//! input (tests/snapshots/errors__*.snap). Each message must say what is wrong and
//! where (file, line, column, and the rule when a rule is at fault).
//!
//! To review changed messages: `INSTA_UPDATE=always cargo test --release --test errors`
//! (or `cargo insta review`), then read the diff of tests/snapshots.

use ggp_asp::gdl;

/// The diagnostics for `text` as the user sees them, or the warnings if it loads.
fn report(text: &[u8]) -> String {
    match gdl::load_bytes(text, "broken.kif") {
        Err(e) => e.to_string(),
        Ok(game) => {
            let w: Vec<String> = game.warnings.iter().map(|d| d.to_string()).collect();
            format!("loaded, with {} warning(s):\n{}", w.len(), w.join("\n"))
        }
    }
}

/// A small valid game to break in one place at a time.
const BASE: &str = "(role player)
(init (count 0))
(<= (legal player inc) (true (count ?n)))
(<= (next (count ?m)) (does player inc) (true (count ?n)) (succ ?n ?m))
(<= terminal (true (count 2)))
(<= (goal player 100) (true (count 2)))
(<= (goal player 0) (not (true (count 2))))
(succ 0 1) (succ 1 2)
";

#[test]
fn the_base_game_is_valid() {
    assert_eq!(report(BASE.as_bytes()), "loaded, with 0 warning(s):\n");
}

#[test]
fn unclosed_parenthesis() {
    let text = BASE.replace("(succ 0 1) (succ 1 2)", "(succ 0 1) (succ 1 2");
    insta::assert_snapshot!(report(text.as_bytes()));
}

#[test]
fn extra_closing_parenthesis() {
    let text = BASE.replace(
        "(<= terminal (true (count 2)))",
        "(<= terminal (true (count 2))))",
    );
    insta::assert_snapshot!(report(text.as_bytes()));
}

#[test]
fn empty_file() {
    insta::assert_snapshot!(report(b""));
}

#[test]
fn only_comments() {
    insta::assert_snapshot!(report(b"; a game that was never written\n#| nor here |#\n"));
}

#[test]
fn invalid_utf8() {
    let mut bytes = BASE.as_bytes().to_vec();
    let at = BASE.find("(succ 0 1)").unwrap();
    bytes.splice(at..at, [0xff, 0xfe]);
    insta::assert_snapshot!(report(&bytes));
}

#[test]
fn unterminated_block_comment() {
    let text = BASE.replace("(succ 0 1)", "#| the successor facts (succ 0 1)");
    insta::assert_snapshot!(report(text.as_bytes()));
}

#[test]
fn unbound_head_variable() {
    let text = BASE.replace(
        "(<= (legal player inc) (true (count ?n)))",
        "(<= (legal ?who inc) (true (count ?n)))",
    );
    insta::assert_snapshot!(report(text.as_bytes()));
}

#[test]
fn unbound_variable_in_distinct() {
    let text = BASE.replace(
        "(<= (legal player inc) (true (count ?n)))",
        "(<= (legal player inc) (true (count ?n)) (distinct ?n ?limit))",
    );
    insta::assert_snapshot!(report(text.as_bytes()));
}

/// `(<= (legal ?player noop))`: every role may pass (ggp-base's reading).
#[test]
fn bodiless_legal_ranges_over_the_roles() {
    let text = format!("(role other) {BASE}(<= (legal ?player noop))");
    insta::assert_snapshot!(report(text.as_bytes()));
}

/// `?a` is bound by no body literal: it ranges over what the calls ask in
/// its place, the counts of the state here.
#[test]
fn head_variable_ranges_over_what_its_place_holds() {
    let text = BASE
        .replace(
            "(<= terminal (true (count 2)))",
            "(<= terminal (true (count ?n)) (same ?n ?n ?n) (succ ?m ?n))",
        )
        .replace("(succ 0 1)", "(succ 0 1) (<= (same ?a ?a ?a) (succ 0 1))");
    insta::assert_snapshot!(report(text.as_bytes()));
}

/// `(distinct ?w ?x)` over head variables no literal binds: both range over
/// their places, then the `distinct` is safe.
#[test]
fn distinct_over_head_variables_without_a_binding() {
    let text = BASE.replace(
        "(<= (legal player inc) (true (count ?n)))",
        "(<= (legal player inc) (true (count ?n)) (apart ?n 2 ?n 0))
(<= (apart ?w ?x ?y ?z) (distinct ?w ?x))",
    );
    insta::assert_snapshot!(report(text.as_bytes()));
}

/// A place that holds ever deeper terms gives an unsafe variable no finite
/// reading: an error that says so.
#[test]
fn unsafe_variable_without_a_finite_reading() {
    let text = BASE.replace(
        "(succ 0 1)",
        "(num z) (<= (num (s ?x)) (num ?x)) (<= (p ?x) (num ?x) (q ?x)) (<= (q ?y) (succ 0 1)) (succ 0 1) (<= (legal player wait) (p ?x))",
    );
    insta::assert_snapshot!(report(text.as_bytes()));
}

/// A `legal` rule whose move has a variable that nothing can give a term.
#[test]
fn unsafe_move_with_nothing_in_its_place() {
    let text = BASE.replace(
        "(<= (legal player inc) (true (count ?n)))",
        "(<= (legal player inc) (true (count ?n))) (<= (legal player (jump ?a)) (true (count 0)))",
    );
    insta::assert_snapshot!(report(text.as_bytes()));
}

/// `(f)` and `f` are different terms, and `(f)` prints with its parentheses.
#[test]
fn zero_argument_terms_keep_their_parentheses() {
    let game = gdl::load_bytes(
        b"(role p) (init (gameOver)) (<= (legal p (pass)) (true (gameOver))) (<= (legal p pass) (true gameOver))",
        "z.kif",
    )
    .unwrap();
    let printed: Vec<String> = game
        .rules
        .iter()
        .map(|r| gdl::print::rule_to_string(r, &game.symbols))
        .collect();
    assert_eq!(
        printed,
        [
            "(role p)",
            "(init (gameOver))",
            "(<= (legal p (pass)) (true (gameOver)))",
            "(<= (legal p pass) (true gameOver))"
        ]
    );
    assert_ne!(game.rules[2].head, game.rules[3].head);
}

#[test]
fn variable_only_inside_not_is_a_warning() {
    let text = BASE.replace(
        "(<= (legal player inc) (true (count ?n)))",
        "(<= (legal player inc) (true (count ?n)) (not (succ ?n ?m)))",
    );
    insta::assert_snapshot!(report(text.as_bytes()));
}

#[test]
fn recursion_through_not() {
    let text = format!("{BASE}(<= (odd ?m) (succ ?n ?m) (not (odd ?n)))\n");
    insta::assert_snapshot!(report(text.as_bytes()));
}

#[test]
fn no_roles() {
    let text = BASE.replace("(role player)\n", "");
    insta::assert_snapshot!(report(text.as_bytes()));
}

#[test]
fn duplicate_role() {
    let text = format!("(role player)\n{BASE}");
    insta::assert_snapshot!(report(text.as_bytes()));
}

#[test]
fn wrong_arity_of_true() {
    let text = BASE.replace(
        "(<= (legal player inc) (true (count ?n)))",
        "(<= (legal player inc) (true (count ?n) 1))",
    );
    insta::assert_snapshot!(report(text.as_bytes()));
}

#[test]
fn wrong_arity_of_does() {
    let text = BASE.replace("(does player inc)", "(does inc)");
    insta::assert_snapshot!(report(text.as_bytes()));
}

/// Some corpus games use `next/2` as a helper: another arity of a keyword is
/// an ordinary relation, with a warning.
#[test]
fn wrong_keyword_arity() {
    let text = BASE.replace(
        "(<= (legal player inc) (true (count ?n)))",
        "(<= (legal player) (true (count ?n)))",
    );
    insta::assert_snapshot!(report(text.as_bytes()));
}

#[test]
fn does_in_a_legal_rule() {
    let text = BASE.replace(
        "(<= (legal player inc) (true (count ?n)))",
        "(<= (legal player inc) (true (count ?n)) (does player inc))",
    );
    insta::assert_snapshot!(report(text.as_bytes()));
}

#[test]
fn init_depends_on_the_state() {
    let text = format!("{BASE}(<= (init (count 1)) (true (count 0)))\n");
    insta::assert_snapshot!(report(text.as_bytes()));
}

#[test]
fn gdl2_sees() {
    let text = format!("{BASE}(<= (sees player (count ?n)) (true (count ?n)))\n");
    insta::assert_snapshot!(report(text.as_bytes()));
}

#[test]
fn gdl2_random_role() {
    let text = format!("(role random)\n{BASE}");
    insta::assert_snapshot!(report(text.as_bytes()));
}

#[test]
fn variable_as_rule_head() {
    let text = format!("{BASE}(<= ?head (true (count 1)))\n");
    insta::assert_snapshot!(report(text.as_bytes()));
}

#[test]
fn true_defined_by_a_rule() {
    let text = format!("{BASE}(<= (true (count 1)) (succ 0 1))\n");
    insta::assert_snapshot!(report(text.as_bytes()));
}

#[test]
fn rule_without_head() {
    let text = format!("{BASE}(<=)\n");
    insta::assert_snapshot!(report(text.as_bytes()));
}

#[test]
fn empty_list_as_a_term() {
    let text = BASE.replace("(init (count 0))", "(init (count ()))");
    insta::assert_snapshot!(report(text.as_bytes()));
}

#[test]
fn nested_rule() {
    let text = BASE.replace("(succ 0 1)", "(succ 0 (<= 1))");
    insta::assert_snapshot!(report(text.as_bytes()));
}

#[test]
fn goal_value_out_of_range_is_a_warning() {
    let text = BASE.replace(
        "(<= (goal player 100) (true (count 2)))",
        "(<= (goal player 150) (true (count 2)))",
    );
    insta::assert_snapshot!(report(text.as_bytes()));
}

#[test]
fn undefined_relation_is_a_warning() {
    let text = BASE.replace(
        "(<= terminal (true (count 2)))",
        "(<= terminal (true (count 2)) (finished))",
    );
    insta::assert_snapshot!(report(text.as_bytes()));
}

#[test]
fn several_errors_are_all_reported() {
    let text = BASE
        .replace(
            "(<= (legal player inc) (true (count ?n)))",
            "(<= (legal ?who inc) (true (count ?n)))",
        )
        .replace(
            "(<= terminal (true (count 2)))",
            "(<= terminal (true (count 2)) (does player inc))",
        );
    insta::assert_snapshot!(report(text.as_bytes()));
}

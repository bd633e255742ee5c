//! Learned values ([`ggp_asp::learn`]): a model learned in seconds on
//! tic-tac-toe is saved, loaded and played by `nn-uct`, `nn-mix` (the net and
//! playouts mixed), `nn-prior` (the net's value as each new node's first
//! visits), `nn-alphabeta` and `uct-tuned` (plain UCT with the tuned
//! constant) with
//! legal moves to the end; a model of other rules is refused with a message
//! and the player plays plain UCT; truncated files and other format versions
//! are refused with messages that say which. The network and CEM themselves
//! are tested in `src/learn`.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::puzzle_path;
use ggp_asp::arena::{run_match, MatchEnd, PlayerSpec, RefereeConfig};
use ggp_asp::gdl;
use ggp_asp::learn::model::VERSION;
use ggp_asp::learn::train::{learn, Keep, LearnConfig, Target};
use ggp_asp::learn::{Model, NetEvaluator, Perspective};
use ggp_asp::reasoner::{Engine, Propnet, Prover, StateMachine};

fn tictactoe_model() -> Model {
    let g = gdl::load(&puzzle_path("tictactoe")).expect("loads");
    let net = Arc::new(Propnet::new(g).expect("compiles"));
    let cfg = LearnConfig {
        examples: 300,
        seconds: 3.0,
        iterations: 60,
        seed: 3,
        threads: 2,
        keep: Keep::Winner,
        target: Target::Estimate,
    };
    learn(net, &cfg, &mut |_| {}).expect("learns")
}

#[test]
fn a_model_learned_on_tictactoe_loads_and_plays_legal_moves() {
    let model = tictactoe_model();
    assert!(model.examples >= 10 && !model.fluents.is_empty());
    assert!(model.exploration > 0.0);
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join("ttt.json");
    model.save(&path).expect("saves");
    let loaded = Arc::new(Model::load(&path).expect("loads"));
    // The weights come back within JSON's decimal rounding.
    let (a, b) = (&loaded.network, &model.network);
    assert_eq!(a.hidden.len(), b.hidden.len());
    assert!(a.out.iter().zip(&b.out).all(|(x, y)| (x - y).abs() < 1e-12));
    let g = gdl::load(&puzzle_path("tictactoe")).expect("loads");
    for spec in ["nn-uct", "nn-mix", "nn-prior", "nn-alphabeta", "uct-tuned"] {
        let cfg = RefereeConfig {
            start_clock: Duration::from_secs(120),
            play_clock: Duration::from_secs(120),
            engine: Engine::Auto,
            iterations: Some(50),
            model: Some(Arc::clone(&loaded)),
            ..RefereeConfig::default()
        };
        let p: PlayerSpec = spec.parse().expect("a player");
        let rec = run_match(&g, vec![p, PlayerSpec::Random], &cfg).expect("runs");
        assert_eq!(rec.end, MatchEnd::Terminal, "{spec}");
        assert!(rec.errors.is_empty(), "{spec}: {:?}", rec.errors);
        assert_eq!(rec.players[0], spec);
    }
}

/// The readers (fluents found by the engine's numbers, or by their terms)
/// give the inputs the printed fluents give, on every state of random walks,
/// for rules loaded anew (other symbol tables than the model was learned
/// with) on both engines.
#[test]
fn inputs_read_by_number_or_term_equal_inputs_read_by_text() {
    use rand::{Rng, SeedableRng};
    let model = tictactoe_model();
    let game = gdl::load(&puzzle_path("tictactoe")).expect("loads");
    fn walks<M: StateMachine>(m: &M, model: &Model, reader: &ggp_asp::learn::Reader) -> usize {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(5);
        let mut x = Vec::new();
        let mut seen = 0;
        for _ in 0..20 {
            let mut s = m.initial_state();
            loop {
                reader.inputs(m, &s, &mut x);
                assert_eq!(x, model.inputs(m, &s));
                seen += x.iter().filter(|&&v| v == 1.0).count();
                if m.is_terminal(&s) {
                    break;
                }
                let joint: Vec<M::Move> = (0..m.num_roles())
                    .map(|r| {
                        let l = m.legal(&s, r);
                        l[rng.gen_range(0..l.len())].clone()
                    })
                    .collect();
                s = m.next_state(&s, &joint);
            }
        }
        seen
    }
    let net = Propnet::new(game.clone()).expect("compiles");
    let prover = Prover::new(game.clone());
    let by_terms = model.reader_by_terms(&game);
    assert!(
        walks(&net, &model, &model.reader(&net)) > 0,
        "some input is 1"
    );
    assert!(walks(&net, &model, &by_terms) > 0);
    assert!(walks(&prover, &model, &model.reader(&prover)) > 0);
    assert!(walks(&prover, &model, &by_terms) > 0);
}

/// A model's values are the role to move's (the winner's own estimates are
/// its examples); a file of format version 1, whose values are the first
/// role's, still loads and is read that way.
#[test]
fn values_are_the_movers_and_version_1_files_the_first_roles() {
    let model = tictactoe_model();
    assert_eq!(model.perspective, Perspective::Mover);
    let game = gdl::load(&puzzle_path("tictactoe")).expect("loads");
    let net = Propnet::new(game.clone()).expect("compiles");
    let model = Arc::new(model);
    let eval = NetEvaluator::new(Arc::clone(&model), &net);
    let start = net.initial_state();
    let (own, v) = eval.own_value(&net, &start);
    assert_eq!(own, 0, "the first role moves first");
    // The network's value as the dense inputs (fluents read by text) give it.
    let dense = model.network.value(&model.inputs(&net, &start));
    assert!((v - dense).abs() < 1e-12, "{v} {dense}");
    assert!((eval.value(&net, &start, 1) - (1.0 - v)).abs() < 1e-12);
    let joint: Vec<_> = (0..2).map(|r| net.legal(&start, r)[0]).collect();
    let after = net.next_state(&start, &joint);
    assert_eq!(eval.own_value(&net, &after).0, 1, "then the second");
    // The same file as version 1.
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join("v1.json");
    model.save(&path).expect("saves");
    let text = std::fs::read_to_string(&path).expect("reads");
    let v1 = text
        .replace(&format!("\"version\":{VERSION}"), "\"version\":1")
        .replace("\"perspective\":\"mover\",", "");
    assert_ne!(v1, text);
    std::fs::write(&path, v1).expect("writes");
    let old = Arc::new(Model::load(&path).expect("a version 1 file loads"));
    assert_eq!(old.perspective, Perspective::FirstRole);
    let eval = NetEvaluator::new(old, &net);
    assert_eq!(eval.own_value(&net, &after).0, 0, "the first role's value");
}

#[test]
fn bad_models_are_refused_with_a_message() {
    let model = tictactoe_model();
    // Other rules: refused by the check, and the player plays plain UCT.
    let other = gdl::load(&puzzle_path("nim")).expect("loads");
    let e = model.check_game(&other).expect_err("other rules");
    assert!(e.to_string().contains("trained on other rules"), "{e}");
    let cfg = RefereeConfig {
        start_clock: Duration::from_secs(120),
        play_clock: Duration::from_secs(120),
        iterations: Some(30),
        model: Some(Arc::new(model.clone())),
        ..RefereeConfig::default()
    };
    let roles = other.roles.len();
    let rec = run_match(&other, vec![PlayerSpec::NnUct; roles], &cfg).expect("runs");
    assert!(rec.players.iter().all(|p| p == "uct"), "{:?}", rec.players);
    assert!(rec.errors.is_empty());
    // Truncated, another version, not a model.
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join("m.json");
    model.save(&path).expect("saves");
    let text = std::fs::read_to_string(&path).expect("reads");
    let cases = [
        (text[..text.len() / 2].to_string(), "truncated"),
        (
            text.replace(&format!("\"version\":{VERSION}"), "\"version\":7"),
            "format version 7",
        ),
        ("{\"weights\": []}".to_string(), "not a ggp-asp model"),
    ];
    for (body, want) in cases {
        std::fs::write(&path, body).expect("writes");
        let e = Model::load(&path).expect_err("refused");
        assert!(e.to_string().contains(want), "{want}: {e}");
    }
}

/// `serve --model`: the player plays a match of the rules the model was
/// trained on with it and a match of other rules without it, both with
/// legal replies inside their clocks.
#[test]
fn the_http_player_uses_a_model_on_its_rules_only() {
    use ggp_asp::player::{Decision, MatchConfig as PlayerConfig, ServerConfig, ServerHandle};
    let model = Arc::new(tictactoe_model());
    let cfg = ServerConfig {
        name: "model-player".into(),
        matches: PlayerConfig {
            margin: Duration::from_millis(250),
            threads: 1,
            engine: Engine::Auto,
            solver: None,
            ponder: true,
            seed: 7,
            meta: true,
            model: Some(model),
            helpers: None,
            store: None,
        },
        read_timeout: Duration::from_secs(1),
        max_body: 4 << 20,
        one_match: false,
    };
    let h = ServerHandle::spawn(cfg, std::net::SocketAddr::from(([127, 0, 0, 1], 0)))
        .expect("the server starts");
    let url = format!("http://{}", h.addr);
    for (i, name) in ["tictactoe", "nim"].iter().enumerate() {
        let path = puzzle_path(name);
        let g = gdl::load(&path).expect("loads");
        let mut players = vec![PlayerSpec::Random; g.roles.len()];
        players[0] = url.parse().expect("a player");
        let mcfg = RefereeConfig {
            start_clock: Duration::from_secs(5),
            play_clock: Duration::from_secs(1),
            seed: i as u64,
            kif: Some(std::fs::read_to_string(&path).expect("reads")),
            match_id: Some(format!("model{i}")),
            ..RefereeConfig::default()
        };
        let rec = run_match(&g, players, &mcfg).expect("runs");
        assert!(rec.errors.is_empty(), "{name}: {:?}", rec.errors);
        assert_eq!(rec.end, MatchEnd::Terminal, "{name}");
    }
    let d = h.player.decisions();
    for want in [Decision::PlayedWithModel, Decision::ModelIgnored] {
        assert!(d.contains(&(want, 1)), "{want:?}: {d:?}");
    }
}

//! Random playouts on any [`StateMachine`]: statistics (`ggp-asp simulate`) and the
//! JSON-lines trace that lets another GGP engine be diffed against ours line by line.
//!
//! In a trace every list is sorted by byte order of its KIF text, and random moves
//! are drawn from those sorted lists, so two engines given the same seed print the
//! same trace exactly.

use std::io::Write;
use std::time::Instant;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::gdl::print::term_to_string;
use crate::reasoner::StateMachine;

/// Why a playout stopped.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum End {
    Terminal,
    MaxSteps,
}

/// A rule problem met while playing: what and where.
#[derive(Debug, thiserror::Error)]
pub enum PlayError {
    #[error(
        "playout {playout}, step {step}: role {role} has no legal move in a non-terminal state"
    )]
    NoLegalMove {
        playout: usize,
        step: usize,
        role: String,
    },
    #[error("replay, step {step}: move {mv} of role {role} is not legal here (legal: {legal})")]
    IllegalMove {
        step: usize,
        role: String,
        mv: String,
        legal: String,
    },
    #[error("replay, line {line}: {message}")]
    BadReplay { line: usize, message: String },
    #[error("writing the trace: {0}")]
    Io(#[from] std::io::Error),
}

/// Totals over many playouts.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    pub playouts: usize,
    pub steps: usize,
    pub terminal: usize,
    pub seconds: f64,
    /// Per role: how often each goal value was reached (`None`: no single value).
    pub goals: Vec<std::collections::BTreeMap<Option<u8>, usize>>,
}

impl Stats {
    pub fn playouts_per_s(&self) -> f64 {
        self.playouts as f64 / self.seconds.max(1e-9)
    }
    pub fn states_per_s(&self) -> f64 {
        (self.steps + self.playouts) as f64 / self.seconds.max(1e-9)
    }
}

/// Plays `n` random playouts of at most `max_steps` joint moves.
pub fn random_playouts<M: StateMachine>(
    m: &M,
    n: usize,
    seed: u64,
    max_steps: usize,
) -> Result<Stats, PlayError> {
    let mut rng = StdRng::seed_from_u64(seed);
    let roles = m.num_roles();
    let mut stats = Stats {
        goals: vec![Default::default(); roles],
        ..Default::default()
    };
    let mut buf = Vec::new();
    let mut joint = Vec::with_capacity(roles);
    let start = Instant::now();
    for p in 0..n {
        let mut state = m.initial_state();
        let mut step = 0;
        let end = loop {
            if m.is_terminal(&state) {
                break End::Terminal;
            }
            if step >= max_steps {
                break End::MaxSteps;
            }
            joint.clear();
            for r in 0..roles {
                m.legal_moves(&state, r, &mut buf);
                if buf.is_empty() {
                    return Err(PlayError::NoLegalMove {
                        playout: p,
                        step,
                        role: term_to_string(&m.game().roles[r], &m.game().symbols),
                    });
                }
                joint.push(buf[rng.gen_range(0..buf.len())].clone());
            }
            state = m.next_state(&state, &joint);
            step += 1;
        };
        stats.playouts += 1;
        stats.steps += step;
        if end == End::Terminal {
            stats.terminal += 1;
            for r in 0..roles {
                *stats.goals[r].entry(m.goal(&state, r)).or_default() += 1;
            }
        }
    }
    stats.seconds = start.elapsed().as_secs_f64();
    Ok(stats)
}

fn json_str(s: &str) -> String {
    serde_json::to_string(s).expect("strings serialise")
}

fn json_list(items: &[String]) -> String {
    let inner: Vec<String> = items.iter().map(|s| json_str(s)).collect();
    format!("[{}]", inner.join(","))
}

/// Writes trace lines for `n` playouts. With `replay`, plays those joint moves
/// (KIF text, one joint move per line) instead of random ones, as one playout.
pub fn trace<M: StateMachine>(
    m: &M,
    out: &mut impl Write,
    n: usize,
    seed: u64,
    max_steps: usize,
    replay: Option<&str>,
) -> Result<(), PlayError> {
    let game = m.game();
    let syms = &game.symbols;
    let role_names = game.role_names();
    writeln!(out, "{{\"roles\":{}}}", json_list(&role_names))?;
    let replay_moves = match replay {
        Some(text) => Some(parse_replay(m, text)?),
        None => None,
    };
    let n = if replay_moves.is_some() { 1 } else { n };
    let mut rng = StdRng::seed_from_u64(seed);
    let mut buf = Vec::new();
    for p in 0..n {
        let mut state = m.initial_state();
        let mut step = 0;
        loop {
            let mut fluents: Vec<String> = m
                .fluents(&state)
                .iter()
                .map(|f| term_to_string(f, syms))
                .collect();
            fluents.sort();
            let terminal = m.is_terminal(&state);
            let mut legal: Vec<Vec<(String, M::Move)>> = Vec::new();
            for r in 0..role_names.len() {
                m.legal_moves(&state, r, &mut buf);
                let mut l: Vec<(String, M::Move)> = buf
                    .iter()
                    .map(|mv| (term_to_string(&m.move_term(mv), syms), mv.clone()))
                    .collect();
                l.sort_by(|a, b| a.0.cmp(&b.0));
                legal.push(l);
            }
            let legal_json: Vec<String> = role_names
                .iter()
                .zip(&legal)
                .map(|(r, l)| {
                    format!(
                        "{}:{}",
                        json_str(r),
                        json_list(&l.iter().map(|x| x.0.clone()).collect::<Vec<_>>())
                    )
                })
                .collect();
            let goals_json: Vec<String> = role_names
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    let g = m
                        .goal(&state, i)
                        .map_or("null".to_string(), |v| v.to_string());
                    format!("{}:{}", json_str(r), g)
                })
                .collect();
            let end = if terminal {
                Some("terminal")
            } else if replay_moves
                .as_ref()
                .map_or(step >= max_steps, |rm| step >= rm.len())
            {
                Some("max-steps")
            } else {
                None
            };
            let joint: Option<Vec<(String, M::Move)>> = match end {
                Some(_) => None,
                None => {
                    let mut j = Vec::new();
                    for (r, l) in legal.iter().enumerate() {
                        match &replay_moves {
                            Some(rm) => {
                                let (text, mv) = rm[step][r].clone();
                                if !l.iter().any(|x| x.1 == mv) {
                                    return Err(PlayError::IllegalMove {
                                        step,
                                        role: role_names[r].clone(),
                                        mv: text,
                                        legal: l
                                            .iter()
                                            .map(|x| x.0.as_str())
                                            .collect::<Vec<_>>()
                                            .join(" "),
                                    });
                                }
                                j.push((text, mv));
                            }
                            None => {
                                if l.is_empty() {
                                    return Err(PlayError::NoLegalMove {
                                        playout: p,
                                        step,
                                        role: role_names[r].clone(),
                                    });
                                }
                                j.push(l[rng.gen_range(0..l.len())].clone());
                            }
                        }
                    }
                    Some(j)
                }
            };
            let joint_json = match &joint {
                Some(j) => json_list(&j.iter().map(|x| x.0.clone()).collect::<Vec<_>>()),
                None => "null".into(),
            };
            writeln!(
                out,
                "{{\"playout\":{p},\"step\":{step},\"state\":{},\"terminal\":{terminal},\"legal\":{{{}}},\"goals\":{{{}}},\"joint\":{joint_json}}}",
                json_list(&fluents),
                legal_json.join(","),
                goals_json.join(",")
            )?;
            // One line at a time: when a step of some engine hangs or crashes, the
            // trace so far is already out.
            out.flush()?;
            match (end, joint) {
                (Some(e), _) => {
                    writeln!(
                        out,
                        "{{\"playout\":{p},\"end\":{},\"steps\":{step}}}",
                        json_str(e)
                    )?;
                    break;
                }
                (None, Some(j)) => {
                    let moves: Vec<M::Move> = j.into_iter().map(|x| x.1).collect();
                    state = m.next_state(&state, &moves);
                    step += 1;
                }
                (None, None) => unreachable!("a joint move exists when the playout goes on"),
            }
        }
    }
    Ok(())
}

/// A joint move with each move's KIF text.
type JointMoveText<M> = Vec<(String, <M as StateMachine>::Move)>;

/// Reads joint moves, one per line: `((mark 1 1) noop)`; blank lines and `;` comments are skipped.
fn parse_replay<M: StateMachine>(m: &M, text: &str) -> Result<Vec<JointMoveText<M>>, PlayError> {
    let game = m.game();
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let bad = |message: String| PlayError::BadReplay {
            line: i + 1,
            message,
        };
        let l = line.split(';').next().unwrap_or("").trim();
        if l.is_empty() {
            continue;
        }
        let terms = crate::gdl::parser::parse_ground_terms(l, &game.symbols).map_err(bad)?;
        if terms.len() != game.roles.len() {
            return Err(bad(format!(
                "{} move(s) for {} role(s)",
                terms.len(),
                game.roles.len()
            )));
        }
        let mut joint = Vec::new();
        for t in terms {
            let text = term_to_string(&t, &game.symbols);
            let mv = m
                .parse_move(&t)
                .ok_or_else(|| bad(format!("{text} is not a move of this game")))?;
            joint.push((text, mv));
        }
        out.push(joint);
    }
    Ok(out)
}

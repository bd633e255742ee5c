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
    let role_names = m.game().role_names();
    writeln!(out, "{{\"roles\":{}}}", json_list(&role_names))?;
    let replay_moves = match replay {
        Some(text) => Some(parse_replay(m, text)?),
        None => None,
    };
    let (n, max_steps) = match &replay_moves {
        Some(rm) => (1, rm.len()),
        None => (n, max_steps),
    };
    let mut chooser = Chooser {
        replay: replay_moves,
        rng: StdRng::seed_from_u64(seed),
        roles: &role_names,
    };
    let mut buf = Vec::new();
    for p in 0..n {
        let mut state = m.initial_state();
        let mut step = 0;
        loop {
            let snap = Snapshot::of(m, &state, &mut buf);
            let end = if snap.terminal {
                Some("terminal")
            } else if step >= max_steps {
                Some("max-steps")
            } else {
                None
            };
            let joint = match end {
                Some(_) => None,
                None => Some(chooser.joint(&snap, p, step)?),
            };
            snap.write(out, (p, step), &role_names, joint.as_deref())?;
            // One line at a time: when a step of some engine hangs or crashes, the
            // trace so far is already out.
            out.flush()?;
            let Some(joint) = joint else {
                let e = end.expect("a playout without a joint move has ended");
                let e = json_str(e);
                writeln!(out, "{{\"playout\":{p},\"end\":{e},\"steps\":{step}}}")?;
                break;
            };
            let moves: Vec<M::Move> = joint.into_iter().map(|x| x.1).collect();
            state = m.next_state(&state, &moves);
            step += 1;
        }
    }
    Ok(())
}

/// What a trace line says about one state, every list sorted by KIF text.
struct Snapshot<M: StateMachine> {
    fluents: Vec<String>,
    terminal: bool,
    /// Per role, its legal moves.
    legal: Vec<JointMoveText<M>>,
    goals: Vec<Option<u8>>,
}

impl<M: StateMachine> Snapshot<M> {
    fn of(m: &M, state: &M::State, buf: &mut Vec<M::Move>) -> Snapshot<M> {
        let syms = &m.game().symbols;
        let mut fluents: Vec<String> = m
            .fluents(state)
            .iter()
            .map(|f| term_to_string(f, syms))
            .collect();
        fluents.sort();
        let roles = m.num_roles();
        let legal = (0..roles)
            .map(|r| {
                m.legal_moves(state, r, buf);
                let mut l: JointMoveText<M> = buf
                    .iter()
                    .map(|mv| (term_to_string(&m.move_term(mv), syms), mv.clone()))
                    .collect();
                l.sort_by(|a, b| a.0.cmp(&b.0));
                l
            })
            .collect();
        Snapshot {
            fluents,
            terminal: m.is_terminal(state),
            legal,
            goals: (0..roles).map(|r| m.goal(state, r)).collect(),
        }
    }

    /// The trace line of this state at step `step` of playout `p`, with the joint
    /// move played from it (`null` at the end).
    fn write(
        &self,
        out: &mut impl Write,
        (p, step): (usize, usize),
        roles: &[String],
        joint: Option<&[(String, M::Move)]>,
    ) -> std::io::Result<()> {
        let texts =
            |l: &[(String, M::Move)]| json_list(&l.iter().map(|x| x.0.clone()).collect::<Vec<_>>());
        let legal: Vec<String> = roles
            .iter()
            .zip(&self.legal)
            .map(|(r, l)| format!("{}:{}", json_str(r), texts(l)))
            .collect();
        let goals: Vec<String> = roles
            .iter()
            .zip(&self.goals)
            .map(|(r, g)| {
                let g = g.map_or("null".to_string(), |v| v.to_string());
                format!("{}:{}", json_str(r), g)
            })
            .collect();
        let joint = joint.map_or("null".into(), texts);
        writeln!(
            out,
            "{{\"playout\":{p},\"step\":{step},\"state\":{},\"terminal\":{},\"legal\":{{{}}},\"goals\":{{{}}},\"joint\":{joint}}}",
            json_list(&self.fluents),
            self.terminal,
            legal.join(","),
            goals.join(",")
        )
    }
}

/// Picks each joint move of a trace: the replay's, checked against the legal
/// moves, or random ones drawn from the sorted lists.
struct Chooser<'a, M: StateMachine> {
    replay: Option<Vec<JointMoveText<M>>>,
    rng: StdRng,
    roles: &'a [String],
}

impl<M: StateMachine> Chooser<'_, M> {
    fn joint(
        &mut self,
        snap: &Snapshot<M>,
        p: usize,
        step: usize,
    ) -> Result<JointMoveText<M>, PlayError> {
        let mut j = Vec::with_capacity(snap.legal.len());
        for (r, l) in snap.legal.iter().enumerate() {
            let role = || self.roles[r].clone();
            match &self.replay {
                Some(rm) => {
                    let (text, mv) = rm[step][r].clone();
                    if !l.iter().any(|x| x.1 == mv) {
                        let legal: Vec<&str> = l.iter().map(|x| x.0.as_str()).collect();
                        return Err(PlayError::IllegalMove {
                            step,
                            role: role(),
                            mv: text,
                            legal: legal.join(" "),
                        });
                    }
                    j.push((text, mv));
                }
                None if l.is_empty() => {
                    return Err(PlayError::NoLegalMove {
                        playout: p,
                        step,
                        role: role(),
                    })
                }
                None => j.push(l[self.rng.gen_range(0..l.len())].clone()),
            }
        }
        Ok(j)
    }
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

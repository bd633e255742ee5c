//! The GGP match protocol, both sides of it (see `ggp-protocol.md`): parsing what a
//! game manager sends (INFO, START, PLAY, STOP, ABORT, PREVIEW, keywords in any
//! case, any spacing) and printing the same messages for the manager's side, plus
//! the replies; [`client`] sends one exchange as a manager does. The player
//! ([`crate::player`]) and the referee ([`crate::arena`]) both speak it, as
//! siblings. Messages are KIF s-expressions; moves and rules stay plain
//! s-expressions here ([`SExpr`], the rules' reader's own type) because only a
//! match knows its game's symbols.

pub mod client;

use std::fmt;
use std::time::Duration;

pub use crate::gdl::parser::SExpr;
use crate::gdl::parser::{parse_sexprs, write_list};

/// Reads exactly one s-expression (`what` names it in errors).
fn parse_one(text: &str, what: &str) -> Result<SExpr, ProtocolError> {
    SExpr::parse_one(text, what).map_err(ProtocolError)
}

/// A message that is not a well-formed protocol request: what is wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ProtocolError(pub String);

/// `(START id role (rules…) startclock playclock)`.
#[derive(Clone, Debug, PartialEq)]
pub struct Start {
    pub id: String,
    pub role: String,
    /// The game's rules, one s-expression per rule or fact.
    pub rules: Vec<SExpr>,
    pub start_clock: Duration,
    pub play_clock: Duration,
}

impl Start {
    /// The rules as KIF text, one rule per line (line `n` holds rule `n`, so a
    /// diagnostic's line number says which rule of the message is wrong).
    pub fn rules_text(&self) -> String {
        rules_text(&self.rules)
    }
}

/// Rules as KIF text, one rule per line.
pub fn rules_text(rules: &[SExpr]) -> String {
    let mut out = String::new();
    for r in rules {
        out.push_str(&r.to_string());
        out.push('\n');
    }
    out
}

/// A request from a game manager.
#[derive(Clone, Debug, PartialEq)]
pub enum Message {
    Info,
    Start(Start),
    /// `moves` is `None` for `NIL` (the first move), else the last joint move in
    /// role order.
    Play {
        id: String,
        moves: Option<Vec<SExpr>>,
    },
    Stop {
        id: String,
        moves: Option<Vec<SExpr>>,
    },
    Abort {
        id: String,
    },
    Preview {
        rules: Vec<SExpr>,
        clock: Duration,
    },
}

impl Message {
    /// Reads a request; keywords in any case, extra trailing arguments of START
    /// ignored as the protocol asks.
    pub fn parse(text: &str) -> Result<Message, ProtocolError> {
        let e = |m: String| ProtocolError(m);
        let msg = parse_one(text, "the message")?;
        let items = match &msg {
            SExpr::List(items, _) if !items.is_empty() => items,
            SExpr::List(..) => return Err(e("the message is an empty list".into())),
            // A bare `info` atom is accepted as `(info)`.
            SExpr::Atom(a, _) if a.eq_ignore_ascii_case("info") => return Ok(Message::Info),
            SExpr::Atom(a, _) => {
                return Err(e(format!(
                    "the message is the atom '{a}'; expected a list such as (INFO)"
                )))
            }
        };
        let kind = items[0]
            .atom()
            .ok_or_else(|| e("the message must start with a keyword such as PLAY".into()))?
            .to_ascii_lowercase();
        let args = &items[1..];
        let want = |n: usize, form: &str| {
            if args.len() < n {
                Err(e(format!(
                    "{} needs {n} argument(s), got {}: expected {form}",
                    kind.to_uppercase(),
                    args.len()
                )))
            } else {
                Ok(())
            }
        };
        let id = |i: usize| -> Result<String, ProtocolError> {
            args[i].atom().map(str::to_string).ok_or_else(|| {
                e(format!(
                    "the match id of {} must be an atom, found {}",
                    kind.to_uppercase(),
                    args[i]
                ))
            })
        };
        match kind.as_str() {
            "info" => Ok(Message::Info),
            "start" => {
                want(5, "(START id role (rules...) startclock playclock)")?;
                let role = args[1]
                    .atom()
                    .ok_or_else(|| {
                        e(format!(
                            "the role of START must be an atom, found {}",
                            args[1]
                        ))
                    })?
                    .to_string();
                Ok(Message::Start(Start {
                    id: id(0)?,
                    role,
                    rules: rules(&args[2])?,
                    start_clock: clock(&args[3], "startclock")?,
                    play_clock: clock(&args[4], "playclock")?,
                }))
            }
            "play" | "stop" => {
                want(2, &format!("({} id moves)", kind.to_uppercase()))?;
                if args.len() > 2 {
                    return Err(e(format!(
                        "{} takes 2 arguments (id and moves), got {}",
                        kind.to_uppercase(),
                        args.len()
                    )));
                }
                let moves = match &args[1] {
                    SExpr::Atom(..) => None,
                    SExpr::List(ms, _) => Some(ms.clone()),
                };
                let id = id(0)?;
                Ok(if kind == "play" {
                    Message::Play { id, moves }
                } else {
                    Message::Stop { id, moves }
                })
            }
            "abort" => {
                want(1, "(ABORT id)")?;
                Ok(Message::Abort { id: id(0)? })
            }
            "preview" => {
                want(2, "(PREVIEW (rules...) previewclock)")?;
                Ok(Message::Preview {
                    rules: rules(&args[0])?,
                    clock: clock(&args[1], "previewclock")?,
                })
            }
            other => Err(e(format!(
                "unknown message type '{}' (expected INFO, START, PLAY, STOP, ABORT or PREVIEW)",
                other
            ))),
        }
    }

    /// The match id the message is about, if any.
    pub fn match_id(&self) -> Option<&str> {
        match self {
            Message::Start(s) => Some(&s.id),
            Message::Play { id, .. } | Message::Stop { id, .. } | Message::Abort { id } => Some(id),
            Message::Info | Message::Preview { .. } => None,
        }
    }

    /// The message kind in upper case (`PLAY`), for logs and statistics.
    pub fn kind(&self) -> &'static str {
        match self {
            Message::Info => "INFO",
            Message::Start(_) => "START",
            Message::Play { .. } => "PLAY",
            Message::Stop { .. } => "STOP",
            Message::Abort { .. } => "ABORT",
            Message::Preview { .. } => "PREVIEW",
        }
    }
}

fn rules(e: &SExpr) -> Result<Vec<SExpr>, ProtocolError> {
    match e {
        SExpr::List(rs, _) => Ok(rs.clone()),
        SExpr::Atom(a, _) => Err(ProtocolError(format!(
            "the rules must be a list of rules, found the atom '{a}'"
        ))),
    }
}

/// A clock of a message. Zero is accepted, unlike a flag's zero: the protocol
/// does not forbid it, and refusing the message would lose the match, where
/// a clock of zero only asks for an answer at once, which the player gives.
fn clock(e: &SExpr, what: &str) -> Result<Duration, ProtocolError> {
    let bad = || format!("the {what} must be a number of seconds, found {e}");
    let text = e.atom().ok_or_else(|| ProtocolError(bad()))?;
    crate::clock::parse(
        text,
        crate::clock::Unit::Seconds,
        crate::clock::Zero::Accepted,
    )
    .map_err(|why| ProtocolError(format!("{}: {why}", bad())))
}

fn write_clock(f: &mut fmt::Formatter<'_>, d: Duration) -> fmt::Result {
    if d.subsec_nanos() == 0 {
        write!(f, "{}", d.as_secs())
    } else {
        write!(f, "{}", d.as_secs_f64())
    }
}

fn write_moves(f: &mut fmt::Formatter<'_>, moves: &Option<Vec<SExpr>>) -> fmt::Result {
    match moves {
        None => f.write_str("NIL"),
        Some(ms) => write_list(f, ms),
    }
}

impl fmt::Display for Message {
    /// The message as the reference manager sends it: upper-case keywords.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Message::Info => f.write_str("(INFO)"),
            Message::Start(s) => {
                write!(f, "(START {} {} ", s.id, s.role)?;
                write_list(f, &s.rules)?;
                f.write_str(" ")?;
                write_clock(f, s.start_clock)?;
                f.write_str(" ")?;
                write_clock(f, s.play_clock)?;
                f.write_str(")")
            }
            Message::Play { id, moves } => {
                write!(f, "(PLAY {id} ")?;
                write_moves(f, moves)?;
                f.write_str(")")
            }
            Message::Stop { id, moves } => {
                write!(f, "(STOP {id} ")?;
                write_moves(f, moves)?;
                f.write_str(")")
            }
            Message::Abort { id } => write!(f, "(ABORT {id})"),
            Message::Preview { rules, clock } => {
                f.write_str("(PREVIEW ")?;
                write_list(f, rules)?;
                f.write_str(" ")?;
                write_clock(f, *clock)?;
                f.write_str(")")
            }
        }
    }
}

/// Reads a game's KIF text into the rule list a START or PREVIEW carries (comments
/// and layout dropped).
pub fn rules_from_kif(text: &str) -> Result<Vec<SExpr>, ProtocolError> {
    let items = parse_sexprs(text, "the rules").map_err(|e| ProtocolError(e.to_string()))?;
    Ok(items)
}

/// The reply to INFO: `busy` while the player takes no new match.
pub fn info_reply(name: &str, busy: bool) -> String {
    let status = if busy { "busy" } else { "available" };
    format!("((name {name}) (status {status}))")
}

/// What a player answered, read by the client side.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    Ready,
    Done,
    Aborted,
    /// A move (or any other s-expression, e.g. an INFO answer).
    Sexp(SExpr),
}

impl Reply {
    pub fn parse(text: &str) -> Result<Reply, ProtocolError> {
        let s = parse_one(text, "the reply")?;
        Ok(if s.is_word("ready") {
            Reply::Ready
        } else if s.is_word("done") {
            Reply::Done
        } else if s.is_word("aborted") {
            Reply::Aborted
        } else {
            Reply::Sexp(s)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_round_trip() {
        let text = "( start  m1 XPLAYER ((role xplayer) (init (cell 1 1 b))) 30 10 extra)";
        let Message::Start(s) = Message::parse(text).unwrap() else {
            panic!()
        };
        assert_eq!(s.id, "m1");
        assert_eq!(s.role, "XPLAYER");
        assert_eq!(s.rules.len(), 2);
        assert_eq!(s.play_clock, Duration::from_secs(10));
        assert_eq!(s.rules_text(), "(role xplayer)\n(init (cell 1 1 b))\n");
        let printed = Message::Start(s.clone()).to_string();
        assert_eq!(
            printed,
            "(START m1 XPLAYER ((role xplayer) (init (cell 1 1 b))) 30 10)"
        );
        assert_eq!(Message::parse(&printed).unwrap(), Message::Start(s));
    }

    #[test]
    fn fractional_clock_prints_back() {
        let m = Message::parse("(START a r ((role r)) 2.5 0.75)").unwrap();
        assert_eq!(m.to_string(), "(START a r ((role r)) 2.5 0.75)");
    }
}

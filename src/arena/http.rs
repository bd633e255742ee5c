//! HTTP players: a remote GGP player behind the arena's [`Player`] trait. Every
//! call sends the real protocol message (START, PLAY, STOP over HTTP/1.0, as the
//! reference manager does) and reads the reply; the referee times the answer and
//! judges its legality like any other player's.

use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};

use super::{MatchInfo, Player};
use crate::gdl::print::term_to_string;
use crate::gdl::Term;
use crate::protocol::client;
use crate::protocol::{rules_from_kif, Message, Reply, SExpr, Start};

/// How long past its clock a reply is still read (then judged late by the
/// referee) before the connection is given up.
const GRACE: Duration = Duration::from_secs(2);

/// A GGP player at `http://HOST:PORT`.
pub struct HttpPlayer {
    url: String,
}

impl HttpPlayer {
    pub fn new(url: &str) -> Result<HttpPlayer> {
        client::resolve(url)?;
        Ok(HttpPlayer {
            url: url.to_string(),
        })
    }

    /// Sends `msg` and returns the reply body of a 200 answer.
    fn send(&self, msg: &Message, clock: Duration) -> Result<String> {
        let text = msg.to_string();
        let x = client::post(&self.url, &text, clock + GRACE)
            .with_context(|| format!("{} to {}", msg.kind(), self.url))?;
        if x.status != 200 {
            bail!(
                "{} to {}: HTTP {}: {}",
                msg.kind(),
                self.url,
                x.status,
                x.body.trim()
            );
        }
        Ok(x.body)
    }
}

fn moves(previous: Option<&[Term]>, info: &MatchInfo) -> Result<Option<Vec<SExpr>>> {
    let Some(p) = previous.filter(|p| !p.is_empty()) else {
        return Ok(None);
    };
    p.iter()
        .map(|t| {
            SExpr::parse_one(&term_to_string(t, &info.game.symbols), "a move")
                .map_err(|e| anyhow!("{e}"))
        })
        .collect::<Result<Vec<_>>>()
        .map(Some)
}

impl Player for HttpPlayer {
    fn start(&mut self, info: &MatchInfo) -> Result<()> {
        let rules = rules_from_kif(&info.kif).map_err(|e| anyhow!("the match's rules: {e}"))?;
        let msg = Message::Start(Start {
            id: info.match_id.clone(),
            role: info.role_name.clone(),
            rules,
            start_clock: info.start_clock,
            play_clock: info.play_clock,
        });
        let body = self.send(&msg, info.start_clock)?;
        match Reply::parse(&body) {
            Ok(Reply::Ready) => Ok(()),
            _ => bail!(
                "START to {}: expected 'ready', got {:?}",
                self.url,
                body.trim()
            ),
        }
    }

    fn play(&mut self, previous: Option<&[Term]>, info: &MatchInfo) -> Result<Term> {
        let msg = Message::Play {
            id: info.match_id.clone(),
            moves: moves(previous, info)?,
        };
        let body = self.send(&msg, info.play_clock)?;
        let reply = SExpr::parse_one(&body, "the move").map_err(|e| anyhow!("{e}"))?;
        reply
            .to_ground(&info.game.symbols)
            .map_err(|e| anyhow!("the reply {} is not a move of the game: {e}", reply))
    }

    fn stop(&mut self, previous: &[Term], info: &MatchInfo) {
        let msg = match moves(Some(previous), info) {
            Ok(moves) => Message::Stop {
                id: info.match_id.clone(),
                moves,
            },
            Err(e) => {
                tracing::warn!("STOP to {}: {e:#}", self.url);
                return;
            }
        };
        match self.send(&msg, info.play_clock) {
            Ok(b) if Reply::parse(&b) == Ok(Reply::Done) => {}
            Ok(b) => tracing::warn!("STOP to {}: expected 'done', got {:?}", self.url, b.trim()),
            Err(e) => tracing::warn!("{e:#}"),
        }
    }

    fn name(&self) -> String {
        self.url.clone()
    }
}

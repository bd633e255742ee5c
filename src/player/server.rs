//! The HTTP side of the player: axum on tokio behind hyper's HTTP/1 connection
//! handling (HTTP/1.0 and 1.1, keep-alive, a header read timeout for clients that
//! connect and send nothing). Each request body is one protocol message; the reply
//! is the bare s-expression with `Content-Type: text/acl`, a correct
//! `Content-Length` and `Access-Control-Allow-Origin: *`. Bad requests get an error
//! reply (status 400, 404, 408, 409 or 413, body `error: what`), and the server
//! keeps serving. Matches live in a map by id; their work runs on their own
//! threads. A server that takes one match at a time ([`ServerConfig::one_match`])
//! answers INFO with `busy` while it holds one and refuses a START for another
//! (409).

use std::collections::HashMap;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::response::Response;
use axum::Router;
use http_body_util::BodyExt;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tracing::{debug, info, warn};

use super::decisions::{Decision, Decisions};
use super::error::MatchError;
use super::session::{Match, MatchConfig};
use super::watch::{MatchView, Watch};
use crate::clock::{answer_within, Margin};
use crate::gdl;
use crate::protocol::{info_reply, rules_text, Message, SExpr, Start};

/// Settings of a player server.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    pub name: String,
    pub matches: MatchConfig,
    /// How long a client may take to send its headers, and then its body.
    pub read_timeout: Duration,
    /// The largest request body accepted.
    pub max_body: usize,
    /// One match at a time: INFO says `busy` while a match is held, and a
    /// START for another match is refused until it ends (STOP or ABORT).
    pub one_match: bool,
}

/// The player's server: the state every request handler shares.
pub struct Server {
    cfg: ServerConfig,
    matches: Mutex<HashMap<String, Arc<Match>>>,
    /// The slowest reply seen per message kind.
    worst: Mutex<HashMap<&'static str, Duration>>,
    decisions: Decisions,
    /// The views of the latest matches that ended (STOP, ABORT), newest last.
    ended: Mutex<std::collections::VecDeque<Watch>>,
    /// Whether `/` speaks the match protocol (off: `serve --api-only`,
    /// where the server only carries the routes it is given).
    protocol: bool,
}

/// Ended matches whose views the server keeps for the match pages.
const ENDED_KEPT: usize = 20;

impl Server {
    pub fn new(cfg: ServerConfig) -> Server {
        Server {
            cfg,
            matches: Mutex::new(HashMap::new()),
            worst: Mutex::new(HashMap::new()),
            decisions: Decisions::default(),
            ended: Mutex::new(std::collections::VecDeque::new()),
            protocol: true,
        }
    }

    /// A server that speaks no match protocol: `/` answers 404, and only
    /// the routes given to [`serve`] are served.
    pub fn without_protocol(cfg: ServerConfig) -> Server {
        Server {
            protocol: false,
            ..Server::new(cfg)
        }
    }

    /// The name INFO reports.
    pub fn name(&self) -> &str {
        &self.cfg.name
    }

    /// How long a client may take to send a request's body.
    pub fn read_timeout(&self) -> Duration {
        self.cfg.read_timeout
    }

    /// What a person watching sees of each match held, then of the latest
    /// that ended (newest first).
    pub fn match_views(&self) -> Vec<MatchView> {
        let mut views: Vec<MatchView> = self.matches().values().map(|m| m.watch.view()).collect();
        views.sort_by(|a, b| b.started.cmp(&a.started));
        let ended = self.ended.lock().unwrap_or_else(|p| p.into_inner());
        views.extend(ended.iter().rev().map(Watch::view));
        views
    }

    fn matches(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Match>>> {
        self.matches.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn get(&self, id: &str) -> Result<Arc<Match>, Failure> {
        self.matches()
            .get(id)
            .cloned()
            .ok_or_else(|| Failure::unknown_match(id))
    }

    /// Takes match `id` out of the map (STOP, ABORT).
    fn remove(&self, id: &str) -> Result<Arc<Match>, Failure> {
        let m = self
            .matches()
            .remove(id)
            .ok_or_else(|| Failure::unknown_match(id))?;
        let mut ended = self.ended.lock().unwrap_or_else(|p| p.into_inner());
        ended.push_back(m.watch.clone());
        while ended.len() > ENDED_KEPT {
            ended.pop_front();
        }
        Ok(m)
    }

    /// The slowest reply per message kind so far (time from the request's headers
    /// to the reply), sorted by kind.
    pub fn worst_latencies(&self) -> Vec<(String, Duration)> {
        let mut v: Vec<(String, Duration)> = self
            .worst
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .map(|(k, d)| (k.to_string(), *d))
            .collect();
        v.sort();
        v
    }

    /// How many of our moves each decider chose (a plan, the search, the
    /// only legal move, ...), and how the matches were set up, over all
    /// matches so far.
    pub fn decisions(&self) -> Vec<(Decision, u64)> {
        self.decisions.counts()
    }

    /// Matches currently held (started and neither stopped nor aborted).
    pub fn active_matches(&self) -> usize {
        self.matches().len()
    }

    /// Whether INFO answers `busy`: only a one-match server holding a match.
    fn busy(&self) -> bool {
        self.cfg.one_match && self.active_matches() > 0
    }

    /// With [`ServerConfig::one_match`], refuses match `id` while another
    /// match is held in `held` (a START of the held match's own id replaces
    /// it, as on any server).
    fn admit(&self, held: &HashMap<String, Arc<Match>>, id: &str) -> Result<(), Failure> {
        match held.keys().find(|k| *k != id) {
            Some(other) if self.cfg.one_match => Err(Failure {
                status: StatusCode::CONFLICT,
                message: format!(
                    "START {id}: this player plays one match at a time (--one-match) and match '{other}' is still running"
                ),
            }),
            _ => Ok(()),
        }
    }

    fn record(&self, kind: &'static str, took: Duration) {
        let mut w = self.worst.lock().unwrap_or_else(|p| p.into_inner());
        let e = w.entry(kind).or_default();
        *e = (*e).max(took);
    }

    /// Answers one protocol message.
    pub async fn handle(&self, text: &str, received: Instant) -> Result<String, Failure> {
        let msg = Message::parse(text).map_err(|e| Failure::bad(e.0))?;
        let kind = msg.kind();
        let r = self.dispatch(msg, received).await;
        let took = received.elapsed();
        self.record(kind, took);
        match &r {
            Ok(reply) => debug!("{kind} answered in {:.3}s: {reply}", took.as_secs_f64()),
            Err(e) => warn!(
                "{kind} refused after {:.3}s: {}",
                took.as_secs_f64(),
                e.message
            ),
        }
        r
    }

    async fn dispatch(&self, msg: Message, received: Instant) -> Result<String, Failure> {
        match msg {
            Message::Info => Ok(info_reply(&self.cfg.name, self.busy())),
            Message::Start(start) => self.start(start, received).await,
            Message::Play { id, moves } => {
                let m = self.get(&id)?;
                m.play(moves, received).await.map_err(Failure::from)
            }
            Message::Stop { id, moves } => self.stop(&id, moves).await,
            Message::Abort { id } => {
                let m = self.remove(&id)?;
                m.watch.update(|v| v.state = "aborted".into());
                m.cancel();
                info!("match {id}: aborted");
                Ok("aborted".into())
            }
            Message::Preview { rules, clock } => self.preview(rules, clock, received).await,
        }
    }

    /// START: compiles the rules (and, on a one-player game, lets the solver plan)
    /// within the start clock; "ready" even when compiling goes on past it.
    async fn start(&self, start: Start, received: Instant) -> Result<String, Failure> {
        self.admit(&self.matches(), &start.id)?;
        let within = answer_within(start.start_clock, Margin::Network(self.cfg.matches.margin));
        let (m, ready) = Match::start(
            &start,
            &self.cfg.matches,
            received + within,
            self.decisions.clone(),
        );
        let m = Arc::new(m);
        match tokio::time::timeout_at((received + within).into(), ready).await {
            Ok(Ok(Ok(ready))) => {
                info!(
                    "match {}: ready ({} roles, {}), start clock {}s, play clock {}s",
                    start.id,
                    ready.roles,
                    ready.engine,
                    start.start_clock.as_secs_f64(),
                    start.play_clock.as_secs_f64()
                );
                m.watch.update(|v| {
                    v.roles = ready.roles;
                    v.engine = ready.engine.clone();
                });
            }
            Ok(Ok(Err(e))) => return Err(Failure::bad(format!("START {}: {e}", start.id))),
            Ok(Err(_)) => {
                return Err(Failure::bad(format!(
                    "START {}: the match's thread ended while compiling",
                    start.id
                )))
            }
            Err(_) => warn!(
                "match {}: still compiling at the start clock; answering ready",
                start.id
            ),
        }
        let mut held = self.matches();
        // Another START may have been admitted while this one compiled.
        if let Err(f) = self.admit(&held, &start.id) {
            m.cancel();
            return Err(f);
        }
        if let Some(old) = held.insert(start.id.clone(), m) {
            old.cancel();
            warn!("match {}: a new START replaces the running match", old.id);
        }
        Ok("ready".into())
    }

    /// STOP: the match leaves the map; its worker applies the last moves and ends.
    async fn stop(&self, id: &str, moves: Option<Vec<SExpr>>) -> Result<String, Failure> {
        let m = self.remove(id)?;
        let within = answer_within(m.play_clock, Margin::Network(self.cfg.matches.margin));
        match m.stop(moves, within).await {
            Ok(summary) => {
                info!("match {id}: STOP: {summary}");
                Ok("done".to_string())
            }
            Err(e) => {
                info!("match {id}: STOP: {e}");
                Err(Failure::from(e))
            }
        }
    }

    /// PREVIEW: checks that the rules load, within the preview clock.
    async fn preview(
        &self,
        rules: Vec<SExpr>,
        clock: Duration,
        received: Instant,
    ) -> Result<String, Failure> {
        let text = rules_text(&rules);
        let check = tokio::task::spawn_blocking(move || {
            gdl::load_bytes(text.as_bytes(), "PREVIEW rules").map(|g| g.roles.len())
        });
        let within = answer_within(clock, Margin::Network(self.cfg.matches.margin));
        match tokio::time::timeout_at((received + within).into(), check).await {
            Ok(Ok(Ok(roles))) => {
                info!("PREVIEW: a {roles}-role game; rules are valid");
                Ok("ready".into())
            }
            Ok(Ok(Err(e))) => Err(Failure::bad(format!("PREVIEW: the rules do not load: {e}"))),
            Ok(Err(e)) => Err(Failure::bad(format!("PREVIEW: checking failed: {e}"))),
            Err(_) => Ok("ready".into()),
        }
    }
}

/// An error reply: the HTTP status and what was wrong.
#[derive(Debug)]
pub struct Failure {
    pub status: StatusCode,
    pub message: String,
}

impl Failure {
    fn bad(message: String) -> Failure {
        Failure {
            status: StatusCode::BAD_REQUEST,
            message,
        }
    }
    fn unknown_match(id: &str) -> Failure {
        Failure {
            status: StatusCode::NOT_FOUND,
            message: format!("unknown match id '{id}'"),
        }
    }
}

impl From<MatchError> for Failure {
    fn from(e: MatchError) -> Failure {
        Failure::bad(e.to_string())
    }
}

fn reply(status: StatusCode, content_type: &'static str, body: String) -> Response {
    let mut r = Response::new(Body::from(body));
    *r.status_mut() = status;
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    r
}

fn failure(f: Failure) -> Response {
    reply(f.status, "text/plain", format!("error: {}\n", f.message))
}

/// Decodes `%XX` escapes (the GET form carries the message in the path).
fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

async fn handle(State(player): State<Arc<Server>>, req: Request) -> Response {
    let received = Instant::now();
    if !player.protocol {
        return failure(Failure {
            status: StatusCode::NOT_FOUND,
            message: "this server speaks no match protocol (serve --api-only)".into(),
        });
    }
    let text = match *req.method() {
        Method::OPTIONS => {
            let mut r = reply(StatusCode::OK, "text/acl", String::new());
            let h = r.headers_mut();
            h.insert(
                header::ACCESS_CONTROL_ALLOW_METHODS,
                HeaderValue::from_static("POST, GET, OPTIONS"),
            );
            h.insert(
                header::ACCESS_CONTROL_ALLOW_HEADERS,
                HeaderValue::from_static("Content-Type, Sender, Receiver"),
            );
            h.insert(
                header::ACCESS_CONTROL_MAX_AGE,
                HeaderValue::from_static("86400"),
            );
            return r;
        }
        Method::GET => {
            let pq = req
                .uri()
                .path_and_query()
                .map_or("/", |p| p.as_str())
                .trim_start_matches('/');
            let pq = pq.strip_prefix('?').unwrap_or(pq);
            match percent_decode(pq) {
                Some(t) if t.trim().is_empty() => "(INFO)".to_string(),
                Some(t) => t,
                None => {
                    return failure(Failure::bad(
                        "the GET form's message is not valid percent-encoded UTF-8".into(),
                    ))
                }
            }
        }
        Method::POST => {
            let read = read_body(req.into_body(), player.cfg.max_body);
            match tokio::time::timeout(player.cfg.read_timeout, read).await {
                Err(_) => {
                    return failure(Failure {
                        status: StatusCode::REQUEST_TIMEOUT,
                        message: format!(
                            "the body did not arrive within {:.1}s",
                            player.cfg.read_timeout.as_secs_f64()
                        ),
                    })
                }
                Ok(Err(f)) => return failure(f),
                Ok(Ok(bytes)) => match String::from_utf8(bytes) {
                    Ok(t) => t,
                    Err(e) => {
                        return failure(Failure::bad(format!(
                            "the body is not UTF-8 text (invalid byte at offset {})",
                            e.utf8_error().valid_up_to()
                        )))
                    }
                },
            }
        }
        ref m => {
            return failure(Failure {
                status: StatusCode::METHOD_NOT_ALLOWED,
                message: format!("method {m} is not used by the GGP protocol (POST, GET, OPTIONS)"),
            })
        }
    };
    match player.handle(&text, received).await {
        Ok(body) => reply(StatusCode::OK, "text/acl", body),
        Err(f) => failure(f),
    }
}

/// How much of an oversized body is read (and dropped) before the 413 reply, so
/// the client, still writing, gets the reply instead of a reset connection.
const DRAIN_LIMIT: usize = 64 << 20;

/// Reads a request body of at most `limit` bytes.
pub(crate) async fn read_body(mut body: Body, limit: usize) -> Result<Vec<u8>, Failure> {
    let mut buf = Vec::new();
    let mut total = 0usize;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| Failure::bad(format!("reading the body: {e}")))?;
        if let Ok(data) = frame.into_data() {
            total += data.len();
            if total <= limit {
                buf.extend_from_slice(&data);
            } else if total > DRAIN_LIMIT {
                break;
            }
        }
    }
    if total > limit {
        return Err(Failure {
            status: StatusCode::PAYLOAD_TOO_LARGE,
            message: format!("the body has {total} bytes or more; the limit is {limit}"),
        });
    }
    Ok(buf)
}

/// Serves on `listener` until `shutdown` completes: the routes of `extra`
/// (the solving service's, or none), and the match protocol at every other
/// path.
pub async fn serve(
    listener: TcpListener,
    player: Arc<Server>,
    extra: Router,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let app = extra.merge(
        Router::new()
            .fallback(handle)
            .with_state(Arc::clone(&player)),
    );
    let read_timeout = player.cfg.read_timeout;
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            _ = &mut shutdown => return Ok(()),
            r = listener.accept() => match r {
                Ok(x) => x,
                Err(e) => {
                    // Out of file descriptors and the like: wait, keep serving.
                    warn!("accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let svc = TowerToHyperService::new(app.clone());
        tokio::spawn(async move {
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(read_timeout)
                .keep_alive(true)
                .serve_connection(TokioIo::new(stream), svc);
            if let Err(e) = conn.await {
                debug!("connection from {peer}: {e}");
            }
        });
    }
}

/// A server running on its own thread and tokio runtime (tests, benchmarks).
/// Dropping it shuts the server down.
pub struct ServerHandle {
    pub addr: SocketAddr,
    pub player: Arc<Server>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ServerHandle {
    /// Binds `addr` (port 0 for any free port) and serves in the background.
    pub fn spawn(cfg: ServerConfig, addr: SocketAddr) -> std::io::Result<ServerHandle> {
        ServerHandle::spawn_with(Arc::new(Server::new(cfg)), addr, Router::new())
    }

    /// [`ServerHandle::spawn`] for a server made by the caller, with more
    /// routes beside the match protocol (the solving service's).
    pub fn spawn_with(
        player: Arc<Server>,
        addr: SocketAddr,
        extra: Router,
    ) -> std::io::Result<ServerHandle> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()?;
        let listener = rt.block_on(TcpListener::bind(addr))?;
        let addr = listener.local_addr()?;
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let p = Arc::clone(&player);
        let thread = std::thread::Builder::new()
            .name("ggp-player-server".into())
            .spawn(move || {
                let r = rt.block_on(serve(listener, p, extra, async {
                    let _ = rx.await;
                }));
                if let Err(e) = r {
                    warn!("server ended: {e}");
                }
                rt.shutdown_timeout(Duration::from_secs(1));
            })?;
        Ok(ServerHandle {
            addr,
            player,
            shutdown: Some(tx),
            thread: Some(thread),
        })
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// `ggp-asp serve`: binds and serves until the process is interrupted; the
/// routes of `extra` beside the match protocol (see [`serve`]).
pub fn run(player: Arc<Server>, addr: SocketAddr, extra: Router) -> anyhow::Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|e| anyhow::anyhow!("cannot listen on {addr}: {e}"))?;
        let local = listener.local_addr()?;
        if player.protocol {
            info!("player {} listening on {local}", player.cfg.name);
        } else {
            info!("listening on {local} (no match protocol)");
        }
        serve(listener, player, extra, async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
        Ok::<(), anyhow::Error>(())
    })
}

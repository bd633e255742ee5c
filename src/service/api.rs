//! The JSON API under `/api/`: solve jobs (`/api/solve`), the plan store's
//! games (`/api/games`), a game's encoding and grounding report
//! (`/api/encode`, `/api/inspect`), the boards along a plan, and the matches
//! the player holds (`/api/matches`). Requests with a body take JSON
//! (`Content-Type: application/json`); every reply is JSON, an error one
//! `{"error": "what was wrong", ...}` with the status that says which kind.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Path, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, MethodRouter};
use axum::Router;
use serde::Deserialize;
use serde_json::{json, Value};

use super::jobs::{JobRequest, Refused};
use super::{Api, Service};
use crate::asp::encode::{self, Form};
use crate::gdl::{self, print::term_to_string, Description, Game, GdlError};
use crate::reasoner::ground::{self, Limits};
use crate::reasoner::prover::Prover;
use crate::reasoner::StateMachine;
use crate::show::board::View;
use crate::store::plans::Lookup;
use crate::store::{self, Entry};

/// The most plan steps drawn as boards.
const MAX_BOARDS: usize = 1000;
/// The longest plan a stored answer is looked up for (as `solve`'s default).
const MAX_STEPS: usize = 200;

/// What a handler answers with when it fails: a status and a JSON object.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub body: Value,
    retry_after: Option<u64>,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            body: json!({ "error": message.into() }),
            retry_after: None,
        }
    }

    fn bad(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, message)
    }

    fn not_found(what: &str) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, format!("no {what}"))
    }

    /// GDL that does not read: 400 with each error's line and column.
    fn gdl(e: &GdlError) -> ApiError {
        let diagnostics: Vec<Value> = e
            .diagnostics
            .iter()
            .map(|d| {
                json!({
                    "line": d.pos.line,
                    "column": d.pos.col,
                    "message": d.message,
                    "rule": d.rule,
                })
            })
            .collect();
        ApiError {
            status: StatusCode::BAD_REQUEST,
            body: json!({ "error": format!("the game does not read: {e}"), "diagnostics": diagnostics }),
            retry_after: None,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut r = (self.status, axum::Json(self.body)).into_response();
        if let Some(s) = self.retry_after {
            r.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(s));
        }
        r
    }
}

type ApiResult = Result<Response, ApiError>;

fn ok(status: StatusCode, v: Value) -> ApiResult {
    Ok((status, axum::Json(v)).into_response())
}

/// The API's routes (to nest under `/api`).
pub fn router() -> Router<Arc<Api>> {
    Router::new()
        .route("/solve", methods(post(submit).get(list_jobs)))
        .route("/solve/:id", methods(get(job).delete(cancel)))
        .route("/solve/:id/boards", methods(get(job_boards)))
        .route("/games", methods(get(games)))
        .route("/games/:fp", methods(get(game_entry)))
        .route("/games/:fp/boards", methods(get(game_boards)))
        .route("/encode", methods(post(encode_game)))
        .route("/inspect", methods(post(inspect_game)))
        .route("/matches", methods(get(matches)))
        .route("/matches/:id", methods(get(match_view)))
        .route("/status", methods(get(status)))
        .fallback(|| async { ApiError::not_found("such API route").into_response() })
}

/// A route's methods, any other answered 405.
fn methods(m: MethodRouter<Arc<Api>>) -> MethodRouter<Arc<Api>> {
    m.fallback(|req: Request| async move {
        ApiError::new(
            StatusCode::METHOD_NOT_ALLOWED,
            format!("method {} is not served here", req.method()),
        )
        .into_response()
    })
}

/// Reads a JSON body: 415 unless it says it is JSON, 413 past the limit,
/// 400 when it does not read as `T`.
async fn json_body<T: serde::de::DeserializeOwned>(
    api: &Api,
    headers: &HeaderMap,
    body: Body,
) -> Result<T, ApiError> {
    let is_json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"));
    if !is_json {
        return Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "the body must be JSON (Content-Type: application/json)",
        ));
    }
    let limit = api.service.cfg.max_body;
    let bytes = match tokio::time::timeout(
        api.player.read_timeout(),
        crate::player::server::read_body(body, limit),
    )
    .await
    {
        Err(_) => {
            return Err(ApiError::new(
                StatusCode::REQUEST_TIMEOUT,
                "the body did not arrive in time",
            ))
        }
        Ok(Err(f)) => return Err(ApiError::new(f.status, f.message)),
        Ok(Ok(b)) => b,
    };
    serde_json::from_slice(&bytes)
        .map_err(|e| ApiError::bad(format!("the body does not read: {e}")))
}

/// Reads a game's rules on a blocking thread: 400 with the errors' lines
/// and columns when they do not read.
async fn read_game(text: String, name: &str) -> Result<(Description, Game), ApiError> {
    let name = name.to_string();
    tokio::task::spawn_blocking(move || gdl::load_bytes_described(text.as_bytes(), &name))
        .await
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?
        .map_err(|e| ApiError::gdl(&e))
}

/// 422 unless the game has one role.
fn single_player(g: &Game) -> Result<(), ApiError> {
    crate::asp::solve::check_single_player(g)
        .map_err(|why| ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, why))
}

/// Runs `f` on a blocking thread.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?
}

/// `POST /api/solve`: a job (202 with its id and URL), or the store's
/// answer at once (200) when the game is there and its answer is final.
async fn submit(State(api): State<Arc<Api>>, headers: HeaderMap, body: Body) -> ApiResult {
    let svc = Arc::clone(&api.service);
    let request: JobRequest = json_body(&api, &headers, body).await?;
    if let Some(t) = request.timeout {
        if !t.is_finite() || t <= 0.0 {
            return Err(ApiError::bad(
                "timeout must be a positive number of seconds",
            ));
        }
    }
    let name = request.name.clone().unwrap_or_else(|| "the game".into());
    let (desc, game) = read_game(request.game.clone(), &name).await?;
    single_player(&game)?;
    if let Some(store) = svc.store.clone() {
        let timeout = request.timeout.map(Duration::from_secs_f64);
        let answer = blocking(move || {
            Ok(match store.lookup(&desc, &game, MAX_STEPS, timeout) {
                Lookup::Answer(recalled, r) => Some((recalled.entry.fingerprint.to_string(), r)),
                Lookup::Bound(_) | Lookup::Nothing => None,
            })
        })
        .await?;
        if let Some((fp, r)) = answer {
            return ok(
                StatusCode::OK,
                json!({
                    "status": r.status.name(),
                    "source": "store",
                    "fingerprint": fp,
                    "url": format!("/api/games/{fp}"),
                    "answer": r,
                }),
            );
        }
    }
    let jobs = Arc::clone(&svc.jobs);
    let submitted = blocking(move || Ok(jobs.submit(request))).await?;
    match submitted {
        Ok(job) => {
            let url = format!("/api/solve/{}", job.id);
            let mut r = (
                StatusCode::ACCEPTED,
                axum::Json(json!({ "id": job.id, "url": url, "status": job.status })),
            )
                .into_response();
            if let Ok(v) = HeaderValue::from_str(&url) {
                r.headers_mut().insert(header::LOCATION, v);
            }
            Ok(r)
        }
        Err(Refused::Full { retry_after }) => Err(ApiError {
            status: StatusCode::TOO_MANY_REQUESTS,
            body: json!({
                "error": format!(
                    "the queue is full ({} jobs waiting); try again later",
                    svc.cfg.jobs.queue
                ),
                "retry_after": retry_after,
            }),
            retry_after: Some(retry_after),
        }),
        Err(Refused::Stopping) => Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "the service is stopping",
        )),
    }
}

async fn list_jobs(State(api): State<Arc<Api>>) -> ApiResult {
    let svc = &api.service;
    ok(StatusCode::OK, json!({ "jobs": svc.jobs.list() }))
}

async fn job(State(api): State<Arc<Api>>, Path(id): Path<String>) -> ApiResult {
    let svc = &api.service;
    let job = svc
        .jobs
        .get(&id)
        .ok_or_else(|| ApiError::not_found("such job"))?;
    ok(
        StatusCode::OK,
        serde_json::to_value(job).unwrap_or_default(),
    )
}

async fn cancel(State(api): State<Arc<Api>>, Path(id): Path<String>) -> ApiResult {
    let jobs = Arc::clone(&api.service.jobs);
    let job = blocking(move || {
        jobs.cancel(&id)
            .ok_or_else(|| ApiError::not_found("such job"))
    })
    .await?;
    ok(
        StatusCode::OK,
        serde_json::to_value(job).unwrap_or_default(),
    )
}

/// `GET /api/solve/{id}/boards`: the states along the job's plan.
async fn job_boards(State(api): State<Arc<Api>>, Path(id): Path<String>) -> ApiResult {
    let svc = &api.service;
    let job = svc
        .jobs
        .get(&id)
        .ok_or_else(|| ApiError::not_found("such job"))?;
    let plan = job.answer.map(|a| a.plan).unwrap_or_default();
    let name = job.name.unwrap_or_else(|| "the game".into());
    let (_, game) = read_game(job.game, &name).await?;
    let v = blocking(move || boards(&game, &plan)).await?;
    ok(StatusCode::OK, v)
}

/// The states from the initial one along `plan` (moves as KIF), each drawn
/// as a grid where the game has a board, and as its fluents.
fn boards(game: &Game, plan: &[String]) -> Result<Value, ApiError> {
    let moves = gdl::parser::parse_ground_terms(&format!("({})", plan.join(" ")), &game.symbols)
        .map_err(|e| {
            ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("the plan does not read: {e}"),
            )
        })?;
    let prover = Prover::try_lazy(game.clone())
        .map_err(|e| ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, e.to_string()))?;
    let mut state = prover.initial_state();
    let mut states = vec![prover.fluents(&state)];
    let mut note = None;
    for (i, mv) in moves.iter().enumerate().take(MAX_BOARDS) {
        let Some(m) = prover.parse_move(mv) else {
            note = Some(format!(
                "move {} at step {i} is not a move of the game",
                term_to_string(mv, &game.symbols)
            ));
            break;
        };
        state = prover.next_state(&state, &[m]);
        states.push(prover.fluents(&state));
    }
    let view = View::of(game, &states);
    let steps: Vec<Value> = states
        .iter()
        .enumerate()
        .map(|(i, fluents)| {
            let mut sorted: Vec<String> = fluents
                .iter()
                .map(|t| term_to_string(t, &game.symbols))
                .collect();
            sorted.sort();
            json!({
                "step": i,
                "move": (i > 0).then(|| plan.get(i - 1)).flatten(),
                "grid": view.grid(game, fluents),
                "fluents": sorted,
            })
        })
        .collect();
    Ok(json!({ "board": view.has_board(), "steps": steps, "note": note }))
}

/// A store record as the API lists it (no rules, no plan).
fn entry_summary(id: i64, e: &Entry) -> Value {
    json!({
        "id": id,
        "fingerprint": e.fingerprint.to_string(),
        "name": e.name,
        "outcome": e.outcome.name(),
        "steps": e.goal.map(|_| e.plan.len()),
        "goal": e.goal,
        "proven": e.proven.name(),
        "lower_bound": e.lower_bound,
        "horizon": e.horizon,
        "solver": e.solver,
        "solved_at": e.solved_at,
        "seconds": e.seconds,
    })
}

fn store_of(svc: &Service) -> Result<Arc<store::Plans>, ApiError> {
    svc.store.clone().ok_or_else(|| {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "the service runs without a plan store",
        )
    })
}

async fn games(State(api): State<Arc<Api>>) -> ApiResult {
    let store = store_of(&api.service)?;
    let list = blocking(move || {
        store
            .list()
            .map_err(|e| ApiError::new(StatusCode::SERVICE_UNAVAILABLE, e.to_string()))
    })
    .await?;
    let games: Vec<Value> = list.iter().map(|(id, e)| entry_summary(*id, e)).collect();
    ok(StatusCode::OK, json!({ "games": games }))
}

/// The store's record with this fingerprint (the first, should two games
/// share it).
async fn stored(api: &Api, fp: String) -> Result<(i64, Entry), ApiError> {
    let store = store_of(&api.service)?;
    let fp: store::Fingerprint = fp
        .parse()
        .map_err(|e| ApiError::new(StatusCode::NOT_FOUND, format!("no such game: {e}")))?;
    blocking(move || {
        store
            .list()
            .map_err(|e| ApiError::new(StatusCode::SERVICE_UNAVAILABLE, e.to_string()))?
            .into_iter()
            .find(|(_, e)| e.fingerprint == fp)
            .ok_or_else(|| ApiError::not_found("such game in the store"))
    })
    .await
}

async fn game_entry(State(api): State<Arc<Api>>, Path(fp): Path<String>) -> ApiResult {
    let (id, e) = stored(&api, fp).await?;
    let mut v = entry_summary(id, &e);
    v["plan"] = json!(e.plan);
    v["rules"] = json!(e.rules);
    ok(StatusCode::OK, v)
}

async fn game_boards(State(api): State<Arc<Api>>, Path(fp): Path<String>) -> ApiResult {
    let (_, e) = stored(&api, fp).await?;
    let (_, game) = read_game(e.rules, &e.name).await?;
    let plan = e.plan;
    let v = blocking(move || boards(&game, &plan)).await?;
    ok(StatusCode::OK, v)
}

/// `POST /api/encode`'s body.
#[derive(Deserialize)]
struct EncodeRequest {
    game: String,
    /// The full form up to this horizon; without it, the incremental form.
    #[serde(default)]
    horizon: Option<usize>,
    #[serde(default = "yes")]
    invariants: bool,
}

fn yes() -> bool {
    true
}

async fn encode_game(State(api): State<Arc<Api>>, headers: HeaderMap, body: Body) -> ApiResult {
    let req: EncodeRequest = json_body(&api, &headers, body).await?;
    let (_, game) = read_game(req.game, "the game").await?;
    single_player(&game)?;
    let form = match req.horizon {
        Some(h) => Form::Horizon(h),
        None => Form::Incremental,
    };
    let program = blocking(move || {
        encode::encode(&game, form, req.invariants)
            .map_err(|why| ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, why))
    })
    .await?;
    ok(
        StatusCode::OK,
        json!({
            "program": program.text,
            "notes": program.notes,
            "pairs": encode::pairs(&program.text),
        }),
    )
}

/// `POST /api/inspect`'s body.
#[derive(Deserialize)]
struct InspectRequest {
    game: String,
    /// How many of the largest relations to list.
    #[serde(default = "ten")]
    top: usize,
}

fn ten() -> usize {
    10
}

async fn inspect_game(State(api): State<Arc<Api>>, headers: HeaderMap, body: Body) -> ApiResult {
    let req: InspectRequest = json_body(&api, &headers, body).await?;
    let (desc, game) = read_game(req.game, "the game").await?;
    let v = blocking(move || {
        let limits = Limits::default();
        let report = ground::report(&game, &limits);
        let relations: Vec<Value> = report
            .relations
            .iter()
            .take(req.top)
            .map(|(name, atoms, rules)| json!({ "relation": name, "atoms": atoms, "rules": rules }))
            .collect();
        Ok(json!({
            "roles": game.roles.iter().map(|r| term_to_string(r, &game.symbols)).collect::<Vec<_>>(),
            "rules": desc.rules.len(),
            "grounding": {
                "complete": report.stopped.is_none(),
                "stopped": report.stopped.as_ref().map(|s| s.to_string()),
                "atoms": report.atoms,
                "rule_instances": report.rules,
                "memory_mib": report.memory as f64 / (1u64 << 20) as f64,
                "max_memory_mib": limits.max_memory >> 20,
                "largest": relations,
            },
            "fingerprint": store::fingerprint::fingerprint(&desc).to_string(),
        }))
    })
    .await?;
    ok(StatusCode::OK, v)
}

async fn matches(State(api): State<Arc<Api>>) -> ApiResult {
    ok(
        StatusCode::OK,
        json!({ "matches": api.player.match_views() }),
    )
}

async fn match_view(State(api): State<Arc<Api>>, Path(id): Path<String>) -> ApiResult {
    let view = api
        .player
        .match_views()
        .into_iter()
        .find(|m| m.id == id)
        .ok_or_else(|| ApiError::not_found("such match"))?;
    ok(
        StatusCode::OK,
        serde_json::to_value(view).unwrap_or_default(),
    )
}

/// `GET /api/status`: the queue, the slots, the store, the matches held.
async fn status(State(api): State<Arc<Api>>) -> ApiResult {
    let svc = &api.service;
    let (queued, running) = svc.jobs.load();
    let cfg = svc.jobs.config();
    ok(
        StatusCode::OK,
        json!({
            "queued": queued,
            "running": running,
            "slots": cfg.slots,
            "queue": cfg.queue,
            "default_timeout": cfg.default_timeout.as_secs_f64(),
            "max_timeout": cfg.max_timeout.as_secs_f64(),
            "store": svc.store.as_ref().map(|s| s.location()),
            "matches": api.player.active_matches(),
            "version": env!("CARGO_PKG_VERSION"),
        }),
    )
}

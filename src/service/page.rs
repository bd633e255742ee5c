//! The service's web page under `/ui/`: one HTML file, a style sheet and a
//! script, compiled into the binary (no build step, nothing fetched from
//! elsewhere), and the bundled puzzles to start from. The script draws
//! everything from the API's JSON with `textContent`, never as markup, and
//! the page's Content-Security-Policy allows only its own script, so a
//! symbol named `<script>` in a game is shown as text.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::Router;
use serde_json::json;

const INDEX: &str = include_str!("assets/index.html");
const SCRIPT: &str = include_str!("assets/app.js");
const STYLE: &str = include_str!("assets/style.css");

/// The single-player games of `puzzles/`, offered on the page.
pub const PUZZLES: &[(&str, &str)] = &[
    ("8puzzle", include_str!("../../puzzles/8puzzle.kif")),
    ("best-goal", include_str!("../../puzzles/best-goal.kif")),
    ("blocks", include_str!("../../puzzles/blocks.kif")),
    ("buttons", include_str!("../../puzzles/buttons.kif")),
    ("fifteen18", include_str!("../../puzzles/fifteen18.kif")),
    ("fifteen28", include_str!("../../puzzles/fifteen28.kif")),
    ("fifteen42", include_str!("../../puzzles/fifteen42.kif")),
    ("fifteen48", include_str!("../../puzzles/fifteen48.kif")),
    ("fifteen55", include_str!("../../puzzles/fifteen55.kif")),
    ("fifteen57", include_str!("../../puzzles/fifteen57.kif")),
    ("fifteen59", include_str!("../../puzzles/fifteen59.kif")),
    ("hanoi", include_str!("../../puzzles/hanoi.kif")),
    ("lightsout", include_str!("../../puzzles/lightsout.kif")),
    ("maze", include_str!("../../puzzles/maze.kif")),
    ("no-plan", include_str!("../../puzzles/no-plan.kif")),
    ("queens", include_str!("../../puzzles/queens.kif")),
    ("sudoku4", include_str!("../../puzzles/sudoku4.kif")),
];

/// Only the page's own script and style; no frames, no plugins.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
                   connect-src 'self'; img-src 'self' data:; base-uri 'none'; \
                   form-action 'none'; frame-ancestors 'none'";

fn asset(content_type: &'static str, body: &'static str) -> Response {
    let mut r = (StatusCode::OK, body).into_response();
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    r
}

/// The page's routes.
pub fn router<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route("/ui", get(|| async { Redirect::permanent("/ui/") }))
        .route(
            "/ui/",
            get(|| async { asset("text/html; charset=utf-8", INDEX) }),
        )
        .route(
            "/ui/app.js",
            get(|| async { asset("text/javascript; charset=utf-8", SCRIPT) }),
        )
        .route(
            "/ui/style.css",
            get(|| async { asset("text/css; charset=utf-8", STYLE) }),
        )
        .route(
            "/ui/puzzles",
            get(|| async {
                let list: Vec<_> = PUZZLES
                    .iter()
                    .map(|(name, text)| json!({ "name": name, "game": text }))
                    .collect();
                axum::Json(json!({ "puzzles": list }))
            }),
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The page offers every single-player puzzle of `puzzles/`, and only
    /// those: a puzzle added to the folder is added here too.
    #[test]
    fn the_page_offers_every_single_player_puzzle() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("puzzles");
        let mut single: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| {
                let p = e.unwrap().path();
                (p.extension()? == "kif").then_some(p)
            })
            .filter(|p| crate::gdl::load(p).unwrap().roles.len() == 1)
            .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
            .collect();
        single.sort();
        let offered: Vec<String> = PUZZLES.iter().map(|(n, _)| n.to_string()).collect();
        assert_eq!(offered, single);
    }
}

//! The service's page in a real browser: Debian's `chromium`, headless,
//! driven over WebDriver by `chromedriver` (both installed by `.ci/run`).
//! The page loads, `puzzles/8puzzle.kif` is chosen and submitted, the job
//! reaches "proven shortest", stepping through the plan shows the board at
//! step 0 and at the goal, the encoding view puts a rule beside its
//! translation, and a game whose symbol is `<script>` shows it as text. A
//! screenshot of each page is written under `target/ui-screenshots/` for a
//! person to look at.

mod common;

use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::json;

use ggp_asp::player::Server;
use ggp_asp::service::ServiceHandle;

/// A game whose symbols and comment hold markup.
const MARKUP_GAME: &str = "; <script>document.title='pwned'</script> markup in a comment
(role player)
(init (cell 1 1 <script>))
(init (cell 1 2 b))
(init (step 0))
(<= (legal player (swap ?x ?y)) (true (cell 1 1 ?x)) (true (cell 1 2 ?y)))
(<= (next (cell 1 1 ?y)) (does player (swap ?x ?y)))
(<= (next (cell 1 2 ?x)) (does player (swap ?x ?y)))
(<= (next (step 1)) (true (step 0)))
(<= terminal (true (step 1)))
(<= (goal player 100) (true (cell 1 2 <script>)))
(<= (goal player 0) (not (true (cell 1 2 <script>))))
";

/// The driver, killed when dropped.
struct Driver(Child);

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn start_driver() -> (Driver, u16) {
    let exe = [
        "chromedriver",
        "/usr/bin/chromedriver",
        "/usr/lib/chromium/chromedriver",
    ]
    .into_iter()
    .find(|p| {
        Command::new(p)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
    .expect(
        "chromedriver is not installed: the page's test needs Debian's chromium and \
             chromium-driver (apt-get install -y chromium chromium-driver; .ci/run installs them)",
    );
    let port = free_port();
    let child = Command::new(exe)
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let driver = Driver(child);
    let t0 = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "chromedriver did not start"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    (driver, port)
}

fn start_service(store: &Path) -> ServiceHandle {
    let server = Server::without_protocol(common::service::server_config());
    common::service::start_with(common::service::config(1, 4), server, Some(store))
}

async fn shot(c: &Client, name: &str) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/ui-screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    let png = c.screenshot().await.unwrap();
    std::fs::write(dir.join(format!("{name}.png")), png).unwrap();
}

/// Waits (up to `limit`) until `cond` holds, checking every 100 ms.
async fn until<F, Fut>(limit: Duration, what: &str, mut cond: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let t0 = Instant::now();
    while !cond().await {
        assert!(t0.elapsed() < limit, "{what} within {limit:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn text_of(c: &Client, css: &str) -> String {
    match c.find(Locator::Css(css)).await {
        Ok(e) => e.text().await.unwrap_or_default(),
        Err(_) => String::new(),
    }
}

/// The board's squares, row by row (row labels left out).
async fn board(c: &Client) -> Vec<Vec<String>> {
    let rows = c
        .execute(
            "return [...document.querySelectorAll('table.board tr')].map(tr => \
             [...tr.querySelectorAll('td')].map(td => td.textContent)).filter(r => r.length);",
            vec![],
        )
        .await
        .unwrap();
    serde_json::from_value(rows).unwrap()
}

#[test]
fn the_page_solves_a_puzzle_steps_through_its_plan_and_shows_markup_as_text() {
    let dir = tempfile::tempdir().unwrap();
    let h = start_service(&dir.path().join("plans.sqlite"));
    let (_driver, port) = start_driver();
    let base = format!("http://{}", h.addr());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut caps = serde_json::Map::new();
        caps.insert(
            "goog:chromeOptions".into(),
            json!({ "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                             "--disable-dev-shm-usage", "--window-size=1280,1000"] }),
        );
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        let c = ClientBuilder::new(connector)
            .capabilities(caps)
            .connect(&format!("http://127.0.0.1:{port}"))
            .await
            .expect("a chromium session over WebDriver");

        // The page loads, with the bundled puzzles to choose from.
        c.goto(&format!("{base}/ui/")).await.unwrap();
        until(
            Duration::from_secs(20),
            "the puzzles are offered",
            || async {
                c.find(Locator::Css(
                    "select[data-testid=puzzle] option[value='8puzzle']",
                ))
                .await
                .is_ok()
            },
        )
        .await;
        shot(&c, "1-solve").await;
        c.find(Locator::Css("select[data-testid=puzzle]"))
            .await
            .unwrap()
            .select_by_value("8puzzle")
            .await
            .unwrap();
        let area: String = serde_json::from_value(
            c.execute(
                "return document.querySelector('[data-testid=game]').value;",
                vec![],
            )
            .await
            .unwrap(),
        )
        .unwrap();
        assert!(
            area.contains("(role player)"),
            "the puzzle's rules fill the text area"
        );
        c.find(Locator::Css("[data-testid=submit]"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();

        // The job runs to "proven shortest".
        until(Duration::from_secs(120), "the job is solved", || async {
            text_of(&c, "[data-testid=job-status]").await == "solved"
        })
        .await;
        until(Duration::from_secs(20), "the plan is drawn", || async {
            c.find(Locator::Css("table.board")).await.is_ok()
        })
        .await;
        let answer = text_of(&c, "[data-testid=answer]").await;
        assert!(answer.contains("proven shortest"), "{answer}");
        assert!(answer.contains("30"), "{answer}");
        assert_eq!(
            board(&c).await,
            [["3", "2", "1"], ["6", "7", "4"], ["b", "8", "5"]],
            "the initial state"
        );
        shot(&c, "2-job-step-0").await;
        c.find(Locator::Css("[data-testid=next]"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        assert!(text_of(&c, "[data-testid=step]")
            .await
            .starts_with("step 1 of 30"));
        c.find(Locator::Css("[data-testid=last]"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        assert!(text_of(&c, "[data-testid=step]")
            .await
            .starts_with("step 30 of 30"));
        assert_eq!(
            board(&c).await,
            [["1", "2", "3"], ["4", "5", "6"], ["7", "8", "b"]],
            "the goal"
        );
        shot(&c, "3-job-goal").await;

        // The encoding: a rule beside its translation.
        c.goto(&format!("{base}/ui/#/encode")).await.unwrap();
        until(Duration::from_secs(60), "the encoding is shown", || async {
            c.find(Locator::Css("table[data-testid=pairs]"))
                .await
                .is_ok()
        })
        .await;
        let pair = c
            .execute(
                "for (const tr of document.querySelectorAll('table[data-testid=pairs] tr')) { \
                   const td = tr.querySelectorAll('td'); \
                   if (td.length == 2 && td[0].textContent.startsWith('(<= (neighbour up')) \
                     return [td[0].textContent, td[1].textContent]; } return null;",
                vec![],
            )
            .await
            .unwrap();
        let pair: Vec<String> = serde_json::from_value(pair).expect("a rule beside its ASP");
        assert!(pair[1].starts_with("neighbour(up,"), "{pair:?}");
        shot(&c, "4-encoding").await;

        // A game whose symbol is <script>: shown as text, never run.
        c.goto(&format!("{base}/ui/")).await.unwrap();
        c.execute(
            "const a = document.querySelector('[data-testid=game]'); a.value = arguments[0]; \
             a.dispatchEvent(new Event('input'));",
            vec![json!(MARKUP_GAME)],
        )
        .await
        .unwrap();
        c.find(Locator::Css("[data-testid=submit]"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        until(
            Duration::from_secs(120),
            "the markup game is solved",
            || async { text_of(&c, "[data-testid=job-status]").await == "solved" },
        )
        .await;
        until(Duration::from_secs(20), "its plan is drawn", || async {
            text_of(&c, "[data-testid=step]")
                .await
                .starts_with("step 0")
        })
        .await;
        let plan = text_of(&c, "[data-testid=plan]").await;
        assert!(plan.contains("(swap <script> b)"), "{plan}");
        // Drawn as a board or listed as fluents: either way as text.
        let shown: String = serde_json::from_value(
            c.execute("return document.querySelector('main').textContent;", vec![])
                .await
                .unwrap(),
        )
        .unwrap();
        assert!(shown.contains("<script>"), "{shown}");
        let scripts: usize = serde_json::from_value(
            c.execute(
                "return document.querySelectorAll('main script').length;",
                vec![],
            )
            .await
            .unwrap(),
        )
        .unwrap();
        assert_eq!(scripts, 0, "no script element made from the game");
        let title: String =
            serde_json::from_value(c.execute("return document.title;", vec![]).await.unwrap())
                .unwrap();
        assert_eq!(title, "ggp-asp");
        shot(&c, "5-markup-as-text").await;

        // The store's page shows the stored rules, comment and all, as text.
        c.goto(&format!("{base}/ui/#/store")).await.unwrap();
        until(
            Duration::from_secs(20),
            "the store lists both games",
            || async {
                c.find_all(Locator::Css("table[data-testid=store] a"))
                    .await
                    .map_or(0, |v| v.len())
                    == 2
            },
        )
        .await;
        shot(&c, "6-store").await;
        c.close().await.unwrap();
    });
}

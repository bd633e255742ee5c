//! Progress of long runs on standard error: a bar (items done, elapsed,
//! estimated time left, the last item's outcome) when standard error is a
//! terminal, one plain line per item otherwise, so that logs and CI output
//! stay readable. Nothing goes to standard output: tables and `--json`
//! lines there are the results.
//!
//! A run of unknown length (`solve`: horizons, search phases, from several
//! threads and child processes) reports its lines as `tracing` events
//! ([`crate::report`]); the executable's [`ProgressLines`] layer says them
//! with [`say`]: above a running [`Spinner`], otherwise straight to stderr.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Progress over a known number of items.
pub struct Progress {
    bar: Option<ProgressBar>,
    total: u64,
    done: u64,
}

impl Progress {
    /// Progress over `total` items, described as `what` (e.g. "games").
    pub fn new(total: u64, what: &str) -> Progress {
        Self::with_terminal(total, what, std::io::stderr().is_terminal())
    }

    /// [`Progress::new`], a bar only when `terminal` says so.
    pub fn with_terminal(total: u64, what: &str, terminal: bool) -> Progress {
        let bar = terminal.then(|| styled_bar(total, &format!("{{pos}}/{{len}} {what}")));
        Progress {
            bar,
            total,
            done: 0,
        }
    }

    /// Shows what is being worked on now (the bar's message; nothing on a
    /// plain log, where the item's line comes when it is done).
    pub fn working_on(&self, what: &str) {
        if let Some(bar) = &self.bar {
            bar.set_message(what.to_string());
        }
    }

    /// One item done: `outcome` says how it went.
    pub fn done(&mut self, outcome: &str) {
        self.done += 1;
        match &self.bar {
            Some(bar) => {
                bar.inc(1);
                bar.set_message(outcome.to_string());
            }
            None => eprintln!("[{}/{}] {outcome}", self.done, self.total),
        }
    }

    /// A line that is not an item's end (an error, a detail): above the bar
    /// on a terminal, a plain line otherwise.
    pub fn note(&self, line: &str) {
        match &self.bar {
            Some(bar) => bar.println(line),
            None => eprintln!("{line}"),
        }
    }

    /// Items done so far.
    pub fn count(&self) -> u64 {
        self.done
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// A bar of `len` steps on stderr: the bar, `label`, the elapsed time and the
/// time left, and the last message.
fn styled_bar(len: u64, label: &str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
    let style = ProgressStyle::with_template(&format!(
        "{{bar:30.cyan/blue}} {label} [{{elapsed_precise}}, {{eta}} left] {{wide_msg}}"
    ))
    .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style.progress_chars("=> "));
    bar.enable_steady_tick(Duration::from_millis(250));
    bar
}

/// The spinner lines are said above, while one runs.
static ACTIVE: Mutex<Option<ProgressBar>> = Mutex::new(None);

/// One line of progress: above the running [`Spinner`], else on stderr.
pub fn say(line: &str) {
    let active = ACTIVE.lock().unwrap_or_else(|p| p.into_inner());
    match active.as_ref() {
        Some(bar) => {
            bar.println(line);
            bar.set_message(line.to_string());
        }
        None => eprintln!("{line}"),
    }
}

/// A spinner with the elapsed time and the last line said, on a terminal's
/// stderr, for a run of unknown length (or a bar filling over a time budget,
/// [`Spinner::budget`]); nothing (and lines said as they are) elsewhere.
/// Stops when dropped.
pub struct Spinner {
    running: bool,
    /// The thread that moves a budget's bar on, told to stop by the flag.
    ticker: Option<(Arc<AtomicBool>, std::thread::JoinHandle<()>)>,
}

impl Spinner {
    /// Nothing shown (stderr is not a terminal).
    fn off() -> Spinner {
        Spinner {
            running: false,
            ticker: None,
        }
    }

    /// Starts a spinner labelled `what` when stderr is a terminal.
    pub fn start(what: &str) -> Spinner {
        if !std::io::stderr().is_terminal() {
            return Spinner::off();
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        let style = ProgressStyle::with_template(&format!(
            "{{spinner:.cyan}} {what} [{{elapsed_precise}}] {{wide_msg}}"
        ))
        .unwrap_or_else(|_| ProgressStyle::default_spinner());
        bar.set_style(style);
        bar.enable_steady_tick(Duration::from_millis(120));
        *ACTIVE.lock().unwrap_or_else(|p| p.into_inner()) = Some(bar);
        Spinner {
            running: true,
            ticker: None,
        }
    }

    /// A bar labelled `what` that fills as `seconds` of a time budget pass
    /// (a run bounded by its clock, such as `learn --seconds`), with the
    /// elapsed time, the time left and the last line said, when stderr is a
    /// terminal.
    pub fn budget(what: &str, seconds: f64) -> Spinner {
        if !std::io::stderr().is_terminal() {
            return Spinner::off();
        }
        // Tenths of a second: the bar moves smoothly on short budgets.
        let len = (seconds * 10.0).ceil().max(1.0) as u64;
        let bar = styled_bar(len, what);
        *ACTIVE.lock().unwrap_or_else(|p| p.into_inner()) = Some(bar.clone());
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let start = Instant::now();
        let handle = std::thread::spawn(move || {
            while !flag.load(Ordering::Relaxed) {
                let tenths = (start.elapsed().as_secs_f64() * 10.0) as u64;
                bar.set_position(tenths.min(len));
                std::thread::sleep(Duration::from_millis(200));
            }
        });
        Spinner {
            running: true,
            ticker: Some((stop, handle)),
        }
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        if let Some((stop, handle)) = self.ticker.take() {
            stop.store(true, Ordering::Relaxed);
            let _ = handle.join();
        }
        if self.running {
            if let Some(bar) = ACTIVE.lock().unwrap_or_else(|p| p.into_inner()).take() {
                bar.finish_and_clear();
            }
        }
    }
}

/// The executable's `tracing` layer for progress events
/// ([`crate::report`]): each one's message alone, through [`say`], so that
/// the lines the library reports look as they always did and stay above a
/// running spinner.
pub struct ProgressLines;

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for ProgressLines {
    fn on_event(
        &self,
        event: &tracing::Event<'_>,
        _ctx: tracing_subscriber::layer::Context<'_, S>,
    ) {
        let mut message = Message(String::new());
        event.record(&mut message);
        say(&message.0);
    }
}

/// The `message` field of an event, as written.
struct Message(String);

impl tracing::field::Visit for Message {
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        if field.name() == "message" {
            self.0.push_str(value);
        }
    }

    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            use std::fmt::Write;
            let _ = write!(self.0, "{value:?}");
        }
    }
}

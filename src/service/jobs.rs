//! The solving service's jobs: a bounded queue in front of a fixed number of
//! slots, each job a `ggp-asp solve --json` child process with the time and
//! memory limits the player's solver has, run at a lower priority so that a
//! match played beside it keeps its cores. A job's progress lines are kept as
//! the child writes them; its answer is `solve --json`'s object. Every job is
//! written to the plan store when it is queued, starts and ends, so finished
//! jobs outlive a restart; a job that was queued or running when the service
//! stopped reads back as `error: interrupted`.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tracing::{info, warn};

use crate::asp::{Mode, SolveResult, Status};
use crate::child::{Spec, Stderr};
use crate::player::solver::{ADDRESS_SPACE_HEADROOM_MB, WATCHDOG_GRACE};
use crate::store::entry::now_utc;
use crate::store::{JobRecord, Plans};

/// How often a slot looks at its child for an answer or a cancellation.
const POLL: Duration = Duration::from_millis(50);
/// Progress lines kept per job (the first and the latest).
const PROGRESS_KEPT: usize = 400;

/// How the jobs run.
#[derive(Clone, Debug)]
pub struct JobsConfig {
    /// The `ggp-asp` executable run as `EXE solve FILE --json ...`.
    pub exe: PathBuf,
    /// Jobs run at once.
    pub slots: usize,
    /// Jobs waiting at most; past it a request is refused (429).
    pub queue: usize,
    /// A job's timeout when the request names none, and the most it may
    /// name.
    pub default_timeout: Duration,
    pub max_timeout: Duration,
    /// Each child's memory limit in MB (`solve --memory-mb`), its address
    /// space limited to this plus the player's headroom.
    pub memory_mb: u64,
    /// Each child's solver threads.
    pub threads: usize,
    /// Nice levels the children run below the server.
    pub nice: i32,
}

/// A job's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum JobStatus {
    Queued,
    Running,
    Solved,
    NoPlan,
    Timeout,
    Error,
    Cancelled,
}

impl JobStatus {
    pub fn name(self) -> &'static str {
        match self {
            JobStatus::Queued => "queued",
            JobStatus::Running => "running",
            JobStatus::Solved => "solved",
            JobStatus::NoPlan => "no-plan",
            JobStatus::Timeout => "timeout",
            JobStatus::Error => "error",
            JobStatus::Cancelled => "cancelled",
        }
    }

    fn parse(s: &str) -> Option<JobStatus> {
        [
            JobStatus::Queued,
            JobStatus::Running,
            JobStatus::Solved,
            JobStatus::NoPlan,
            JobStatus::Timeout,
            JobStatus::Error,
            JobStatus::Cancelled,
        ]
        .into_iter()
        .find(|j| j.name() == s)
    }

    /// Whether the job has ended.
    pub fn is_final(self) -> bool {
        !matches!(self, JobStatus::Queued | JobStatus::Running)
    }

    fn of(status: Status) -> JobStatus {
        match status {
            Status::Solved => JobStatus::Solved,
            Status::NoPlan => JobStatus::NoPlan,
            Status::Timeout => JobStatus::Timeout,
            Status::Error => JobStatus::Error,
        }
    }
}

/// What a client asks for (`POST /api/solve`), checked.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct JobRequest {
    /// The game's rules (KIF).
    pub game: String,
    /// A name to show (the game's own rules never carry one).
    #[serde(default)]
    pub name: Option<String>,
    /// Seconds; at most the service's limit.
    #[serde(default)]
    pub timeout: Option<f64>,
    #[serde(default)]
    pub mode: Option<Mode>,
    /// The first verified plan, not waiting for its proof.
    #[serde(default)]
    pub first: bool,
}

/// One job as the API shows it.
#[derive(Clone, Debug, Serialize)]
pub struct Job {
    pub id: String,
    pub status: JobStatus,
    pub name: Option<String>,
    pub timeout: f64,
    pub mode: Option<Mode>,
    pub first: bool,
    pub created: String,
    pub finished: Option<String>,
    /// The solver's progress lines so far.
    pub progress: Vec<String>,
    /// `solve --json`'s object, once the job has one.
    pub answer: Option<SolveResult>,
    /// Why the job ended without an answer (an error, a cancellation).
    pub error: Option<String>,
    /// The rules (left out of lists).
    #[serde(skip)]
    pub game: String,
}

impl Job {
    fn record(&self, request: &JobRequest) -> JobRecord {
        JobRecord {
            id: self.id.clone(),
            status: self.status.name().to_string(),
            request: serde_json::to_string(request).unwrap_or_default(),
            answer: self
                .answer
                .as_ref()
                .and_then(|a| serde_json::to_string(a).ok()),
            error: self.error.clone(),
            progress: self.progress.clone(),
            created: self.created.clone(),
            finished: self.finished.clone(),
        }
    }

    /// A stored job read back; one that had not ended is `error:
    /// interrupted` (the service stopped under it).
    fn from_record(r: &JobRecord) -> Option<(Job, JobRequest)> {
        let request: JobRequest = serde_json::from_str(&r.request).ok()?;
        let mut status = JobStatus::parse(&r.status)?;
        let mut error = r.error.clone();
        let mut finished = r.finished.clone();
        if !status.is_final() {
            status = JobStatus::Error;
            error =
                Some("interrupted: the service stopped while the job was queued or running".into());
            finished = Some(now_utc());
        }
        let job = Job {
            id: r.id.clone(),
            status,
            name: request.name.clone(),
            timeout: request.timeout.unwrap_or(0.0),
            mode: request.mode,
            first: request.first,
            created: r.created.clone(),
            finished,
            progress: r.progress.clone(),
            answer: r
                .answer
                .as_deref()
                .and_then(|a| serde_json::from_str(a).ok()),
            error,
            game: request.game.clone(),
        };
        Some((job, request))
    }
}

/// Why a job was not queued.
#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    /// The queue is full: try again after about this many seconds.
    Full { retry_after: u64 },
    /// The service is stopping.
    Stopping,
}

/// One job's entry: what the API shows, the request, and its cancel flag.
struct Entry {
    job: Job,
    request: JobRequest,
    cancel: Arc<AtomicBool>,
}

struct State {
    jobs: HashMap<String, Entry>,
    /// Ids in the order they were accepted (the listing's order).
    order: Vec<String>,
    queue: VecDeque<String>,
    running: usize,
    stopping: bool,
}

/// The queue and its slots. Dropping it does not stop the slots: call
/// [`Jobs::shutdown`].
pub struct Jobs {
    cfg: JobsConfig,
    store: Option<Arc<Plans>>,
    /// The store path given to each child, so that what it solves is
    /// remembered; `None`: the children run without a store.
    store_path: Option<PathBuf>,
    state: Mutex<State>,
    wake: Condvar,
    /// Taken by each write to the store, in turn ([`Jobs::persist`]).
    writes: Mutex<()>,
    slots: Mutex<Vec<JoinHandle<()>>>,
}

impl Jobs {
    /// Reads the jobs kept in the store (those that had not ended become
    /// `error: interrupted`, and are written so) and starts the slots.
    pub fn start(
        cfg: JobsConfig,
        store: Option<Arc<Plans>>,
        store_path: Option<PathBuf>,
    ) -> Arc<Jobs> {
        let mut state = State {
            jobs: HashMap::new(),
            order: Vec::new(),
            queue: VecDeque::new(),
            running: 0,
            stopping: false,
        };
        if let Some(s) = &store {
            match s.jobs() {
                Ok(records) => {
                    for r in &records {
                        let Some((job, request)) = Job::from_record(r) else {
                            warn!("job {} in the store does not read; left out", r.id);
                            continue;
                        };
                        if job.status.name() != r.status {
                            if let Err(e) = s.save_job(&job.record(&request)) {
                                warn!("{e}; job {} stays as it was stored", job.id);
                            }
                        }
                        state.order.push(job.id.clone());
                        state.jobs.insert(
                            job.id.clone(),
                            Entry {
                                job,
                                request,
                                cancel: Arc::new(AtomicBool::new(false)),
                            },
                        );
                    }
                }
                Err(e) => warn!("{e}; the jobs of earlier runs are not shown"),
            }
        }
        let jobs = Arc::new(Jobs {
            cfg,
            store,
            store_path,
            state: Mutex::new(state),
            wake: Condvar::new(),
            writes: Mutex::new(()),
            slots: Mutex::new(Vec::new()),
        });
        let mut slots = Vec::new();
        for i in 0..jobs.cfg.slots.max(1) {
            let j = Arc::clone(&jobs);
            match std::thread::Builder::new()
                .name(format!("job slot {i}"))
                .spawn(move || j.slot())
            {
                Ok(h) => slots.push(h),
                Err(e) => warn!("cannot start job slot {i}: {e}"),
            }
        }
        *jobs.slots.lock().unwrap_or_else(|p| p.into_inner()) = slots;
        jobs
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn config(&self) -> &JobsConfig {
        &self.cfg
    }

    /// Queues a job for `request` (its game already read and checked).
    pub fn submit(&self, mut request: JobRequest) -> Result<Job, Refused> {
        let timeout = request
            .timeout
            .filter(|t| t.is_finite() && *t > 0.0)
            .map_or(self.cfg.default_timeout, Duration::from_secs_f64)
            .min(self.cfg.max_timeout);
        request.timeout = Some(timeout.as_secs_f64());
        let mut st = self.lock();
        if st.stopping {
            return Err(Refused::Stopping);
        }
        if st.queue.len() >= self.cfg.queue {
            // About when a slot frees: the jobs ahead share the slots, each
            // at most its timeout; a client that retries then is not early.
            let ahead = (st.queue.len() / self.cfg.slots.max(1)).max(1) as u64;
            return Err(Refused::Full {
                retry_after: (ahead * self.cfg.default_timeout.as_secs()).clamp(1, 3600),
            });
        }
        let id = format!("{:016x}", rand::random::<u64>());
        let job = Job {
            id: id.clone(),
            status: JobStatus::Queued,
            name: request.name.clone(),
            timeout: timeout.as_secs_f64(),
            mode: request.mode,
            first: request.first,
            created: now_utc(),
            finished: None,
            progress: Vec::new(),
            answer: None,
            error: None,
            game: request.game.clone(),
        };
        st.order.push(id.clone());
        st.queue.push_back(id.clone());
        st.jobs.insert(
            id.clone(),
            Entry {
                job: job.clone(),
                request,
                cancel: Arc::new(AtomicBool::new(false)),
            },
        );
        drop(st);
        self.wake.notify_one();
        self.persist(&id);
        Ok(job)
    }

    /// The job with this id.
    pub fn get(&self, id: &str) -> Option<Job> {
        self.lock().jobs.get(id).map(|e| e.job.clone())
    }

    /// Every job, newest first, without progress lines.
    pub fn list(&self) -> Vec<Job> {
        let st = self.lock();
        st.order
            .iter()
            .rev()
            .filter_map(|id| st.jobs.get(id))
            .map(|e| Job {
                progress: Vec::new(),
                ..e.job.clone()
            })
            .collect()
    }

    /// Jobs queued and running.
    pub fn load(&self) -> (usize, usize) {
        let st = self.lock();
        (st.queue.len(), st.running)
    }

    /// Cancels a job: a queued one leaves the queue, a running one's child
    /// is killed. `None` for an unknown id; a job that has ended stays as
    /// it is.
    pub fn cancel(&self, id: &str) -> Option<Job> {
        let (job, changed) = {
            let mut st = self.lock();
            let st = &mut *st;
            let e = st.jobs.get_mut(id)?;
            let changed = !e.job.status.is_final();
            if changed {
                e.cancel.store(true, Ordering::SeqCst);
                if e.job.status == JobStatus::Queued {
                    st.queue.retain(|q| q != id);
                }
                e.job.status = JobStatus::Cancelled;
                e.job.error = Some("cancelled on request".into());
                e.job.finished = Some(now_utc());
                info!("job {id}: cancelled");
            }
            (e.job.clone(), changed)
        };
        if changed {
            self.persist(id);
        }
        Some(job)
    }

    /// Stops taking jobs, cancels the queued ones (kept as `cancelled`)
    /// and kills the running ones, then waits for the slots to end.
    pub fn shutdown(&self) {
        let ids: Vec<String> = {
            let mut st = self.lock();
            st.stopping = true;
            st.jobs
                .iter()
                .filter(|(_, e)| !e.job.status.is_final())
                .map(|(id, _)| id.clone())
                .collect()
        };
        for id in ids {
            self.cancel(&id);
        }
        self.wake.notify_all();
        let slots = std::mem::take(&mut *self.slots.lock().unwrap_or_else(|p| p.into_inner()));
        for h in slots {
            let _ = h.join();
        }
    }

    /// Writes job `id` as it is now to the store, outside the state's lock
    /// (a store another process holds may keep a write waiting for
    /// seconds, and nobody reading a job waits for that). The writes take
    /// turns, and each takes the job's state when its turn comes, so the
    /// last write of a job is always its latest state.
    fn persist(&self, id: &str) {
        let Some(s) = &self.store else {
            return;
        };
        let _turn = self.writes.lock().unwrap_or_else(|p| p.into_inner());
        let record = {
            let st = self.lock();
            match st.jobs.get(id) {
                Some(e) => e.job.record(&e.request),
                None => return,
            }
        };
        if let Err(e) = s.save_job(&record) {
            warn!("{e}; job {id} is kept in memory only");
        }
    }

    /// A slot: takes the next queued job and runs it, until shutdown.
    fn slot(self: Arc<Jobs>) {
        loop {
            let (id, request, cancel) = {
                let mut st = self.lock();
                loop {
                    if st.stopping {
                        return;
                    }
                    if let Some(id) = st.queue.pop_front() {
                        st.running += 1;
                        let e = st.jobs.get_mut(&id).expect("a queued job has an entry");
                        e.job.status = JobStatus::Running;
                        break (id, e.request.clone(), Arc::clone(&e.cancel));
                    }
                    st = self.wake.wait(st).unwrap_or_else(|p| p.into_inner());
                }
            };
            info!("job {id}: running");
            self.persist(&id);
            let ended = self.run(&id, &request, &cancel);
            let mut st = self.lock();
            st.running -= 1;
            let Some(e) = st.jobs.get_mut(&id) else {
                continue;
            };
            if e.job.status == JobStatus::Running {
                match ended {
                    Ok(answer) => {
                        e.job.status = JobStatus::of(answer.status);
                        if answer.status == Status::Error {
                            e.job.error = Some(answer.message.clone());
                        }
                        e.job.answer = Some(answer);
                    }
                    Err(why) => {
                        e.job.status = JobStatus::Error;
                        e.job.error = Some(why);
                    }
                }
                e.job.finished = Some(now_utc());
            }
            info!("job {id}: {}", e.job.status.name());
            drop(st);
            self.persist(&id);
        }
    }

    /// Runs one job's child to its answer, or until it is cancelled.
    fn run(
        self: &Arc<Jobs>,
        id: &str,
        request: &JobRequest,
        cancel: &AtomicBool,
    ) -> Result<SolveResult, String> {
        let dir = tempfile::Builder::new()
            .prefix("ggp-asp-job-")
            .tempdir()
            .map_err(|e| format!("cannot create a temporary folder: {e}"))?;
        // The file's name is the name the solver reports and the store
        // keeps: the request's, in characters a file name can take.
        let stem: String = request
            .name
            .as_deref()
            .unwrap_or("game")
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .take(80)
            .collect();
        let stem = if stem.is_empty() {
            "game".to_string()
        } else {
            stem
        };
        let path = dir.path().join(format!("{stem}.kif"));
        std::fs::write(&path, &request.game)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        let timeout = Duration::from_secs_f64(
            request
                .timeout
                .unwrap_or(self.cfg.default_timeout.as_secs_f64()),
        );
        let mut cmd = Command::new(&self.cfg.exe);
        cmd.arg("solve")
            .arg(&path)
            .arg("--json")
            .arg("--timeout")
            .arg(format!("{}", timeout.as_secs_f64()))
            .arg("--memory-mb")
            .arg(self.cfg.memory_mb.to_string())
            .arg("--threads")
            .arg(self.cfg.threads.max(1).to_string());
        if let Some(mode) = request.mode {
            cmd.arg("--mode").arg(mode.name());
        }
        if request.first {
            cmd.arg("--first");
        }
        match &self.store_path {
            Some(p) => cmd.arg("--store").arg(p),
            None => cmd.arg("--no-store"),
        };
        let (jobs, tag) = (Arc::clone(self), id.to_string());
        let pending = Spec::new(cmd, "the job's solver")
            .stderr(Stderr::Lines(Box::new(move |line| {
                jobs.progress(&tag, line)
            })))
            .address_space_mb(self.cfg.memory_mb + ADDRESS_SPACE_HEADROOM_MB)
            .wall_limit(timeout + WATCHDOG_GRACE)
            .nice(self.cfg.nice)
            .log_as(&format!("job {id}"))
            .thread_names("job")
            .spawn()
            .and_then(|r| r.answer_later::<SolveResult>())
            .map_err(|e| e.to_string())?;
        loop {
            if cancel.load(Ordering::SeqCst) {
                // Dropping the pending answer kills the child.
                drop(pending);
                return Err("cancelled on request".into());
            }
            if let Some(r) = pending.try_answer() {
                return r.map_err(|e| e.to_string());
            }
            std::thread::sleep(POLL);
        }
    }

    /// A progress line of job `id`'s child.
    fn progress(&self, id: &str, line: &str) {
        if let Some(e) = self.lock().jobs.get_mut(id) {
            let p = &mut e.job.progress;
            if p.len() >= PROGRESS_KEPT {
                // Keep the first lines (what the game is) and the latest.
                p.remove(PROGRESS_KEPT / 4);
            }
            p.push(line.to_string());
        }
    }
}

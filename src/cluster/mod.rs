//! The ranks of an MPI job (`mpirun -n N ggp-asp ... --cluster`) as one
//! searcher: every rank searches its own tree of the same root (root
//! parallel across ranks, each rank's threads as on one machine), and rank 0
//! sums what they found. MPI is the standard tool for starting a program on
//! many machines, so a user needs no protocol of ours; the feature `mpi`
//! keeps it out of the default build.
//!
//! This module owns the job (MPI is started once per process), the
//! reductions the benchmark needs (sums and maxima of vectors of equal length
//! on every rank, gathered at rank 0) and the byte messages the player's
//! ranks exchange; [`player`] is the HTTP player on a cluster (rank 0 and
//! the messages), [`follower`] every other rank.

pub mod follower;
pub mod player;

use anyhow::{bail, Result};
use mpi::collective::SystemOperation;
use mpi::environment::{Threading, Universe};
use mpi::point_to_point::MatchedReceiveVec;
use mpi::raw::AsRaw;
use mpi::request::{Request, StaticScope};
use mpi::topology::SimpleCommunicator;
use mpi::traits::{Communicator, CommunicatorCollectives, Destination, Root, Source};

/// A job started by [`Cluster::start_threaded`]: it may move to the thread
/// that is to make the MPI calls.
pub struct ThreadedCluster(pub Cluster);

// SAFETY: MPI was initialised at thread level Serialized or Multiple, under
// which any thread may call MPI as long as no two do at once. The value is
// moved, never shared, so one thread at a time holds the communicator.
unsafe impl Send for ThreadedCluster {}

/// This process's place in the job.
pub struct Cluster {
    // Finalises MPI when dropped.
    _universe: Universe,
    world: SimpleCommunicator,
}

impl Cluster {
    /// Starts MPI. A process started without `mpirun` is a job of one rank.
    pub fn start() -> Result<Cluster> {
        let Some(universe) = mpi::initialize() else {
            bail!("MPI was started already in this process");
        };
        let world = universe.world();
        Ok(Cluster {
            _universe: universe,
            world,
        })
    }

    /// Starts MPI for a process whose threads take turns calling it (the
    /// player: one thread on each rank exchanges the messages while others
    /// search).
    pub fn start_threaded() -> Result<ThreadedCluster> {
        let Some((universe, level)) = mpi::initialize_with_threading(Threading::Multiple) else {
            bail!("MPI was started already in this process");
        };
        if matches!(level, Threading::Single | Threading::Funneled) {
            bail!("this MPI library offers threads {level:?}; the player needs Serialized or Multiple");
        }
        let world = universe.world();
        // A send to a rank that died returns an error code (which the
        // player reads as that rank being gone) instead of aborting every
        // rank, MPI's default.
        // SAFETY: `world` is a live communicator and the handler a constant
        // of the MPI library.
        unsafe {
            mpi::ffi::MPI_Comm_set_errhandler(world.as_raw(), mpi::ffi::RSMPI_ERRORS_RETURN);
        }
        Ok(ThreadedCluster(Cluster {
            _universe: universe,
            world,
        }))
    }

    /// Sends `bytes` to rank `to` (returns once MPI holds them: small
    /// messages at once).
    pub fn send(&self, to: usize, bytes: &[u8]) {
        self.world.process_at_rank(to as i32).send(bytes);
    }

    /// Starts sending `bytes` to rank `to` and returns at once: a rank that
    /// is dead or stuck never blocks the sender (see [`Outgoing`]).
    pub fn post(&self, to: usize, bytes: Vec<u8>) -> Outgoing {
        let buffer: &'static [u8] = Box::leak(bytes.into_boxed_slice());
        let request = self
            .world
            .process_at_rank(to as i32)
            .immediate_send(StaticScope, buffer);
        Outgoing {
            request: Some(request),
            buffer: buffer as *const [u8] as *mut [u8],
        }
    }

    /// A message waiting from any rank, with its sender, without blocking.
    pub fn try_receive(&self) -> Option<(usize, Vec<u8>)> {
        let probed = self.world.any_process().immediate_matched_probe()?;
        let (bytes, status) = probed.matched_receive_vec::<u8>();
        Some((status.source_rank() as usize, bytes))
    }

    pub fn rank(&self) -> usize {
        self.world.rank() as usize
    }

    pub fn size(&self) -> usize {
        self.world.size() as usize
    }

    /// Rank 0, which reports for the job.
    pub fn is_root(&self) -> bool {
        self.rank() == 0
    }

    /// Waits until every rank gets here.
    pub fn barrier(&self) {
        self.world.barrier();
    }

    /// `values` summed element by element over the ranks: `Some` at rank 0,
    /// `None` elsewhere. Every rank must call it, with as many values (see
    /// [`Cluster::same_length`]).
    pub fn sum(&self, values: &[f64]) -> Option<Vec<f64>> {
        self.reduce(values, SystemOperation::sum())
    }

    /// [`Cluster::sum`] with the maximum.
    pub fn max(&self, values: &[f64]) -> Option<Vec<f64>> {
        self.reduce(values, SystemOperation::max())
    }

    /// One value per rank, at rank 0 (in rank order).
    pub fn gather(&self, value: f64) -> Option<Vec<f64>> {
        let mut mine = vec![0.0; self.size()];
        mine[self.rank()] = value;
        self.sum(&mine)
    }

    /// Whether every rank holds `n` values (every rank learns the answer, so
    /// that all go on to the same reduction or none does).
    pub fn same_length(&self, n: usize) -> bool {
        let mut lo = 0i64;
        let mut hi = 0i64;
        self.world
            .all_reduce_into(&(n as i64), &mut lo, SystemOperation::min());
        self.world
            .all_reduce_into(&(n as i64), &mut hi, SystemOperation::max());
        lo == hi
    }

    fn reduce(&self, values: &[f64], op: SystemOperation) -> Option<Vec<f64>> {
        let root = self.world.process_at_rank(0);
        if self.is_root() {
            let mut out = vec![0.0; values.len()];
            root.reduce_into_root(values, &mut out[..], op);
            Some(out)
        } else {
            root.reduce_into(values, op);
            None
        }
    }
}

/// A message on its way to one rank ([`Cluster::post`]). MPI reads its
/// buffer until the send completes, so the buffer is freed only then; a
/// message dropped before (its rank is gone) leaks its bytes rather than
/// free what MPI may still read.
pub struct Outgoing {
    request: Option<Request<'static, [u8], StaticScope>>,
    buffer: *mut [u8],
}

impl Outgoing {
    /// Whether the message has left (MPI holds it or the rank has it).
    pub fn done(&mut self) -> bool {
        let Some(request) = self.request.take() else {
            return true;
        };
        match request.test() {
            Ok(_) => {
                // SAFETY: the buffer came from `Box::leak` in `post`, and the
                // completed send no longer reads it.
                drop(unsafe { Box::from_raw(self.buffer) });
                true
            }
            Err(request) => {
                self.request = Some(request);
                false
            }
        }
    }
}

impl Drop for Outgoing {
    fn drop(&mut self) {
        // Still in flight: MPI may read the buffer, and an incomplete
        // request must not be dropped, so both are left to the process.
        if let Some(request) = self.request.take() {
            std::mem::forget(request);
        }
    }
}

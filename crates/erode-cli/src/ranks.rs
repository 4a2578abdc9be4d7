//! Running as one of several MPI ranks (`mpirun -np K erode simulate grid ...`): rank 0 runs the
//! command (checks the input, tells the others what to read and do, writes the report); every
//! rank reads, steps and writes a block of the map's rows (see the library's
//! `models::grid::blocks`). MPI comes with the
//! `mpi` feature (rsmpi over the system's MPI, e.g. Debian's OpenMPI); a build without it
//! launched by `mpirun` says how to build one.

use std::sync::{Arc, OnceLock};

use erode::ranks::Exchange;

/// The ranks this process runs with, once [`start`] found more than one.
static RANKS: OnceLock<Arc<dyn Exchange>> = OnceLock::new();

/// How many ranks the launcher started and which this is, from its environment (Open MPI's,
/// then the PMI variables that MPICH and Slurm's `srun` set): `None` outside a launcher.
fn launched() -> Option<(usize, usize)> {
    let var = |name: &str| std::env::var(name).ok().and_then(|v| v.trim().parse::<usize>().ok());
    [("OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK"), ("PMI_SIZE", "PMI_RANK"), ("PMIX_SIZE", "PMIX_RANK")]
        .into_iter()
        .find_map(|(size, rank)| Some((var(size)?, var(rank).unwrap_or(0))))
}

/// How many ranks share this machine (MPI's shared-memory group), once [`start`] found more
/// than one rank.
static LOCAL: OnceLock<usize> = OnceLock::new();

/// The exchange of the ranks, on rank 0 of a run over more than one.
pub fn exchange() -> Option<Arc<dyn Exchange>> {
    RANKS.get().cloned()
}

/// How many ranks run on this machine, this one among them (1 outside a run over ranks).
pub fn local() -> usize {
    LOCAL.get().copied().unwrap_or(1)
}

/// What `main` does as one of several ranks.
#[cfg_attr(not(feature = "mpi"), allow(dead_code))] // without MPI a process is always alone
pub enum Role {
    /// One process (no launcher, or one rank): run the command.
    Alone,
    /// Rank 0 of several: run the command ([`exchange`] gives the ranks).
    Lead,
    /// Another rank: follow rank 0.
    Follow(Arc<dyn Exchange>),
}

/// Starts MPI when a launcher started this process among others. The guard it returns ends MPI
/// when dropped (at the end of `main`).
pub fn start() -> anyhow::Result<(Role, Guard)> {
    let Some((size, rank)) = launched().filter(|&(size, _)| size > 1) else {
        return Ok((Role::Alone, Guard::default()));
    };
    hand_back_large_fields();
    imp::start(size, rank)
}

/// Makes the allocator hand a large field (a MiB or more) back to the system when a rank lets it
/// go. glibc otherwise raises its threshold for mapping an allocation of its own to the size of
/// the first large one freed (up to 32 MiB), after which a whole-map field is carved from the
/// heap and, freed, kept there: a rank's memory then never falls from its peak, and cutting a
/// run into tiles and back (which lets each old field go as the new one comes) measured 0.88 GB
/// on rank 0 of 4 at 4096² where it holds 0.58 GB (BENCHMARKS.md).
fn hand_back_large_fields() {
    #[cfg(all(feature = "mpi", target_os = "linux", target_env = "gnu"))]
    // one call, before the ranks allocate their blocks; mallopt changes a setting of the
    // allocator, which takes its own lock
    #[allow(unsafe_code)]
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 20);
    }
}

/// Rank 0 failed before it handed out any block: the others stop waiting for one.
pub fn stop_unstarted() {
    if let Some(ex) = exchange()
        && !imp::used(&*ex)
    {
        erode::models::grid::blocks::stop_followers(&*ex);
    }
}

/// Rank 0 ends a run over ranks with exit status `code`, after the others' part of it ended
/// ([`finished`]): a run refused or failed on rank 0 ends every rank with its status, as
/// `mpirun`'s and `srun`'s accounting of each rank expect.
pub fn finish(code: u8) {
    if let Some(ex) = exchange() {
        ex.broadcast(&[code], 1);
    }
}

/// The exit status rank 0 ended the run with ([`finish`]), on another rank whose part of it
/// ended without an error of its own.
pub fn finished(ex: &dyn Exchange) -> u8 {
    ex.broadcast(&[], 1).first().copied().unwrap_or(2)
}

#[cfg(not(feature = "mpi"))]
mod imp {
    use super::Role;
    use erode::ranks::Exchange;

    pub fn start(size: usize, rank: usize) -> anyhow::Result<(Role, Guard)> {
        // every rank exits with status 2; one says why
        if rank == 0 {
            anyhow::bail!(
                "started as one of {size} MPI ranks, but this erode was built without MPI: build it with \
                 `cargo build --release -p erode-cli --features mpi` (Open MPI: apt install libopenmpi-dev \
                 openmpi-bin clang), or run one process without mpirun"
            );
        }
        Err(anyhow::Error::new(super::Quiet))
    }

    pub fn used(_: &dyn Exchange) -> bool {
        true
    }

    /// Nothing to end without MPI.
    #[derive(Default)]
    pub struct Guard {
        _none: (),
    }
}

#[cfg(feature = "mpi")]
mod imp {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    use erode::ranks::Exchange;
    use mpi::Count;
    use mpi::datatype::PartitionMut;
    use mpi::environment::Threading;
    use mpi::topology::SimpleCommunicator;
    use mpi::traits::*;

    use super::Role;

    /// The biggest message MPI's int counts allow, and then some to spare.
    const CHUNK: usize = 1 << 30;

    pub fn start(size: usize, rank: usize) -> anyhow::Result<(Role, Guard)> {
        // the model runs on a worker thread, never two MPI calls at once
        let (universe, _) = mpi::initialize_with_threading(Threading::Serialized)
            .ok_or_else(|| anyhow::anyhow!("MPI could not be started"))?;
        let world = universe.world();
        let (got_size, got_rank) = (world.size() as usize, world.rank() as usize);
        if (got_size, got_rank) != (size, rank) {
            anyhow::bail!("the launcher says rank {rank} of {size}, MPI says {got_rank} of {got_size}");
        }
        // every rank takes part: the ranks on this machine, for the memory check
        let _ = super::LOCAL.set(world.split_shared(got_rank as i32).size().max(1) as usize);
        let ex: Arc<dyn Exchange> = Arc::new(Mpi { rank, size });
        let role = if rank == 0 {
            let _ = super::RANKS.set(ex);
            Role::Lead
        } else {
            Role::Follow(ex)
        };
        Ok((role, Guard { _universe: Some(universe) }))
    }

    /// Whether this process has talked to the other ranks yet.
    pub fn used(_: &dyn Exchange) -> bool {
        USED.load(Ordering::SeqCst)
    }

    static USED: AtomicBool = AtomicBool::new(false);

    /// The ranks over MPI's world communicator, fetched for each call (its handle is a plain
    /// global, so this holds nothing that cannot cross threads).
    struct Mpi {
        rank: usize,
        size: usize,
    }

    fn count(n: usize) -> Count {
        Count::try_from(n).unwrap_or(Count::MAX)
    }

    impl Mpi {
        fn world(&self) -> SimpleCommunicator {
            USED.store(true, Ordering::SeqCst);
            SimpleCommunicator::world()
        }
    }

    /// Sends `bytes` to `to` in pieces MPI's counts hold.
    fn send_all(world: &SimpleCommunicator, to: usize, bytes: &[u8]) {
        let p = world.process_at_rank(to as i32);
        p.send(&(bytes.len() as u64));
        for piece in bytes.chunks(CHUNK) {
            p.send(piece);
        }
    }

    /// Receives what [`send_all`] sent from `from`.
    fn receive_all(world: &SimpleCommunicator, from: usize) -> Vec<u8> {
        let p = world.process_at_rank(from as i32);
        let mut len = 0u64;
        p.receive_into(&mut len);
        let mut out = vec![0u8; len as usize];
        for piece in out.chunks_mut(CHUNK) {
            p.receive_into(piece);
        }
        out
    }

    impl Exchange for Mpi {
        fn rank(&self) -> usize {
            self.rank
        }

        fn ranks(&self) -> usize {
            self.size
        }

        fn all_gather(&self, mine: &[u8], counts: &[usize]) -> Vec<u8> {
            // nothing to trade (every rank knows the counts): MPI is not called, as it refuses
            // an empty send buffer at the address of an empty receive buffer (both dangling)
            if counts.iter().all(|&n| n == 0) {
                return Vec::new();
            }
            let world = self.world();
            let mut out = vec![0u8; counts.iter().sum()];
            let c: Vec<Count> = counts.iter().map(|&n| count(n)).collect();
            let displs: Vec<Count> = c.iter().scan(0, |at, &n| Some(std::mem::replace(at, *at + n))).collect();
            let mut part = PartitionMut::new(&mut out[..], c, displs);
            world.all_gather_varcount_into(mine, &mut part);
            out
        }

        fn gather(&self, mine: &[u8], counts: &[usize]) -> Option<Vec<u8>> {
            let world = self.world();
            if self.rank != 0 {
                send_all(&world, 0, mine);
                return None;
            }
            let mut out = Vec::with_capacity(counts.iter().sum());
            out.extend_from_slice(mine);
            for k in 1..self.size {
                out.extend(receive_all(&world, k));
            }
            Some(out)
        }

        fn shift(&self, send: &[u8], to: Option<usize>, recv: &mut [u8], from: Option<usize>) {
            let world = self.world();
            match (to, from) {
                (Some(t), Some(f)) => {
                    let (t, f) = (world.process_at_rank(t as i32), world.process_at_rank(f as i32));
                    mpi::point_to_point::send_receive_into(send, &t, recv, &f);
                }
                (Some(t), None) => world.process_at_rank(t as i32).send(send),
                (None, Some(f)) => {
                    world.process_at_rank(f as i32).receive_into(recv);
                }
                (None, None) => {}
            }
        }

        fn broadcast(&self, mine: &[u8], len: usize) -> Vec<u8> {
            // nothing to send: MPI is not called (as in `all_gather`)
            if len == 0 {
                return Vec::new();
            }
            let world = self.world();
            // as in `Threads`, a length that is not `len` panics where MPI would abort
            assert!(self.rank != 0 || mine.len() == len, "rank 0 broadcasts {} bytes, not {len}", mine.len());
            let mut out = if self.rank == 0 { mine.to_vec() } else { vec![0u8; len] };
            let root = world.process_at_rank(0);
            for piece in out.chunks_mut(CHUNK) {
                root.broadcast_into(piece);
            }
            out
        }

        fn scatter(&self, part: Option<&mut dyn FnMut(usize) -> Vec<u8>>) -> Vec<u8> {
            let world = self.world();
            match part {
                Some(make) if self.rank == 0 => {
                    // one part made, sent and dropped at a time
                    for k in 1..self.size {
                        send_all(&world, k, &make(k));
                    }
                    Vec::new()
                }
                _ => receive_all(&world, 0),
            }
        }
    }

    /// Ends MPI when dropped.
    #[derive(Default)]
    pub struct Guard {
        _universe: Option<mpi::environment::Universe>,
    }
}

pub use imp::Guard;

/// The error of a rank that has nothing to say (rank 0 says it).
#[derive(Debug)]
pub struct Quiet;

impl std::fmt::Display for Quiet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("another rank reports the error")
    }
}

impl std::error::Error for Quiet {}

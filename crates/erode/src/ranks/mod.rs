//! The processes of one parallel run (MPI's ranks, or threads of one process) and how they
//! talk: the few collective operations the grid model's blocks
//! ([`crate::models::grid::blocks`]) and the writers of a map's rows by their owners need.
//! The MPI transport lives in the command line (the `mpi` feature); [`Threads`] is the
//! in-process one the tests use.

mod threads;

pub use threads::Threads;

/// How the ranks of a parallel run talk: an all-gather, a gather to rank 0, a paired send and
/// receive and a scatter from rank 0, which MPI provides and [`Threads`] provides within one
/// process. Every rank calls each operation in the same order.
pub trait Exchange: Send + Sync {
    /// This rank, `0..ranks()`.
    fn rank(&self) -> usize;
    /// How many ranks run.
    fn ranks(&self) -> usize;
    /// Every rank's `mine` concatenated in rank order, on every rank; `counts[k]` is rank
    /// `k`'s length in bytes.
    fn all_gather(&self, mine: &[u8], counts: &[usize]) -> Vec<u8>;
    /// Every rank's `mine` concatenated in rank order on rank 0, `None` on the others.
    fn gather(&self, mine: &[u8], counts: &[usize]) -> Option<Vec<u8>>;
    /// Sends `send` to rank `to` while receiving `recv` from rank `from` (`None`: no one).
    fn shift(&self, send: &[u8], to: Option<usize>, recv: &mut [u8], from: Option<usize>);
    /// Rank 0 gives `parts[k - 1]` to rank `k`; every other rank returns its part (rank 0
    /// an empty one). `parts` is `Some` on rank 0 only.
    fn scatter(&self, parts: Option<&[Vec<u8>]>) -> Vec<u8>;
}

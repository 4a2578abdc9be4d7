//! The processes of one parallel run (MPI's ranks, or threads of one process) and how they
//! talk: the few collective operations the grid model's blocks
//! ([`crate::models::grid::blocks`]) and the writers of a map's rows by their owners need.
//! The MPI transport lives in the command line (the `mpi` feature); [`Threads`] is the
//! in-process one the tests use.

mod threads;

pub use threads::Threads;

/// How the ranks of a parallel run talk: an all-gather, a gather to rank 0, a paired send and
/// receive, a scatter and a broadcast from rank 0, which MPI provides and [`Threads`] provides
/// within one process. Every rank calls each operation in the same order.
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
    /// Rank 0 gives `part(k)` to rank `k`, making each part only when it sends it (so it holds
    /// one at a time); every other rank returns its part (rank 0 an empty one). `part` is
    /// `Some` on rank 0 only.
    fn scatter(&self, part: Option<&mut dyn FnMut(usize) -> Vec<u8>>) -> Vec<u8>;
    /// Rank 0's `len` bytes `mine` on every rank (the others' `mine` is not read); every rank
    /// must know `len`. An all-gather in which only rank 0 gives bytes, unless the transport has
    /// a broadcast of its own.
    fn broadcast(&self, mine: &[u8], len: usize) -> Vec<u8> {
        let mut counts = vec![0; self.ranks()];
        counts[0] = len;
        self.all_gather(if self.rank() == 0 { mine } else { &[] }, &counts)
    }
}

/// Rank 0's `bytes` on every rank, of a length only rank 0 knows (the others' `bytes` are not
/// read): their length first, then them.
pub fn broadcast_sized(ex: &dyn Exchange, bytes: &[u8]) -> Vec<u8> {
    let len = ex.broadcast(&(bytes.len() as u64).to_le_bytes(), 8);
    let len = len.as_chunks::<8>().0.first().map_or(0, |b| u64::from_le_bytes(*b) as usize);
    ex.broadcast(bytes, len)
}

/// `add` run on every rank in rank order, each continuing from the value the rank before it
/// returned (`from` on rank 0): the value of the last, on every rank. A sum carried so through
/// the ranks' rows in map order is the bits of one sum over the whole map. Every rank calls it
/// together.
pub fn carried<const K: usize>(ex: &dyn Exchange, from: [f64; K], add: impl Fn([f64; K]) -> [f64; K]) -> [f64; K] {
    let (rank, ranks) = (ex.rank(), ex.ranks());
    let to_bytes = |v: [f64; K]| -> Vec<u8> { v.into_iter().flat_map(f64::to_le_bytes).collect() };
    let of_bytes = |b: &[u8]| -> [f64; K] {
        std::array::from_fn(|k| b.as_chunks::<8>().0.get(k).map_or(f64::NAN, |c| f64::from_le_bytes(*c)))
    };
    let mut value = if rank == 0 { add(from) } else { from };
    // in step j, rank j hands its value to rank j + 1, every rank taking part
    for j in 0..ranks.saturating_sub(1) {
        let send = if rank == j { to_bytes(value) } else { Vec::new() };
        let mut recv = if rank == j + 1 { vec![0u8; K * 8] } else { Vec::new() };
        ex.shift(&send, (rank == j).then_some(j + 1), &mut recv, (rank == j + 1).then_some(j));
        if rank == j + 1 {
            value = add(of_bytes(&recv));
        }
    }
    let mut counts = vec![0; ranks];
    if let Some(last) = counts.last_mut() {
        *last = K * 8;
    }
    let mine = if rank + 1 == ranks { to_bytes(value) } else { Vec::new() };
    let last = ex.all_gather(&mine, &counts);
    of_bytes(&last)
}

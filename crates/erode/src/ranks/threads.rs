//! Ranks as threads of one process: the transport the tests run blocks with.

use std::sync::{Arc, Barrier, Mutex};

use super::Exchange;

/// Ranks as threads of one process, trading through shared memory: the [`Exchange`] the tests
/// run blocks with, and a reference for other transports. Make all ranks with
/// [`Threads::ranks`] and run each on its own thread.
pub struct Threads {
    rank: usize,
    shared: Arc<Shared>,
}

struct Shared {
    barrier: Barrier,
    slots: Mutex<Vec<Vec<u8>>>,
}

impl Threads {
    /// `n` connected ranks, rank `k` at index `k`.
    pub fn ranks(n: usize) -> Vec<Arc<dyn Exchange>> {
        let shared = Arc::new(Shared { barrier: Barrier::new(n), slots: Mutex::new(vec![Vec::new(); n]) });
        (0..n).map(|rank| Arc::new(Self { rank, shared: shared.clone() }) as Arc<dyn Exchange>).collect()
    }

    /// Posts `mine`, waits for every rank, reads with `read`, waits again (so no rank posts the
    /// next before all have read).
    fn trade<T>(&self, mine: &[u8], read: impl FnOnce(&[Vec<u8>]) -> T) -> T {
        self.shared.slots.lock().unwrap_or_else(|e| e.into_inner())[self.rank] = mine.to_vec();
        self.shared.barrier.wait();
        let out = read(&self.shared.slots.lock().unwrap_or_else(|e| e.into_inner()));
        self.shared.barrier.wait();
        out
    }
}

impl Exchange for Threads {
    fn rank(&self) -> usize {
        self.rank
    }

    fn ranks(&self) -> usize {
        self.shared.slots.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Panics where MPI aborts the run: when a rank's length is not the `counts` this rank
    /// gives for it (every rank must know every length before the call).
    fn all_gather(&self, mine: &[u8], counts: &[usize]) -> Vec<u8> {
        self.trade(mine, |slots| {
            let lengths: Vec<usize> = slots.iter().map(Vec::len).collect();
            assert_eq!(lengths, counts, "rank {}: the ranks' lengths are not the counts it expects", self.rank);
            slots.concat()
        })
    }

    fn gather(&self, mine: &[u8], counts: &[usize]) -> Option<Vec<u8>> {
        let all = self.all_gather(mine, counts);
        (self.rank == 0).then_some(all)
    }

    fn scatter(&self, parts: Option<&[Vec<u8>]>) -> Vec<u8> {
        let mine = parts.map(|p| p.concat()).unwrap_or_default();
        let lengths: Vec<u8> =
            parts.map(|p| p.iter().flat_map(|v| (v.len() as u64).to_le_bytes()).collect()).unwrap_or_default();
        self.trade(&[lengths, mine].concat(), |slots| {
            if self.rank == 0 {
                return Vec::new();
            }
            let all = &slots[0];
            let n = slots.len() - 1;
            let len = |k: usize| u64::from_le_bytes(all[k * 8..k * 8 + 8].try_into().unwrap_or_default()) as usize;
            let at = 8 * n + (0..self.rank - 1).map(len).sum::<usize>();
            all[at..at + len(self.rank - 1)].to_vec()
        })
    }

    fn shift(&self, send: &[u8], _to: Option<usize>, recv: &mut [u8], from: Option<usize>) {
        self.trade(send, |slots| {
            if let Some(k) = from {
                recv.copy_from_slice(&slots[k]);
            }
        });
    }
}

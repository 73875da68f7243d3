//! Decoded chunks shared by every reader of one `.cbin`: each chunk inflated once however many
//! threads ask for it at the same time (the others wait for it), the chunks after a sequential
//! read inflated ahead on background threads, the least recently used dropped past a capacity.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use dspk_types::DspResult;

use super::chunk::decode_chunk;
use super::header::CbinHeader;
use crate::mapped::MappedFile;

/// A decoded chunk: its values, time-major.
pub(crate) type Chunk = Arc<Vec<i16>>;

#[derive(Debug)]
enum Slot {
    /// Being inflated by some thread.
    Pending,
    /// Inflated; the tick of its last use.
    Ready(Chunk, u64),
}

#[derive(Debug, Default)]
struct State {
    capacity: usize,
    slots: std::collections::HashMap<usize, Slot>,
    tick: u64,
    /// One past the last chunk read: a read starting at or just before it is sequential.
    next: usize,
}

impl State {
    fn ready_count(&self) -> usize {
        self.slots
            .values()
            .filter(|s| matches!(s, Slot::Ready(..)))
            .count()
    }

    /// Drops the least recently used ready chunks beyond the capacity.
    fn evict(&mut self) {
        while self.ready_count() > self.capacity.max(1) {
            let oldest = self
                .slots
                .iter()
                .filter_map(|(&i, s)| match s {
                    Slot::Ready(_, t) => Some((*t, i)),
                    Slot::Pending => None,
                })
                .min();
            match oldest {
                Some((_, i)) => {
                    self.slots.remove(&i);
                }
                None => break,
            }
        }
    }
}

/// The file, its header and the decoded chunks, shared with background decoders.
#[derive(Debug)]
pub(crate) struct Chunks {
    pub(crate) header: CbinHeader,
    pub(crate) cbin: PathBuf,
    map: MappedFile,
    state: Mutex<State>,
    ready: Condvar,
}

impl Chunks {
    pub(crate) fn new(header: CbinHeader, cbin: PathBuf, map: MappedFile, capacity: usize) -> Self {
        Self {
            header,
            cbin,
            map,
            state: Mutex::new(State {
                capacity,
                ..State::default()
            }),
            ready: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The whole `.cbin`'s bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        self.map.bytes()
    }

    pub(crate) fn capacity(&self) -> usize {
        self.lock().capacity
    }

    pub(crate) fn set_capacity(&self, capacity: usize) {
        let mut s = self.lock();
        s.capacity = capacity;
        if capacity == 0 {
            s.slots.retain(|_, v| matches!(v, Slot::Pending));
        } else {
            s.evict();
        }
    }

    /// Waits until no chunk is being inflated (the read-ahead threads are done with the file).
    pub(crate) fn wait_idle(&self) {
        let mut s = self.lock();
        while s.slots.values().any(|v| matches!(v, Slot::Pending)) {
            s = self.ready.wait(s).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// Chunk `i` inflated now, on this thread.
    pub(crate) fn decode(&self, i: usize) -> DspResult<Chunk> {
        let mut v = Vec::new();
        decode_chunk(&self.header, &self.cbin, self.map.bytes(), i, &mut v)?;
        Ok(Arc::new(v))
    }

    /// Chunks `ids` inflated on up to `threads` scoped threads, without the cache.
    pub(crate) fn decode_many(&self, ids: &[usize], threads: usize) -> Vec<DspResult<Chunk>> {
        let threads = threads.min(ids.len()).max(1);
        if threads == 1 {
            return ids.iter().map(|&i| self.decode(i)).collect();
        }
        let next = AtomicUsize::new(0);
        let slots: Mutex<Vec<Option<DspResult<Chunk>>>> =
            Mutex::new((0..ids.len()).map(|_| None).collect());
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(|| {
                    loop {
                        let k = next.fetch_add(1, Ordering::Relaxed);
                        let Some(&i) = ids.get(k) else { break };
                        let r = self.decode(i);
                        slots.lock().unwrap_or_else(|p| p.into_inner())[k] = Some(r);
                    }
                });
            }
        });
        slots
            .into_inner()
            .unwrap_or_else(|p| p.into_inner())
            .into_iter()
            .map(|s| s.expect("every slot is filled by a worker"))
            .collect()
    }

    /// Puts a decode's outcome in the cache (an error leaves no entry: whoever needs the chunk
    /// decodes it again and gets the error) and wakes the waiters.
    fn finish(&self, i: usize, r: &DspResult<Chunk>) {
        let mut s = self.lock();
        match r {
            Ok(c) if s.capacity > 0 => {
                s.tick += 1;
                let t = s.tick;
                s.slots.insert(i, Slot::Ready(c.clone(), t));
                s.evict();
            }
            _ => {
                s.slots.remove(&i);
            }
        }
        drop(s);
        self.ready.notify_all();
    }

    /// Chunks `first..=last`, from the cache, from another thread's decode, or inflated here
    /// (in parallel on up to `threads` threads). A read that continues the previous one starts
    /// background decodes of the `threads` chunks after it that are not cached.
    pub(crate) fn get(
        self: &Arc<Self>,
        first: usize,
        last: usize,
        threads: usize,
    ) -> DspResult<Vec<Chunk>> {
        let n = last + 1 - first;
        let mut got: Vec<Option<Chunk>> = vec![None; n];
        let mut mine = Vec::new();
        let mut ahead = Vec::new();
        {
            let mut s = self.lock();
            for (k, i) in (first..=last).enumerate() {
                s.tick += 1;
                let t = s.tick;
                match s.slots.get_mut(&i) {
                    Some(Slot::Ready(c, used)) => {
                        *used = t;
                        got[k] = Some(c.clone());
                    }
                    Some(Slot::Pending) => {}
                    None => {
                        mine.push(i);
                        if s.capacity > 0 {
                            s.slots.insert(i, Slot::Pending);
                        }
                    }
                }
            }
            let sequential = first <= s.next && first + 2 >= s.next;
            s.next = s.next.max(last + 1);
            if sequential && s.capacity > n {
                let room = s.capacity - n;
                for i in (last + 1..self.header.chunk_count()).take(threads.min(room)) {
                    if let std::collections::hash_map::Entry::Vacant(e) = s.slots.entry(i) {
                        e.insert(Slot::Pending);
                        ahead.push(i);
                    }
                }
            }
        }
        for i in ahead {
            let me = Arc::clone(self);
            std::thread::spawn(move || {
                let r = me.decode(i);
                me.finish(i, &r);
            });
        }
        let decoded = self.decode_many(&mine, threads);
        let mut error = None;
        for (&i, r) in mine.iter().zip(decoded) {
            self.finish(i, &r);
            match r {
                Ok(c) => got[i - first] = Some(c),
                Err(e) => {
                    error.get_or_insert(e);
                }
            }
        }
        if let Some(e) = error {
            return Err(e);
        }
        // Chunks another thread is inflating: wait for them (or inflate them here where that
        // thread failed or the chunk was dropped again).
        let mut s = self.lock();
        for (k, i) in (first..=last).enumerate() {
            while got[k].is_none() {
                match s.slots.get(&i) {
                    Some(Slot::Ready(c, _)) => got[k] = Some(c.clone()),
                    Some(Slot::Pending) => {
                        s = self.ready.wait(s).unwrap_or_else(|p| p.into_inner());
                    }
                    None => {
                        drop(s);
                        got[k] = Some(self.decode(i)?);
                        s = self.lock();
                    }
                }
            }
        }
        Ok(got
            .into_iter()
            .map(|c| c.expect("every chunk is filled above"))
            .collect())
    }
}

//! The double-buffered window loader: reads window i+1 on a background thread while the
//! caller works on window i.

use std::fmt;
use std::ops::Range;
use std::sync::Mutex;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

use crate::{
    DspError, DspResult, HaloWindow, NoProgress, ProgressEvent, ProgressSink, RecordingSource,
    check_sample_range, pad_channel_major_in_place,
};

/// The stage name of the loader's progress events.
pub const LOADER_STAGE: &str = "windows";

/// Streams windows of a recording to a callback, reading the next window on a background
/// thread while the callback works on the current one.
///
/// Exactly two buffers are in flight, sized for the longest window and reused: host memory is
/// two windows however long the recording, with no allocation per window. The loader keeps the
/// two buffers between runs (a later run whose windows are no longer allocates nothing); drop it to
/// free them. The callback gets the window and its data, channel-major (`channels × read_len`,
/// as [`RecordingSource::read`] writes it). Windows of a schedule built
/// [`with_edge`](crate::ChunkSchedule::with_edge) a padding mode arrive padded
/// (`channels × padded_len`, the owned part at [`HaloWindow::valid_padded`]), filled on the
/// background thread as [`pad_channel_major`](crate::pad_channel_major) does; clamped windows
/// arrive exactly as read.
///
/// The first error, from a read or from the callback, ends the run and is returned; a panic in
/// the callback or in the source's read resumes on the caller's thread. Any list of windows
/// can be streamed: a whole schedule, every n-th window, a few.
///
/// ```
/// # use dspk_types::*;
/// # struct Ramp(RecordingInfo);
/// # impl RecordingSource for Ramp {
/// #     fn info(&self) -> &RecordingInfo { &self.0 }
/// #     fn read(&self, ch: &[usize], s: std::ops::Range<u64>, out: &mut [f32]) -> DspResult<()> {
/// #         let n = check_read(&self.0, ch, &s, out.len())?;
/// #         for (i, &c) in ch.iter().enumerate() {
/// #             for (k, o) in out[i * n..(i + 1) * n].iter_mut().enumerate() {
/// #                 *o = (c * 1000) as f32 + (s.start + k as u64) as f32;
/// #             }
/// #         }
/// #         Ok(())
/// #     }
/// # }
/// # let rate = SampleRate::new(1000.0).unwrap();
/// # let source = Ramp(RecordingInfo::new("ramp", 4, 500, rate, SampleFormat::F32, MemoryOrder::ChannelMajor));
/// let schedule = ChunkSchedule::full_recording(500, 100, 8, 8).unwrap();
/// let loader = WindowLoader::with_channels(&source, vec![3, 1]).unwrap();
/// let mut owned = 0;
/// loader
///     .stream(schedule.windows(), |w, data| {
///         let n = w.read_len();
///         assert_eq!(data.len(), 2 * n);
///         // Channel 3's first owned sample.
///         let v = data[w.valid_local.start];
///         assert_eq!(v, 3000.0 + w.valid_global.start as f32);
///         owned += w.valid_len();
///         Ok(())
///     })
///     .unwrap();
/// assert_eq!(owned, 500);
/// ```
pub struct WindowLoader<'a> {
    source: &'a dyn RecordingSource,
    channels: Vec<usize>,
    progress: &'a dyn ProgressSink,
    /// The buffers of the last run of `stream`/`stream_while`, for the next.
    values: Mutex<Vec<Vec<f32>>>,
    /// The buffers of the last run of `stream_stored`/`stream_stored_while`, for the next.
    bytes: Mutex<Vec<Vec<u8>>>,
}

impl Clone for WindowLoader<'_> {
    /// The same source, channels and progress sink; the clone allocates its own buffers.
    fn clone(&self) -> Self {
        Self {
            source: self.source,
            channels: self.channels.clone(),
            progress: self.progress,
            values: Mutex::default(),
            bytes: Mutex::default(),
        }
    }
}

/// What a buffer holds, and where a loader keeps such buffers between runs.
trait Element: Copy + Default + Send {
    fn pool<'l>(loader: &'l WindowLoader<'_>) -> &'l Mutex<Vec<Vec<Self>>>;
}

impl Element for f32 {
    fn pool<'l>(loader: &'l WindowLoader<'_>) -> &'l Mutex<Vec<Vec<f32>>> {
        &loader.values
    }
}

impl Element for u8 {
    fn pool<'l>(loader: &'l WindowLoader<'_>) -> &'l Mutex<Vec<Vec<u8>>> {
        &loader.bytes
    }
}

impl fmt::Debug for WindowLoader<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WindowLoader")
            .field("source", &self.source.info().name)
            .field("channels", &self.channels)
            .finish_non_exhaustive()
    }
}

/// One filled buffer on its way from the reader to the caller.
struct Filled<T> {
    index: usize,
    buffer: Vec<T>,
    result: DspResult<()>,
}

impl<'a> WindowLoader<'a> {
    /// A loader of every channel of `source`, in order.
    pub fn new(source: &'a dyn RecordingSource) -> Self {
        Self {
            source,
            channels: (0..source.info().channel_count()).collect(),
            progress: &NoProgress,
            values: Mutex::default(),
            bytes: Mutex::default(),
        }
    }

    /// A loader of `channels` of `source`, in that order (repeats allowed). An empty list or a
    /// channel the recording does not have is an error.
    pub fn with_channels(source: &'a dyn RecordingSource, channels: Vec<usize>) -> DspResult<Self> {
        let count = source.info().channel_count();
        if channels.is_empty() {
            return Err(DspError::config(format!(
                "a window loader needs at least one channel ({} has {count})",
                source.info().name
            )));
        }
        if let Some(&bad) = channels.iter().find(|&&c| c >= count) {
            return Err(DspError::InvalidChannel { index: bad, count });
        }
        Ok(Self {
            source,
            channels,
            progress: &NoProgress,
            values: Mutex::default(),
            bytes: Mutex::default(),
        })
    }

    /// Reports each run to `progress`: stage [`LOADER_STAGE`], windows done of the windows
    /// given, unit `"windows"` (once at the start, then after each callback returns).
    pub fn with_progress(mut self, progress: &'a dyn ProgressSink) -> Self {
        self.progress = progress;
        self
    }

    /// The source read from.
    pub fn source(&self) -> &'a dyn RecordingSource {
        self.source
    }

    /// The channels read, in the order of the data handed to the callback.
    pub fn channels(&self) -> &[usize] {
        &self.channels
    }

    /// Scaled values of `windows`, in order: `f(window, data)` with `data` channel-major,
    /// `channels × padded_len` values (`padded_len` is `read_len` for a clamped window).
    /// Returns the first error of a read or of `f`.
    pub fn stream<F>(&self, windows: &[HaloWindow], mut f: F) -> DspResult<()>
    where
        F: FnMut(&HaloWindow, &[f32]) -> DspResult<()>,
    {
        self.stream_while(windows, |w, d| f(w, d).map(|()| true))
            .map(|_| ())
    }

    /// Like [`stream`](Self::stream), but `f` returns whether to go on: `false` stops the run
    /// (at most one window past it has been read). Returns `true` when every window was handed
    /// to `f` and `f` never asked to stop.
    pub fn stream_while<F>(&self, windows: &[HaloWindow], f: F) -> DspResult<bool>
    where
        F: FnMut(&HaloWindow, &[f32]) -> DspResult<bool>,
    {
        self.run(
            windows,
            1,
            |src, ch, samples, out| src.read(ch, samples, out),
            |w, channels, buffer| {
                if w.pad_left == 0 && w.pad_right == 0 {
                    Ok(())
                } else {
                    pad_channel_major_in_place(w, channels, buffer)
                }
            },
            f,
        )
    }

    /// The raw stored values of `windows` ([`RecordingSource::read_stored`]), in order:
    /// `f(window, bytes)` with `bytes` channel-major, little-endian,
    /// `channels × read_len × format.bytes()` bytes.
    ///
    /// Stored values are not padded (padding is defined on scaled values): a window with pads
    /// is a [`DspError::InvalidConfig`], before anything is read.
    pub fn stream_stored<F>(&self, windows: &[HaloWindow], mut f: F) -> DspResult<()>
    where
        F: FnMut(&HaloWindow, &[u8]) -> DspResult<()>,
    {
        self.stream_stored_while(windows, |w, d| f(w, d).map(|()| true))
            .map(|_| ())
    }

    /// Like [`stream_stored`](Self::stream_stored), with early stop as in
    /// [`stream_while`](Self::stream_while).
    pub fn stream_stored_while<F>(&self, windows: &[HaloWindow], f: F) -> DspResult<bool>
    where
        F: FnMut(&HaloWindow, &[u8]) -> DspResult<bool>,
    {
        if let Some(w) = windows.iter().find(|w| w.pad_left > 0 || w.pad_right > 0) {
            return Err(DspError::config(format!(
                "stored values are not padded, but window {} has {} + {} samples of {} padding \
                 (stream scaled values, or stream a clamped schedule)",
                w.index, w.pad_left, w.pad_right, w.edge
            )));
        }
        let unit = self.source.info().format.bytes();
        self.run(
            windows,
            unit,
            |src, ch, samples, out| src.read_stored(ch, samples, out),
            |_, _, _| Ok(()),
            f,
        )
    }

    /// The one core of every stream: `unit` elements of `T` per value, `read` fills the start
    /// of a buffer with a window's read, `pad(window, channels, buffer)` pads it in place.
    fn run<T, R, P, F>(
        &self,
        windows: &[HaloWindow],
        unit: usize,
        read: R,
        pad: P,
        mut f: F,
    ) -> DspResult<bool>
    where
        T: Element,
        R: Fn(&dyn RecordingSource, &[usize], Range<u64>, &mut [T]) -> DspResult<()> + Sync,
        P: Fn(&HaloWindow, usize, &mut [T]) -> DspResult<()> + Sync,
        F: FnMut(&HaloWindow, &[T]) -> DspResult<bool>,
    {
        if windows.is_empty() {
            return Ok(true);
        }
        let per_sample = self.channels.len() * unit;
        let capacity = self.check_windows(windows, per_sample)?;
        let total = windows.len() as u64;
        self.progress
            .report(&ProgressEvent::new(LOADER_STAGE, 0, total, "windows"));

        // Two buffers, or one for a single window, from the last run where it left them.
        let in_flight = windows.len().min(2);
        let mut buffers = std::mem::take(&mut *lock(T::pool(self)));
        buffers.truncate(in_flight);
        buffers.resize_with(in_flight, Vec::new);
        for b in &mut buffers {
            if b.len() < capacity {
                b.resize(capacity, T::default());
            }
        }

        let (outcome, kept) = std::thread::scope(|scope| {
            let (empty_tx, empty_rx) = sync_channel::<Vec<T>>(2);
            let (filled_tx, filled_rx) = sync_channel::<Filled<T>>(2);
            for b in buffers {
                empty_tx
                    .send(b)
                    .expect("the receiver is alive and the channel holds two buffers");
            }
            let source = self.source;
            let channels = &self.channels;
            let read = &read;
            let pad = &pad;
            let reader = scope.spawn(move || {
                read_windows(
                    source, channels, windows, per_sample, read, pad, empty_rx, filled_tx,
                )
            });
            // `consume` owns the sending end of the empty buffers: it is dropped when `consume`
            // returns or unwinds, which ends the reader at its next wait (it never waits to
            // send: the filled channel has room for both buffers).
            let (done, mut kept) = self.consume(windows, per_sample, &filled_rx, empty_tx, &mut f);
            if let Err(payload) = reader.join() {
                std::panic::resume_unwind(payload);
            }
            // A window read past an early stop or an error.
            kept.extend(filled_rx.try_iter().map(|filled| filled.buffer));
            (done, kept)
        });
        *lock(T::pool(self)) = kept;
        outcome
    }

    /// Checks that every window lies in the recording and that its pads suit its mode;
    /// returns the elements of the longest buffer.
    fn check_windows(&self, windows: &[HaloWindow], per_sample: usize) -> DspResult<usize> {
        let total = self.source.info().samples;
        let mut longest = 0usize;
        for w in windows {
            let read = check_sample_range(&w.read_global, total)?;
            if let Some(problem) = w.edge.pad_problem(read, w.pad_left, w.pad_right) {
                return Err(DspError::config(format!("window {}: {problem}", w.index)));
            }
            let padded = w
                .pad_left
                .checked_add(read)
                .and_then(|n| n.checked_add(w.pad_right))
                .ok_or_else(|| {
                    DspError::Overflow(format!(
                        "window {} of {} + {read} + {} samples",
                        w.index, w.pad_left, w.pad_right
                    ))
                })?;
            longest = longest.max(padded);
        }
        longest.checked_mul(per_sample).ok_or_else(|| {
            DspError::Overflow(format!(
                "a window buffer of {longest} samples × {per_sample} elements"
            ))
        })
    }

    /// The caller's side: hand each filled buffer to `f` in order, then give it back.
    fn consume<T, F>(
        &self,
        windows: &[HaloWindow],
        per_sample: usize,
        filled: &Receiver<Filled<T>>,
        empty: SyncSender<Vec<T>>,
        f: &mut F,
    ) -> (DspResult<bool>, Vec<Vec<T>>)
    where
        F: FnMut(&HaloWindow, &[T]) -> DspResult<bool>,
    {
        let total = windows.len() as u64;
        // Buffers back from the reader's last windows, for the next run.
        let mut kept = Vec::with_capacity(2);
        for (i, window) in windows.iter().enumerate() {
            // A closed channel means the reader stopped early: it panicked (the join in `run`
            // resumes the panic) or hit an error it already sent.
            let Ok(Filled {
                index,
                buffer,
                result,
            }) = filled.recv()
            else {
                let stopped = DspError::Io {
                    message: format!("the window reader stopped before window {i} of {total}"),
                    path: None,
                };
                return (Err(stopped), kept);
            };
            debug_assert_eq!(index, i, "windows arrive in order");
            if let Err(e) = result {
                kept.push(buffer);
                return (Err(e), kept);
            }
            let len = window.padded_len() * per_sample;
            match f(window, &buffer[..len]) {
                Ok(true) => {}
                stop => {
                    kept.push(buffer);
                    return (stop, kept);
                }
            }
            if i + 2 < windows.len() {
                // The reader fills it with window i + 2.
                let _ = empty.send(buffer);
            } else {
                kept.push(buffer);
            }
            self.progress.report(&ProgressEvent::new(
                LOADER_STAGE,
                i as u64 + 1,
                total,
                "windows",
            ));
        }
        (Ok(true), kept)
    }
}

/// Locks a buffer pool; a pool poisoned by a panic elsewhere is still a list of buffers.
fn lock<T>(pool: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    pool.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The reader's side: fill each window into the next empty buffer (read, then padded) and
/// send it on. Stops at the first read error (after sending it) or when the caller hangs up.
#[expect(
    clippy::too_many_arguments,
    reason = "the two ends of the two channels and what fills a buffer, named at one call"
)]
fn read_windows<T, R, P>(
    source: &dyn RecordingSource,
    channels: &[usize],
    windows: &[HaloWindow],
    per_sample: usize,
    read: &R,
    pad: &P,
    empty: Receiver<Vec<T>>,
    filled: SyncSender<Filled<T>>,
) where
    R: Fn(&dyn RecordingSource, &[usize], Range<u64>, &mut [T]) -> DspResult<()>,
    P: Fn(&HaloWindow, usize, &mut [T]) -> DspResult<()>,
{
    for (index, window) in windows.iter().enumerate() {
        let Ok(mut buffer) = empty.recv() else {
            return;
        };
        let len = window.read_len() * per_sample;
        let result = read(
            source,
            channels,
            window.read_global.clone(),
            &mut buffer[..len],
        )
        .and_then(|()| {
            pad(
                window,
                channels.len(),
                &mut buffer[..window.padded_len() * per_sample],
            )
        });
        let failed = result.is_err();
        if filled
            .send(Filled {
                index,
                buffer,
                result,
            })
            .is_err()
            || failed
        {
            return;
        }
    }
}

#[cfg(test)]
#[path = "tests/loader.rs"]
mod tests;

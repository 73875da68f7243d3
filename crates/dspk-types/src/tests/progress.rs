//! Tests of progress events, sinks and numbered stages.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use super::*;

/// A stand-in for library code: reports `n` steps of `stage` and returns how many it did.
fn work(sink: &dyn ProgressSink, stage: &str, n: u64) -> u64 {
    let mut done = 0;
    for i in 1..=n {
        done += 1;
        sink.report(&ProgressEvent::new(stage, i, n, "windows"));
    }
    done
}

#[test]
fn closures_are_sinks() {
    let seen = Mutex::new(Vec::new());
    let sink = |e: &ProgressEvent| seen.lock().unwrap().push(e.clone());
    assert_eq!(work(&sink, "scan", 3), 3);
    let seen = seen.into_inner().unwrap();
    assert_eq!(seen.len(), 3);
    for (i, e) in seen.iter().enumerate() {
        assert_eq!(e.stage, "scan");
        assert_eq!((e.step, e.steps), (0, 0));
        assert_eq!((e.done, e.total, e.unit), (i as u64 + 1, 3, "windows"));
    }
}

#[test]
fn no_progress_takes_every_event() {
    assert_eq!(work(&NoProgress, "scan", 17), 17);
    let boxed: Box<dyn ProgressSink> = Box::new(NoProgress);
    assert_eq!(work(boxed.as_ref(), "write", 5), 5);
}

#[test]
fn sinks_are_shared_across_threads() {
    let sum = AtomicU64::new(0);
    let count = AtomicU64::new(0);
    let sink = |e: &ProgressEvent| {
        sum.fetch_add(e.done, Ordering::Relaxed);
        count.fetch_add(1, Ordering::Relaxed);
    };
    let threads = 4u64;
    let n = 100u64;
    std::thread::scope(|s| {
        for t in 0..threads {
            let sink = &sink;
            s.spawn(move || work(sink, &format!("thread {t}"), n));
        }
    });
    assert_eq!(count.load(Ordering::Relaxed), threads * n);
    assert_eq!(sum.load(Ordering::Relaxed), threads * n * (n + 1) / 2);
}

#[test]
fn stages_number_their_events() {
    let seen = Mutex::new(Vec::new());
    let sink = |e: &ProgressEvent| seen.lock().unwrap().push(e.clone());
    let stages = Stages::new(&sink, 3);
    assert_eq!(stages.steps(), 3);
    stages.report(1, ProgressEvent::new("read", 5, 10, "windows"));
    assert_eq!(work(&stages.stage(2), "decode", 2), 2);
    stages
        .stage(3)
        .report(&ProgressEvent::new("write", 7, 0, "bytes"));
    let got: Vec<_> = seen
        .into_inner()
        .unwrap()
        .into_iter()
        .map(|e| (e.stage, e.step, e.steps, e.done, e.total, e.unit))
        .collect();
    assert_eq!(
        got,
        vec![
            ("read".to_string(), 1, 3, 5, 10, "windows"),
            ("decode".to_string(), 2, 3, 1, 2, "windows"),
            ("decode".to_string(), 2, 3, 2, 2, "windows"),
            ("write".to_string(), 3, 3, 7, 0, "bytes"),
        ]
    );
}

#[test]
fn fraction() {
    assert_eq!(ProgressEvent::new("x", 5, 0, "b").fraction(), None);
    let half = ProgressEvent::new("x", 3, 6, "b").fraction().unwrap();
    assert!((half - 0.5).abs() < 1e-12);
    assert_eq!(ProgressEvent::new("x", 9, 6, "b").fraction(), Some(1.0));
    assert_eq!(ProgressEvent::new("x", 0, 6, "b").fraction(), Some(0.0));
}

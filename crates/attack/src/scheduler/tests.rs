//! The scheduler loop on a clock moved by hand, with a hand that only
//! records: every mode's schedule, stop and give-back, in no real time.

use std::sync::{
    atomic::{AtomicU64, Ordering},
    Arc,
};

use barrage_model::{Rate, Target};

use super::*;
use crate::{clock::TICK, tickets::Tickets, Pacer, StopReason, Stopper};

/// A clock moved by hand: a sleep jumps it to the wake-up time, or to
/// `stop_at` (then stopping the attack) when that comes first.
struct FakeClock {
    now: Arc<AtomicU64>,
    stop_at: Option<(u64, Stopper)>,
    lane: u64,
    lanes: u64,
}

impl FakeClock {
    fn jump(&mut self, to: u64) {
        if let Some((at, stopper)) = &self.stop_at {
            if to > *at {
                self.now.store(*at, Ordering::SeqCst);
                stopper.stop();
                return;
            }
        }
        if to > self.now.load(Ordering::SeqCst) {
            self.now.store(to, Ordering::SeqCst);
        }
    }
}

impl Waits for FakeClock {
    fn now(&self) -> u64 {
        self.now.load(Ordering::SeqCst)
    }

    async fn until(&mut self, offset: u64) {
        self.jump(offset);
    }

    async fn tick_after(&mut self, offset: u64) {
        let tick = TICK.as_nanos() as u64;
        let j = offset.div_ceil(tick);
        let j = j + (self.lane + self.lanes - j % self.lanes) % self.lanes;
        self.jump(j * tick);
    }
}

/// Records what it is handed: (seq, due offset, the clock then).
struct Recorder {
    now: Arc<AtomicU64>,
    sent: Vec<(u64, Option<u64>, u64)>,
    /// Refuses (as a slot wait cut by the stop) the request with this seq.
    refuse: Option<u64>,
    flushes: usize,
}

impl Hand for Recorder {
    async fn send(&mut self, seq: u64, _: Arc<PreparedTarget>, offset: Option<u64>) -> bool {
        if self.refuse == Some(seq) {
            return false;
        }
        self.sent
            .push((seq, offset, self.now.load(Ordering::SeqCst)));
        true
    }

    async fn flush(&mut self) {
        self.flushes += 1;
    }
}

struct Setup {
    tickets: Tickets,
    clock: FakeClock,
    hand: Recorder,
    stopper: Stopper,
}

fn setup(rate: &str, requests: u64) -> Setup {
    let now = Arc::new(AtomicU64::new(0));
    let stopper = Stopper::new();
    let target = Target {
        method: "GET".into(),
        url: "http://127.0.0.1:1/".into(),
        ..Target::default()
    };
    let rate: Rate = rate.parse().unwrap();
    let read = now.clone();
    let tickets = Tickets::fixed(
        vec![Arc::new(PreparedTarget::new(target).unwrap())],
        Pacer::new(rate, None, Some(requests)),
        Arc::new(move || read.load(Ordering::SeqCst)),
        stopper.clone(),
    );
    Setup {
        tickets,
        clock: FakeClock {
            now: now.clone(),
            stop_at: None,
            lane: 0,
            lanes: 1,
        },
        hand: Recorder {
            now,
            sent: Vec::new(),
            refuse: None,
            flushes: 0,
        },
        stopper,
    }
}

fn run(s: &mut Setup, take: Take) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(drive(&s.tickets, take, &mut s.clock, &mut s.hand));
}

#[test]
fn open_model_sends_each_request_when_due() {
    let mut s = setup("1000", 10);
    run(&mut s, Take::Due);
    let want: Vec<(u64, Option<u64>, u64)> = (0..10)
        .map(|i| (i, Some(i * 1_000_000), i * 1_000_000))
        .collect();
    assert_eq!(s.hand.sent, want);
    assert_eq!(s.tickets.finish(), (10, StopReason::Done, None));
}

#[test]
fn ticks_send_every_request_due_by_the_tick() {
    // 20,000/s: a request every 50 µs, six per 300 µs tick.
    let mut s = setup("20000", 100);
    run(&mut s, Take::Ticks);
    assert_eq!(s.hand.sent.len(), 100);
    let tick = TICK.as_nanos() as u64;
    for (i, (seq, offset, at)) in s.hand.sent.iter().enumerate() {
        assert_eq!(*seq, i as u64);
        let offset = offset.unwrap();
        assert_eq!(offset, i as u64 * 50_000);
        assert!(
            *at >= offset && *at - offset < tick,
            "seq {seq} sent at {at}"
        );
    }
    assert!(
        s.hand.flushes >= 100 * 50_000 / tick as usize,
        "flushed before sleeps"
    );
    assert_eq!(s.tickets.finish(), (100, StopReason::Done, None));
}

#[test]
fn closed_model_sends_at_once() {
    let mut s = setup("infinity", 5);
    run(&mut s, Take::Now);
    let seqs: Vec<(u64, Option<u64>)> = s.hand.sent.iter().map(|(q, o, _)| (*q, *o)).collect();
    assert_eq!(
        seqs,
        [(0, None), (1, None), (2, None), (3, None), (4, None)]
    );
    assert_eq!(s.tickets.finish(), (5, StopReason::Done, None));
}

#[test]
fn a_stop_during_a_sleep_sends_only_what_was_due() {
    // 1,000/s; the stop comes at 2.5 ms, while waiting for the request
    // due at 3 ms: 0, 1, 2 go out, 3 is given back, nothing after.
    for take in [Take::Due, Take::Ticks] {
        let mut s = setup("1000", 100);
        s.clock.stop_at = Some((2_500_000, s.stopper.clone()));
        run(&mut s, take);
        let seqs: Vec<u64> = s.hand.sent.iter().map(|(q, _, _)| *q).collect();
        assert_eq!(seqs, [0, 1, 2], "{take:?}");
        assert_eq!(
            s.tickets.finish(),
            (3, StopReason::Stopped, None),
            "{take:?}"
        );
    }
}

#[test]
fn a_request_the_hand_refuses_is_given_back() {
    let mut s = setup("1000", 10);
    s.hand.refuse = Some(4);
    run(&mut s, Take::Due);
    let seqs: Vec<u64> = s.hand.sent.iter().map(|(q, _, _)| *q).collect();
    assert_eq!(seqs, [0, 1, 2, 3]);
    assert_eq!(s.tickets.finish().0, 4, "the refused ticket is not counted");
}

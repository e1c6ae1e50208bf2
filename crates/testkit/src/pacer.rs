//! A precise clock for scripted streams. tokio's timer rounds a deadline
//! up to its next millisecond and fires when the runtime gets to it: a
//! stream's events came 2 ms late alone, and up to 20 ms late with other
//! tests' servers busy in the same process. One thread here sleeps to
//! each deadline (a futex's timeout: tens of µs) and hands the piece to
//! the body that is waiting for it.

use std::{
    cmp::Reverse,
    collections::{BinaryHeap, HashMap, VecDeque},
    sync::{
        mpsc::{self, RecvTimeoutError},
        Mutex, OnceLock,
    },
    thread,
    time::{Duration, Instant},
};

use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};

/// One script on the pacer: when its next piece is due, and giving it.
trait Job: Send {
    fn due(&self) -> Option<Instant>;
    /// Gives the next piece; false once its receiver is gone.
    fn give(&mut self) -> bool;
}

struct Script<T> {
    start: Instant,
    pieces: VecDeque<(Duration, T)>,
    tx: UnboundedSender<T>,
}

impl<T: Send> Job for Script<T> {
    fn due(&self) -> Option<Instant> {
        self.pieces.front().map(|(at, _)| self.start + *at)
    }

    fn give(&mut self) -> bool {
        match self.pieces.pop_front() {
            Some((_, item)) => self.tx.send(item).is_ok(),
            None => false,
        }
    }
}

fn pacer() -> &'static Mutex<mpsc::Sender<Box<dyn Job>>> {
    static PACER: OnceLock<Mutex<mpsc::Sender<Box<dyn Job>>>> = OnceLock::new();
    PACER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<Box<dyn Job>>();
        thread::Builder::new()
            .name("testkit-pacer".into())
            .spawn(move || run(rx))
            .expect("the pacer thread");
        Mutex::new(tx)
    })
}

/// Each `(at, item)` of `script` (in order of `at`), `at` after now, on
/// the returned receiver. The pieces stop when the receiver is dropped.
pub(crate) fn pace<T: Send + 'static>(script: Vec<(Duration, T)>) -> UnboundedReceiver<T> {
    let (tx, rx) = unbounded_channel();
    let job = Script {
        start: Instant::now(),
        pieces: script.into(),
        tx,
    };
    if job.due().is_some() {
        let _ = pacer().lock().expect("pacer").send(Box::new(job));
    }
    rx
}

fn run(rx: mpsc::Receiver<Box<dyn Job>>) {
    let mut due: BinaryHeap<Reverse<(Instant, u64)>> = BinaryHeap::new();
    let mut jobs: HashMap<u64, Box<dyn Job>> = HashMap::new();
    let mut next_id = 0u64;
    loop {
        let now = Instant::now();
        while let Some(&Reverse((at, id))) = due.peek() {
            if at > now {
                break;
            }
            due.pop();
            let Some(job) = jobs.get_mut(&id) else {
                continue;
            };
            // Pieces due together go out together, in their order.
            let mut open = true;
            while open && job.due().is_some_and(|at| at <= now) {
                open = job.give();
            }
            match job.due() {
                Some(at) if open => due.push(Reverse((at, id))),
                _ => {
                    jobs.remove(&id);
                }
            }
        }
        let wait = due
            .peek()
            .map(|&Reverse((at, _))| at.saturating_duration_since(Instant::now()));
        let job = match wait {
            Some(wait) => match rx.recv_timeout(wait) {
                Ok(job) => job,
                Err(RecvTimeoutError::Timeout) => continue,
                Err(RecvTimeoutError::Disconnected) => return,
            },
            None => match rx.recv() {
                Ok(job) => job,
                Err(_) => return,
            },
        };
        if let Some(at) = job.due() {
            due.push(Reverse((at, next_id)));
            jobs.insert(next_id, job);
            next_id += 1;
        }
    }
}

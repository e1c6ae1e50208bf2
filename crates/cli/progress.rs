//! `attack`'s live progress on stderr: a line redrawn 4 times a second on
//! a terminal, or (`-progress` on a pipe) one plain line a second; and,
//! whatever is shown, a word once barrage stops (what it waits for) or
//! falls behind its schedule. The figures are what the writer thread
//! tallies as it writes (`barrage_report::progress`) and the tickets'
//! count of requests sent: the request path does nothing for them.

use std::{
    io::{IsTerminal, Write},
    sync::{
        atomic::{AtomicBool, Ordering},
        Arc,
    },
    thread,
    time::{Duration, Instant},
};

use barrage_attack::{Stopper, Watch};
use barrage_model::duration;
use barrage_report::progress::{Board, Figures, Total};

/// Lag p99 over the last second above which barrage says it is behind.
const BEHIND: Duration = Duration::from_millis(10);

/// How progress is shown.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Show {
    Terminal,
    Lines,
    Off,
}

/// The display thread, until [`Display::finish`].
pub struct Display {
    done: Arc<AtomicBool>,
    thread: Option<thread::JoinHandle<()>>,
}

/// What the display reads and says.
pub struct Inputs {
    pub board: Arc<Board>,
    pub watch: Watch,
    pub stopper: Stopper,
    pub total: Total,
    pub timeout: Option<Duration>,
}

impl Display {
    /// Starts the display: `flag` is `-progress` (`None`: on a terminal
    /// only).
    pub fn start(flag: Option<bool>, inputs: Inputs) -> Display {
        let terminal = std::io::stderr().is_terminal();
        let show = match (flag, terminal) {
            (Some(false), _) => Show::Off,
            (_, true) => Show::Terminal,
            (Some(true), false) => Show::Lines,
            (None, false) => Show::Off,
        };
        let done = Arc::new(AtomicBool::new(false));
        let thread = {
            let done = done.clone();
            thread::Builder::new()
                .name("barrage-progress".into())
                .spawn(move || show_until(show, &inputs, &done))
                .ok()
        };
        Display { done, thread }
    }

    /// Draws the last line and ends the thread.
    pub fn finish(mut self) {
        self.done.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
    }
}

fn show_until(show: Show, i: &Inputs, done: &AtomicBool) {
    // Stops and lag are looked at 4 times a second; a plain line is
    // printed every 4th time.
    let every = Duration::from_millis(250);
    let mut ticks = 0u64;
    let start = Instant::now();
    let mut sent_at: std::collections::VecDeque<(Instant, u64)> = Default::default();
    let (mut said_stopping, mut said_behind, mut drawn) = (false, false, false);
    let mut err = std::io::stderr();
    loop {
        thread::park_timeout(every);
        ticks += 1;
        let finished = done.load(Ordering::SeqCst);
        let now = Instant::now();
        let sent = i.watch.sent();
        sent_at.push_back((now, sent));
        while sent_at.len() > 2 && now.duration_since(sent_at[1].0) >= Duration::from_secs(1) {
            sent_at.pop_front();
        }
        let rate = match sent_at.front() {
            Some(&(at, n)) if sent_at.len() > 1 && now > at => {
                (sent - n) as f64 / now.duration_since(at).as_secs_f64()
            }
            _ => sent as f64 / now.duration_since(start).as_secs_f64().max(1e-3),
        };
        let (written, ok, errors, recent) = i.board.read();
        let in_flight = sent.saturating_sub(written);
        let clear = |err: &mut std::io::Stderr, drawn: bool| {
            if drawn {
                let _ = write!(err, "\r\x1b[2K");
            }
        };
        if i.stopper.is_stopped() && !said_stopping && !finished {
            said_stopping = true;
            clear(&mut err, drawn && show == Show::Terminal);
            let wait = i.timeout.map_or("until they finish".into(), |t| {
                format!("up to {}", duration::format(t.as_nanos() as i64))
            });
            let _ = writeln!(
                err,
                "barrage attack: stopping: {in_flight} requests in flight, waiting {wait} (Ctrl-C again to quit)"
            );
        }
        if let Some((_, _, lag)) = recent.filter(|r| r.2 > BEHIND.as_nanos() as u64) {
            if !said_behind {
                said_behind = true;
                clear(&mut err, drawn && show == Show::Terminal);
                let _ = writeln!(
                    err,
                    "barrage attack: behind schedule: requests went out up to {} late (lag p99 over the last second); barrage cannot keep this rate here (its CPU, -max-workers), and each record's scheduled and timestamp say by how much",
                    duration::format(duration::round_for_report(lag as i64))
                );
            }
        }
        let figures = Figures {
            elapsed: now.duration_since(start),
            total: i.total,
            sent,
            rate,
            in_flight,
            written,
            ok,
            errors,
            recent,
            behind_at: BEHIND,
        };
        match show {
            Show::Terminal => {
                let _ = write!(err, "\r\x1b[2K{}", figures.line(true));
                drawn = true;
            }
            Show::Lines if ticks.is_multiple_of(4) || finished => {
                let _ = writeln!(err, "{}", figures.line(false));
            }
            Show::Lines => {}
            Show::Off => {}
        }
        if finished {
            if drawn {
                let _ = writeln!(err);
            }
            return;
        }
    }
}

//! `-timeout` on an `-io ring` thread: one queue of deadlines per thread
//! and one sleep of monoio's timer for the earliest of them, rather than a
//! timer per request. monoio's `Sleep` is 640 bytes (its entry is padded
//! to a cache line pair), held by every request while it waits: a fifth of
//! the 3.2 KiB a held connection cost on `-io ring`. A request's deadline
//! here is a slab entry and a place in the queue.
//!
//! Every request of a thread has the same `-timeout`, so deadlines come in
//! the order requests start: the queue is first in, first out. A request
//! that ends leaves its slab entry at once; its place in the queue is
//! dropped when it reaches the front (the watcher sleeps until the first
//! request still waiting, not once per request that ended) or when the
//! queue is compacted (once it holds twice the requests waiting), so the
//! queue stays within twice what is in flight.

use std::{
    cell::{Cell, RefCell},
    collections::VecDeque,
    future::Future,
    pin::Pin,
    rc::Rc,
    task::{Context, Poll, Waker},
    time::{Duration, Instant},
};

use slab::Slab;

/// A request's deadline: whether it passed, who waits for it, and which
/// request it is (a key freed and taken again is not the same request).
struct Entry {
    passed: bool,
    waker: Option<Waker>,
    generation: u64,
}

/// The deadlines of one thread's requests, each `every` after its start.
pub(crate) struct Deadlines {
    every: Duration,
    entries: RefCell<Slab<Entry>>,
    /// Deadlines in order, each with its entry's key and generation.
    queue: RefCell<VecDeque<(Instant, usize, u64)>>,
    next_generation: Cell<u64>,
    /// Whether the thread's watcher task runs.
    watching: Cell<bool>,
}

/// A request's hold on its deadline: its entry goes when this is dropped.
struct Held {
    all: Rc<Deadlines>,
    key: usize,
}

impl Drop for Held {
    fn drop(&mut self) {
        self.all.entries.borrow_mut().remove(self.key);
    }
}

pin_project_lite::pin_project! {
    /// [`Deadlines::within`]'s future.
    pub(crate) struct Within<F> {
        #[pin]
        work: F,
        held: Held,
    }
}

impl<F: Future> Future for Within<F> {
    type Output = Option<F::Output>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        if let Poll::Ready(v) = this.work.poll(cx) {
            return Poll::Ready(Some(v));
        }
        let mut entries = this.held.all.entries.borrow_mut();
        let entry = &mut entries[this.held.key];
        if entry.passed {
            return Poll::Ready(None);
        }
        match &entry.waker {
            Some(w) if w.will_wake(cx.waker()) => {}
            _ => entry.waker = Some(cx.waker().clone()),
        }
        Poll::Pending
    }
}

impl Deadlines {
    /// Deadlines `every` after each request starts.
    pub(crate) fn new(every: Duration) -> Rc<Self> {
        Rc::new(Deadlines {
            every,
            entries: RefCell::new(Slab::new()),
            queue: RefCell::new(VecDeque::new()),
            next_generation: Cell::new(0),
            watching: Cell::new(false),
        })
    }

    /// `work`'s outcome, or `None` once its deadline passed first (`work`
    /// is then dropped). A future of its own rather than an async fn,
    /// which kept `work` twice (its argument and its pinned local: 1,632
    /// bytes around a 784-byte exchange).
    pub(crate) fn within<F: Future>(self: &Rc<Self>, work: F) -> Within<F> {
        Within {
            work,
            held: self.hold(),
        }
    }

    /// A new entry, its deadline queued; the watcher started if it sleeps.
    fn hold(self: &Rc<Self>) -> Held {
        let generation = self.next_generation.get();
        self.next_generation.set(generation + 1);
        let key = self.entries.borrow_mut().insert(Entry {
            passed: false,
            waker: None,
            generation,
        });
        let mut queue = self.queue.borrow_mut();
        queue.push_back((Instant::now() + self.every, key, generation));
        if queue.len() > 64 && queue.len() > 2 * self.entries.borrow().len() {
            self.compact(&mut queue);
        }
        drop(queue);
        if !self.watching.replace(true) {
            monoio::spawn(self.clone().watch());
        }
        Held {
            all: self.clone(),
            key,
        }
    }

    /// Whether the queue's place `(key, generation)` is a request still
    /// waiting.
    fn live(&self, key: usize, generation: u64) -> bool {
        self.entries
            .borrow()
            .get(key)
            .is_some_and(|e| e.generation == generation)
    }

    /// Drops the places of requests that ended.
    fn compact(&self, queue: &mut VecDeque<(Instant, usize, u64)>) {
        queue.retain(|&(_, key, generation)| self.live(key, generation));
    }

    /// Wakes each request whose deadline passed, sleeping until the next;
    /// ends when none waits.
    async fn watch(self: Rc<Self>) {
        loop {
            let now = Instant::now();
            let next = loop {
                let front = self.queue.borrow().front().copied();
                match front {
                    None => break None,
                    // A request that ended: its place goes whatever its
                    // deadline (else the watcher would wake for each).
                    Some((_, key, generation)) if !self.live(key, generation) => {
                        self.queue.borrow_mut().pop_front();
                    }
                    Some((at, _, _)) if at > now => break Some(at),
                    Some((_, key, _)) => {
                        self.queue.borrow_mut().pop_front();
                        let waker = {
                            let mut entries = self.entries.borrow_mut();
                            entries[key].passed = true;
                            entries[key].waker.take()
                        };
                        if let Some(w) = waker {
                            w.wake();
                        }
                    }
                }
            };
            match next {
                Some(at) => monoio::time::sleep(at - now).await,
                None => {
                    self.watching.set(false);
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `f` on a ring thread's runtime (with no io_uring here, not run).
    fn on_ring<F: Future<Output = ()>>(f: F) {
        let rt = monoio::RuntimeBuilder::<monoio::IoUringDriver>::new()
            .enable_timer()
            .build();
        if let Ok(mut rt) = rt {
            rt.block_on(f);
        }
    }

    #[test]
    fn a_deadline_passes_work_that_waits_and_not_work_that_ends() {
        on_ring(async {
            let d = Deadlines::new(Duration::from_millis(20));
            assert_eq!(d.within(async { 7 }).await, Some(7));
            let began = Instant::now();
            assert_eq!(d.within(std::future::pending::<()>()).await, None);
            assert!(began.elapsed() >= Duration::from_millis(20));
            // Work that ends leaves its entry, and the queue keeps within
            // twice what waits.
            for i in 0..1000 {
                assert_eq!(d.within(async { i }).await, Some(i));
            }
            assert_eq!(d.entries.borrow().len(), 0);
            assert!(d.queue.borrow().len() <= 65, "{}", d.queue.borrow().len());
            // Past the first deadline, the watcher drops every place of
            // a request that ended and stops.
            monoio::time::sleep(Duration::from_millis(40)).await;
            assert_eq!(d.queue.borrow().len(), 0);
            assert!(!d.watching.get());
        });
    }
}

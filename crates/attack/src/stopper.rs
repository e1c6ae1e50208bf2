use std::{
    sync::{
        atomic::{AtomicBool, Ordering},
        Arc, Condvar, Mutex,
    },
    time::Instant,
};

use tokio::sync::Notify;

/// A handle that ends an attack gracefully from anywhere (a signal thread,
/// the writer when output fails): no new requests, in-flight ones finish.
#[derive(Clone, Default)]
pub struct Stopper {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    stopped: AtomicBool,
    /// Stopped by a signal (not a closed output or the end of the
    /// targets): the progress line says so.
    signalled: AtomicBool,
    /// Stopped because the run's answer is sure (`-until`).
    met: AtomicBool,
    /// Signals received, all told.
    signals: std::sync::atomic::AtomicUsize,
    abandoned: AtomicBool,
    /// When it first fired.
    stopped_at: std::sync::OnceLock<Instant>,
    lock: Mutex<()>,
    wake: Condvar,
    notify: Notify,
    abandon: Notify,
    /// Stoppers that stop (and are abandoned) with this one.
    children: Mutex<Vec<std::sync::Weak<Inner>>>,
    /// Set up, not yet started ([`Stopper::setting_up`]): what a first
    /// signal also calls.
    setup: Mutex<Option<fn()>>,
}

impl Stopper {
    /// A stopper that has not fired.
    pub fn new() -> Self {
        Self::default()
    }

    /// A stopper of its own that also fires when this one does (and is
    /// abandoned with it): a sweep's step, which `-step-until` may end
    /// alone while a Ctrl-C ends them all.
    pub fn child(&self) -> Stopper {
        let child = Stopper::new();
        let mut children = self
            .inner
            .children
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        children.retain(|c| c.strong_count() > 0);
        children.push(Arc::downgrade(&child.inner));
        drop(children);
        if self.is_abandoned() {
            child.abandon();
        } else if self.is_stopped() {
            child.stop();
        }
        child
    }

    /// The children alive now.
    fn children(&self) -> Vec<Stopper> {
        let children = self
            .inner
            .children
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let alive = children.iter().filter_map(std::sync::Weak::upgrade);
        alive.map(|inner| Stopper { inner }).collect()
    }

    /// Fires: the attack schedules nothing more.
    pub fn stop(&self) {
        let _ = self.inner.stopped_at.set(Instant::now());
        self.inner.stopped.store(true, Ordering::SeqCst);
        {
            let _guard = self.inner.lock.lock();
            self.inner.wake.notify_all();
            self.inner.notify.notify_waiters();
        }
        self.children().iter().for_each(Stopper::stop);
    }

    /// Fires because the run's answer is sure (`-until`): in-flight
    /// requests finish, and the attack ends as done, not interrupted.
    pub fn met(&self) {
        self.inner.met.store(true, Ordering::SeqCst);
        self.stop();
    }

    /// Whether [`Stopper::met`] fired it.
    pub fn is_met(&self) -> bool {
        self.inner.met.load(Ordering::SeqCst)
    }

    /// Fires harder (a second Ctrl-C): requests in flight are dropped
    /// unanswered. What has finished is still written; the attack's report
    /// says how many were abandoned ([`crate::StopReason::Abandoned`]).
    pub fn abandon(&self) {
        self.inner.abandoned.store(true, Ordering::SeqCst);
        self.inner.abandon.notify_waiters();
        self.children().iter().for_each(Stopper::abandon);
        self.stop();
    }

    /// Whether [`Stopper::abandon`] was called.
    pub fn is_abandoned(&self) -> bool {
        self.inner.abandoned.load(Ordering::SeqCst)
    }

    /// Resolves when abandoned (immediately if already).
    pub async fn abandoned(&self) {
        until(&self.inner.abandon, &self.inner.abandoned).await
    }

    /// Stops on the first SIGINT or SIGTERM and abandons on the second, on
    /// a thread of its own; `third` is called on any after that (the CLI
    /// exits there). While [`Stopper::setting_up`], a second quits at
    /// once (`third`): nothing is in flight, and the setup may be blocked
    /// (reading targets from a terminal).
    pub fn on_signals(&self, third: fn()) {
        use signal_hook::consts::{SIGINT, SIGTERM};
        let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) else {
            return;
        };
        let stopper = self.clone();
        let _ = std::thread::Builder::new()
            .name("barrage-signals".into())
            .spawn(move || {
                for (n, _) in signals.forever().enumerate() {
                    stopper.inner.signals.fetch_add(1, Ordering::SeqCst);
                    let early = *stopper
                        .inner
                        .setup
                        .lock()
                        .unwrap_or_else(|p| p.into_inner());
                    match n {
                        0 => {
                            stopper.inner.signalled.store(true, Ordering::SeqCst);
                            stopper.stop();
                            if let Some(said) = early {
                                said();
                            }
                        }
                        1 if early.is_some() => third(),
                        1 => stopper.abandon(),
                        _ => third(),
                    }
                }
            });
    }

    /// A stopper catching signals from now on ([`Stopper::on_signals`]),
    /// in its setup ([`Stopper::setting_up`] with `early`) until
    /// [`Stopper::set_up`].
    pub fn catching(early: fn(), third: fn()) -> Stopper {
        let stopper = Stopper::new();
        stopper.setting_up(early);
        stopper.on_signals(third);
        stopper
    }

    /// Marks the time before the run starts (flags read, targets read,
    /// output opened), with signals already caught: a first signal then
    /// stops the run before its first request (it starts stopped, and
    /// leaves a stream with no record) and calls `said` (the CLI says
    /// so); a second quits. Ends at [`Stopper::set_up`].
    pub fn setting_up(&self, said: fn()) {
        *self.inner.setup.lock().unwrap_or_else(|p| p.into_inner()) = Some(said);
    }

    /// The run starts: signals stop and abandon it as they do a running
    /// one.
    pub fn set_up(&self) {
        *self.inner.setup.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    /// Whether a signal (Ctrl-C, SIGTERM) stopped it.
    pub fn is_signalled(&self) -> bool {
        self.inner.signalled.load(Ordering::SeqCst)
    }

    /// How many signals [`Stopper::on_signals`] has received: a wait
    /// after the attack (on a collector) ends at the next one.
    pub fn signals(&self) -> usize {
        self.inner.signals.load(Ordering::SeqCst)
    }

    /// When it first fired, once it has.
    pub fn stopped_at(&self) -> Option<Instant> {
        self.inner.stopped_at.get().copied()
    }

    /// Whether it has fired.
    pub fn is_stopped(&self) -> bool {
        self.inner.stopped.load(Ordering::SeqCst)
    }

    /// Sleeps until `deadline` (precise to the OS timer, tens of µs) or
    /// until stopped; returns false when stopped.
    pub fn sleep_until(&self, deadline: Instant) -> bool {
        let mut guard = match self.inner.lock.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        loop {
            if self.is_stopped() {
                return false;
            }
            let now = Instant::now();
            if now >= deadline {
                return true;
            }
            guard = match self.inner.wake.wait_timeout(guard, deadline - now) {
                Ok((g, _)) => g,
                Err(p) => p.into_inner().0,
            };
        }
    }

    /// Resolves when stopped (immediately if already).
    pub async fn stopped(&self) {
        until(&self.inner.notify, &self.inner.stopped).await
    }
}

/// Resolves once `flag` is set (its setter then wakes `notify`'s
/// waiters): registered before the flag is read, so a wake-up between the
/// two is not lost.
async fn until(notify: &Notify, flag: &AtomicBool) {
    let notified = notify.notified();
    tokio::pin!(notified);
    notified.as_mut().enable();
    if flag.load(Ordering::SeqCst) {
        return;
    }
    notified.await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_stops_alone_or_with_its_parent() {
        let parent = Stopper::new();
        let step = parent.child();
        step.met();
        assert!(step.is_stopped() && step.is_met());
        assert!(!parent.is_stopped(), "a step's end is not the sweep's");
        let next = parent.child();
        parent.stop();
        assert!(next.is_stopped() && !next.is_met());
        // Made after the stop: stopped at once; abandoned with it.
        let late = parent.child();
        assert!(late.is_stopped() && !late.is_abandoned());
        parent.abandon();
        assert!(late.is_abandoned() && next.is_abandoned());
        assert!(parent.child().is_abandoned());
    }
}

//! A server thread that loops until its owner is dropped.

use std::{
    sync::{
        atomic::{AtomicBool, Ordering},
        Arc,
    },
    thread,
};

/// Runs `body` on a thread with a stop flag it checks between steps; the
/// flag is raised and the thread joined when this is dropped.
pub(crate) struct Stoppable {
    stop: Arc<AtomicBool>,
    thread: Option<thread::JoinHandle<()>>,
}

impl Stoppable {
    pub(crate) fn spawn(body: impl FnOnce(Arc<AtomicBool>) + Send + 'static) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        Stoppable {
            stop,
            thread: Some(thread::spawn(move || body(flag))),
        }
    }
}

impl Drop for Stoppable {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

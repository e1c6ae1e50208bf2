//! `barrage serve`: `barrage_serve::target` on the flags' address.

use crate::failed::{Failed, Outcome};
use barrage_flags::ServeArgs;
use barrage_serve::target::{self, ServeError};

pub fn run(args: ServeArgs) -> Outcome {
    let addr = args.addr;
    let options = target::Options {
        body: args.body.into(),
        delay: args.delay,
        capacity: args.capacity,
        queue: args.queue,
    };
    target::run(addr, options, |bound| {
        eprintln!("barrage serve: listening on http://{bound}/");
    })
    .map_err(|e| match e {
        ServeError::NotLoopback(_) => Failed::usage(e),
        ServeError::Io(e) => Failed::io(format!("{addr}: {e}")),
    })
}

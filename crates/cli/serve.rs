//! `barrage serve`: `barrage_serve::target` on the flags' address.

use crate::{
    failed::{Failed, Outcome},
    flags::ServeArgs,
};
use barrage_serve::target::{self, ServeError};

pub fn run(args: ServeArgs) -> Outcome {
    let addr = args.addr;
    target::run(addr, args.body.into(), args.delay, || {
        eprintln!("barrage serve: listening on http://{addr}/");
    })
    .map_err(|e| match e {
        ServeError::NotLoopback(_) => Failed::usage(e),
        ServeError::Io(e) => Failed::io(format!("{addr}: {e}")),
    })
}

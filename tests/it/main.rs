//! barrage's end-to-end tests, one binary (each links the whole product
//! once): a module per area, the helpers in `common` (shared with
//! `tests/matrix.rs`, which stays a binary of its own: its cells load
//! both cores for a minute). Tests that time what they see take
//! [`common::one_at_a_time`].

#[path = "../common/mod.rs"]
mod common;

mod attack;
mod collect;
mod compare;
mod connections;
mod deploy;
mod docs;
mod export;
mod first_run;
mod flow;
mod fuzz_seeds;
mod grpc;
mod h1;
mod html;
mod http3;
mod io;
mod pages;
mod plot;
mod progress;
mod prom;
mod proxy;
mod reliability;
mod report;
mod report_types;
mod request_inputs;
mod streams;
mod sweep;
mod traffic;
mod ws;

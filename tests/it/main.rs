//! barrage's end-to-end tests, one binary (each links the whole product
//! once): a module per area, the helpers in `common`. What a busy
//! neighbour would upset has a binary of its own, as binaries run one
//! after another: `tests/matrix.rs` (its cells load both cores for a
//! minute) and the tests that time what they see (`compare.rs`,
//! `connections.rs`, `streams.rs`, `sweep.rs`: a compare's verdict over
//! 20 seeds called a change when chromium rendered a page beside it).

#[path = "../common/mod.rs"]
mod common;

mod attack;
mod collect;
mod control;
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
mod llm_inputs;
mod pages;
mod plot;
mod progress;
mod prom;
mod proxy;
mod reliability;
mod report;
mod report_types;
mod request_inputs;
mod ring;
mod scrape;
mod traffic;
mod ws;

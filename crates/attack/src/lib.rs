//! barrage-attack: sends requests on an absolute schedule and turns every
//! scheduled request into exactly one [`Hit`].
//!
//! - [`Pacer`]: a pure function from a request's sequence number to when it is
//!   due (or that the attack is over), from `-rate`, `-duration`, `-requests`.
//! - [`Attack`]: starts the worker threads (`-cpus`, each a
//!   single-threaded tokio runtime with its own connections) and a writer
//!   thread that hands every `Hit` to a [`HitSink`] and flushes it at least
//!   every 100 ms.
//! - One scheduler loop (`scheduler::drive`) for every mode: numbered
//!   tickets (`tickets::Tickets`, the only source of sequence numbers,
//!   targets and due times) are taken as the mode says (at once in the
//!   closed model; each sleeping until due up to one request per 300 µs
//!   tick; by tick above that; on a pacer thread for `-lazy` and
//!   `-max-workers`) and handed to where they are sent (`hands`).
//!   Stopping (end of the schedule, [`Stopper::stop`], a failed sink)
//!   issues no more tickets and waits for the ones in flight, so nothing
//!   scheduled goes unrecorded.
//! - How each request goes is `barrage-client`'s: the scheduler hands a
//!   due request to a [`Client`](barrage_client::Client) and gets its response back.
//!
//! The attacker does not know the stream format: the CLI plugs an encoder in
//! as the sink.
//!
//! ```no_run
//! use barrage_attack::{Attack, AttackConfig, Targets, Stopper};
//! use barrage_client::ClientConfig;
//! use barrage_model::{Hit, Target};
//! struct Count(u64);
//! impl barrage_attack::HitSink for Count {
//!     fn write(&mut self, _: &Hit) -> std::io::Result<()> { self.0 += 1; Ok(()) }
//!     fn flush(&mut self) -> std::io::Result<()> { Ok(()) }
//! }
//! let target = Target { method: "GET".into(), url: "http://127.0.0.1:8080/".into(), ..Target::default() };
//! let config = AttackConfig { requests: Some(10), ..AttackConfig::default() };
//! let attack = Attack::new(config, ClientConfig::default()).unwrap();
//! let report = attack.run(Targets::fixed(vec![target]).unwrap(), Box::new(Count(0)), Stopper::new()).unwrap();
//! assert_eq!(report.scheduled, 10);
//! ```
#![deny(missing_docs)]

mod alarm;
mod attack;
mod audit;
mod clock;
mod config;
mod control;
mod flow_plan;
mod hands;
mod hold;
mod hold_run;
mod limits;
pub mod load;
mod outcome;
mod pacer;
mod ring;
mod scheduler;
mod scrape;
mod session;
mod shard;
mod source;
mod steering;
mod stopper;
mod tickets;
mod timeslice;
mod watch;
mod workers;
mod writer;
mod writer_thread;

pub use attack::Attack;
pub use barrage_model::sink::{Discard, HitSink};
pub use barrage_model::{Arrivals, Hit, Rate, Target};
pub use config::{AttackConfig, DEFAULT_GRACE, DEFAULT_WORKERS};
pub use control::Control;
pub use flow_plan::{FlowPlan, PlanStep, Render, ThinkTime};
pub use hold::{Hold, NotHoldable};
pub use limits::{open_files_warning, raise_open_files_limit};
pub use outcome::{AttackError, AttackReport, StopReason, LATE_GRACE_NS};
pub use pacer::{Due, Pacer, POISSON_WALK};
pub use scrape::{ScrapeSpec, MAX_SERIES};
pub use shard::{ShardError, ShardSpec, SHARD_COUNT_VAR, SHARD_INDEX_VAR};
pub use source::{Group, SourceError, TargetSource, Targets};
pub use steering::{ControlError, Steering};
pub use stopper::Stopper;
pub use watch::Watch;
pub use writer::FLUSH_INTERVAL;

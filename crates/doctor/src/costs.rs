//! What an attack costs this host besides its connections, and what
//! Linux holds after they close: the figures the walls are set against.

/// Descriptors a process uses besides its connections (standard streams,
/// epoll and the runtime's threads, the output file, DNS sockets).
pub const BASE_DESCRIPTORS: u64 = 64;

/// barrage's memory per open connection, bytes: 1.68–1.95 KiB measured
/// holding 18,000 connections (docs/guide/host.md, "Sizing"), rounded up.
pub const BYTES_PER_CONNECTION: u64 = 2 * 1024;

/// barrage's memory besides its connections, bytes (about 10 MiB).
pub const BASE_BYTES: u64 = 10 << 20;

/// The open-model rate one core carries with room to spare (docs/guide/host.md,
/// "Sizing": 93,000–109,000/s measured at 20,000/s; plan 40,000).
pub const RATE_PER_CORE: f64 = 40_000.0;

/// How long a closed TCP connection's port stays in TIME_WAIT on Linux
/// (`TCP_TIMEWAIT_LEN`, fixed at build time).
pub const TIME_WAIT_SECS: u64 = 60;

/// How long conntrack keeps a closed connection's entry
/// (`nf_conntrack_tcp_timeout_time_wait`'s default).
pub const CONNTRACK_TIME_WAIT_SECS: u64 = 120;

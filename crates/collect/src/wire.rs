//! The collect protocol, on one TCP (or TLS) connection per attacker.
//!
//! ```text
//! attacker -> collector   BARRAGE-COLLECT/1\n
//!                         origin: 32 hex digits, the same on every reconnect\n
//!                         shard: i/n (or -)\n
//!                         label: who is sending (host, attack)\n
//!                         clock: the sender's wall clock, unix ns\n
//!                         token: the shared token\n
//!                         \n
//! collector -> attacker   ok BYTES\n       the bytes of this origin's stream it
//!                                          already holds (whole frames): the
//!                                          sender resends from there
//!                    or   refused WHY\n    and the connection closes
//! attacker -> collector   the result stream's bytes from BYTES on, as its
//!                         file holds them (header, then frames), and at its
//!                         end 0xFFFFFFFF in a frame length's place
//! collector -> attacker   stop WHY\n       at any time: stop as on Ctrl-C
//!                         control AT WHAT\n  a live control order (`collect
//!                                          -control`): WHAT (`rate 3000/1s`,
//!                                          `pause`) from schedule time AT,
//!                                          unix ns
//!                         done BYTES\n     after the end: everything is held
//! ```
//!
//! The collector keeps each origin's decoder across connections and takes
//! only whole frames, so a resend from `BYTES` neither loses nor repeats a
//! record.

use std::io::{self, Read};

/// What a sender's hello or stream, or a collector's address, does wrong.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    /// Its first bytes are not the hello's.
    #[error("not a barrage sender (no BARRAGE-COLLECT/1 hello)")]
    NotSender,
    /// A hello line without `key: value`.
    #[error("bad hello line {0:?}")]
    HelloLine(String),
    /// `shard:` not `i/n` with i < n.
    #[error("bad shard {0:?}")]
    Shard(String),
    /// `clock:` not a number.
    #[error("bad clock")]
    Clock,
    /// `origin:` not 32 hex digits.
    #[error("bad origin")]
    Origin,
    /// Past [`MAX_HELLO`] bytes without a blank line.
    #[error("hello too long")]
    HelloTooLong,
    /// The connection ended first.
    #[error("closed before its hello")]
    ClosedBeforeHello,
    /// The read failed (or waited out its deadline).
    #[error("reading its hello: {0}")]
    Reading(io::Error),
    /// The hello is not UTF-8.
    #[error("hello not UTF-8")]
    NotUtf8,
    /// The stream's first bytes are not a result stream's header.
    #[error("not a barrage result stream")]
    NotStream,
    /// A frame length past what a sender may send.
    #[error("a frame of {len} bytes at byte {at}: not a result stream")]
    Frame {
        /// The length read.
        len: u32,
        /// Where, in the bytes given.
        at: usize,
    },
    /// `-output`/`send`'s address is not `tcp://HOST:PORT` or `tls://HOST:PORT`.
    #[error("{0}: want tcp://HOST:PORT or tls://HOST:PORT")]
    Address(String),
}

/// The hello's first line.
pub const HELLO: &str = "BARRAGE-COLLECT/1";

/// How long a sender has for its whole hello.
pub const HELLO_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Connections the collector serves at once; more are closed as they come.
pub const MAX_CONNECTIONS: usize = 256;

/// The largest frame the collector takes from a sender, bytes: an
/// attack's frames are a flush's records (100 ms of them), far below it.
pub const MAX_SENDER_FRAME: u32 = 16 << 20;

/// Longest hello the collector reads, bytes.
pub const MAX_HELLO: usize = 4096;

/// In a frame length's place: the stream is complete.
pub const END: [u8; 4] = [0xFF; 4];

/// Where an attacker's stream stands in the schedule, and who it is.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Hello {
    /// Random, kept across reconnects: the key of the stream.
    pub origin: String,
    /// `-shard i/n`.
    pub shard: Option<(u64, u64)>,
    /// Who is sending, for messages.
    pub label: String,
    /// The sender's wall clock when it said hello, unix nanoseconds.
    pub clock: i64,
    /// The shared token.
    pub token: String,
}

impl Hello {
    /// The hello as sent.
    pub fn encode(&self) -> Vec<u8> {
        let shard = match self.shard {
            Some((i, n)) => format!("{i}/{n}"),
            None => "-".into(),
        };
        format!(
            "{HELLO}\norigin: {}\nshard: {shard}\nlabel: {}\nclock: {}\ntoken: {}\n\n",
            self.origin,
            one_line(&self.label),
            self.clock,
            self.token
        )
        .into_bytes()
    }

    /// Reads a hello, byte by byte (nothing past its blank line is taken
    /// from `input`).
    pub fn read(input: &mut impl Read) -> Result<Hello, WireError> {
        let text = read_until_blank(input)?;
        let mut lines = text.lines();
        if lines.next() != Some(HELLO) {
            return Err(WireError::NotSender);
        }
        let mut hello = Hello::default();
        for line in lines.filter(|l| !l.is_empty()) {
            let Some((key, value)) = line.split_once(": ") else {
                return Err(WireError::HelloLine(line.to_string()));
            };
            match key {
                "origin" => hello.origin = value.to_string(),
                "shard" if value == "-" => {}
                "shard" => {
                    let bad = || WireError::Shard(value.to_string());
                    let (i, n) = value.split_once('/').ok_or_else(bad)?;
                    let (i, n) = (i.parse().map_err(|_| bad())?, n.parse().map_err(|_| bad())?);
                    if i >= n {
                        return Err(bad());
                    }
                    hello.shard = Some((i, n));
                }
                "label" => hello.label = value.to_string(),
                "clock" => hello.clock = value.parse().map_err(|_| WireError::Clock)?,
                "token" => hello.token = value.to_string(),
                _ => {}
            }
        }
        if hello.origin.len() != 32 || !hello.origin.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(WireError::Origin);
        }
        Ok(hello)
    }
}

/// A fresh origin: 128 random bits in hex.
pub fn new_origin() -> String {
    format!("{:016x}{:016x}", fastrand::u64(..), fastrand::u64(..))
}

pub use barrage_model::time::now_ns;

/// A label or reason on one line.
pub fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(200)
        .collect()
}

/// Whether two tokens are equal, in time that does not depend on where
/// they first differ.
pub fn same_token(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut diff = (a.len() != b.len()) as u8;
    for i in 0..a.len().max(b.len()) {
        diff |= a.get(i).copied().unwrap_or(0) ^ b.get(i).copied().unwrap_or(0);
    }
    diff == 0
}

fn read_until_blank(input: &mut impl Read) -> Result<String, WireError> {
    let mut bytes = Vec::with_capacity(256);
    let mut one = [0u8; 1];
    let first = format!("{HELLO}\n");
    while !bytes.ends_with(b"\n\n") {
        if bytes.len() >= MAX_HELLO {
            return Err(WireError::HelloTooLong);
        }
        // Refused at the first byte off the hello's first line (an HTTP
        // request waited 5 s for a blank line before).
        if bytes.len() <= first.len() && !first.as_bytes().starts_with(&bytes) {
            return Err(WireError::NotSender);
        }
        match input.read(&mut one) {
            Ok(0) => return Err(WireError::ClosedBeforeHello),
            Ok(_) => bytes.push(one[0]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(WireError::Reading(e)),
        }
    }
    String::from_utf8(bytes).map_err(|_| WireError::NotUtf8)
}

/// A reply line, parsed.
#[derive(Debug, PartialEq, Eq)]
pub enum Reply {
    /// `ok BYTES`.
    Ok(u64),
    /// `refused WHY`.
    Refused(String),
    /// `stop WHY`.
    Stop(String),
    /// `done BYTES`.
    Done(u64),
    /// `control AT WHAT`.
    Control(i64, String),
}

impl Reply {
    /// Parses one line (without its newline).
    pub fn parse(line: &str) -> Option<Reply> {
        let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
        match word {
            "ok" => rest.parse().ok().map(Reply::Ok),
            "done" => rest.parse().ok().map(Reply::Done),
            "refused" => Some(Reply::Refused(rest.to_string())),
            "stop" => Some(Reply::Stop(rest.to_string())),
            "control" => {
                let (at, what) = rest.split_once(' ')?;
                Some(Reply::Control(at.parse().ok()?, what.to_string()))
            }
            _ => None,
        }
    }

    /// The line as sent.
    pub fn encode(&self) -> Vec<u8> {
        match self {
            Reply::Ok(n) => format!("ok {n}\n"),
            Reply::Done(n) => format!("done {n}\n"),
            Reply::Refused(w) => format!("refused {}\n", one_line(w)),
            Reply::Stop(w) => format!("stop {}\n", one_line(w)),
            Reply::Control(at, w) => format!("control {at} {}\n", one_line(w)),
        }
        .into_bytes()
    }
}

/// How much of `bytes`, which begin at a unit's start (the stream's
/// 6-byte header when `start`, else a frame), is whole units: the length
/// of that prefix, and whether [`END`] follows it. A frame length past
/// [`barrage_stream::MAX_FRAME`] (other than [`END`]) is an error.
pub fn whole(bytes: &[u8], start: bool) -> Result<(usize, bool), WireError> {
    let mut at = 0;
    if start {
        if bytes.len() < 6 {
            return Ok((0, false));
        }
        if bytes[..4] != barrage_stream::MAGIC {
            return Err(WireError::NotStream);
        }
        at = 6;
    }
    while bytes.len() >= at + 4 {
        let len: [u8; 4] = bytes[at..at + 4].try_into().expect("4 bytes");
        if len == END {
            return Ok((at, true));
        }
        // Another stream's header where a frame would start (`cat a.bin
        // b.bin | barrage send`): a unit of its own, as the decoder reads
        // joined streams.
        if len == barrage_stream::MAGIC {
            if bytes.len() < at + 6 {
                break;
            }
            at += 6;
            continue;
        }
        let len = u32::from_le_bytes(len);
        if len > MAX_SENDER_FRAME {
            return Err(WireError::Frame { len, at });
        }
        let end = at + 8 + len as usize;
        if bytes.len() < end {
            break;
        }
        at = end;
    }
    Ok((at, false))
}

/// Lines gathered from reads that may stop anywhere.
#[derive(Default)]
pub struct Lines {
    pending: Vec<u8>,
}

impl Lines {
    /// Adds bytes; returns the complete lines among what is held.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<String> {
        self.pending.extend_from_slice(bytes);
        let mut out = Vec::new();
        while let Some(at) = self.pending.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.pending.drain(..=at).collect();
            out.push(String::from_utf8_lossy(&line[..at]).into_owned());
        }
        if self.pending.len() > MAX_HELLO {
            self.pending.clear();
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hello_round_trip() {
        let h = Hello {
            origin: new_origin(),
            shard: Some((1, 3)),
            label: "load1 attack a\nb".into(),
            clock: 1_700_000_000_000_000_000,
            token: "s3cret".into(),
        };
        let bytes = h.encode();
        let mut input = &bytes[..];
        let back = Hello::read(&mut input).unwrap();
        assert_eq!(back.label, "load1 attack a b");
        assert_eq!(
            (back.shard, back.clock, &back.token[..]),
            (h.shard, h.clock, "s3cret")
        );
        assert!(input.is_empty());
        assert!(Hello::read(&mut &b"GET / HTTP/1.1\r\n\r\n"[..]).is_err());
        assert!(Hello::read(&mut &b"BARRAGE-COLLECT/1\norigin: 12\n\n"[..]).is_err());
    }

    #[test]
    fn whole_units() {
        let mut enc = barrage_stream::Encoder::new(Vec::new()).unwrap();
        enc.write(&barrage_model::Hit {
            seq: 1,
            ..Default::default()
        })
        .unwrap();
        enc.flush().unwrap();
        enc.write(&barrage_model::Hit {
            seq: 2,
            ..Default::default()
        })
        .unwrap();
        let mut bytes = enc.finish().unwrap();
        let (all, end) = whole(&bytes, true).unwrap();
        assert_eq!((all, end), (bytes.len(), false));
        for cut in 0..bytes.len() {
            let (n, _) = whole(&bytes[..cut], true).unwrap();
            assert!(n <= cut && (n == 0 || n == 6 || n < all));
        }
        bytes.extend_from_slice(&END);
        bytes.extend_from_slice(b"junk");
        assert_eq!(whole(&bytes, true).unwrap(), (all, true));
        assert_eq!(whole(&bytes[6..], false).unwrap(), (all - 6, true));
        assert!(whole(b"GET / HTTP/1.1", true).is_err());
        // Two streams joined (`cat a.bin b.bin`): the second's header is a
        // unit, and a cut inside it waits for the rest.
        let one = bytes[..all].to_vec();
        let joined = [one.clone(), one.clone()].concat();
        assert_eq!(whole(&joined, true).unwrap(), (2 * all, false));
        assert_eq!(whole(&joined[..all + 3], true).unwrap(), (all, false));
        assert_eq!(whole(&joined[..all + 6], true).unwrap(), (all + 6, false));
    }

    #[test]
    fn replies_and_lines() {
        for r in [
            Reply::Ok(6),
            Reply::Done(99),
            Reply::Stop("-fail-on: p99>1s".into()),
            Reply::Control(1_700_000_000_500_000_000, "stages 10s:100,1m:100".into()),
        ] {
            let mut lines = Lines::default();
            let bytes = r.encode();
            assert!(lines.push(&bytes[..2]).is_empty());
            let got = lines.push(&bytes[2..]);
            assert_eq!(Reply::parse(&got[0]), Some(r));
        }
        assert!(same_token("abc", "abc"));
        assert!(!same_token("abc", "abd") && !same_token("abc", "abcd") && !same_token("", "a"));
    }
}

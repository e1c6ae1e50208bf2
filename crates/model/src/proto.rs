//! [`Proto`]: the HTTP version a record's request went over.

/// The protocol a request went over, as a record keeps it (`dump -dumper
/// json`'s `"proto"`, `report -by proto`). Unknown for records from
/// vegeta's formats, from streams before barrage kept it, and for
/// requests that failed before a connection said which.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Proto {
    /// Not known.
    #[default]
    Unknown,
    /// HTTP/1.1 (and WebSocket, upgraded from it).
    Http1,
    /// HTTP/2 (and gRPC over it).
    Http2,
    /// HTTP/3 over QUIC.
    Http3,
}

impl Proto {
    /// Its name: `HTTP/1.1`, `HTTP/2`, `HTTP/3` (empty when unknown).
    pub fn as_str(self) -> &'static str {
        match self {
            Proto::Unknown => "",
            Proto::Http1 => "HTTP/1.1",
            Proto::Http2 => "HTTP/2",
            Proto::Http3 => "HTTP/3",
        }
    }

    /// The one named `name` (as [`Proto::as_str`] writes it).
    pub fn from_name(name: &str) -> Option<Proto> {
        match name {
            "" => Some(Proto::Unknown),
            "HTTP/1.1" => Some(Proto::Http1),
            "HTTP/2" => Some(Proto::Http2),
            "HTTP/3" => Some(Proto::Http3),
            _ => None,
        }
    }

    /// Its number in the binary stream.
    pub fn code(self) -> u8 {
        self as u8
    }

    /// The one numbered `code` in the binary stream.
    pub fn from_code(code: u64) -> Option<Proto> {
        [Proto::Unknown, Proto::Http1, Proto::Http2, Proto::Http3]
            .get(usize::try_from(code).ok()?)
            .copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_codes_go_both_ways() {
        for p in [Proto::Unknown, Proto::Http1, Proto::Http2, Proto::Http3] {
            assert_eq!(Proto::from_name(p.as_str()), Some(p));
            assert_eq!(Proto::from_code(p.code() as u64), Some(p));
        }
        assert_eq!(Proto::from_code(4), None);
        assert_eq!(Proto::from_name("HTTP/0.9"), None);
    }
}

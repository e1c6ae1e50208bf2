//! RFC 6455's close codes: which may go on the wire, the code a client
//! answers a server's close with, their words, and the record's words for
//! a connection the server closed or broke.

/// What ended a read: the words of the record's error.
pub(crate) type Broken = String;

/// RFC 6455's close codes: 1002 protocol error, 1007 invalid payload
/// data, 1009 message too big.
pub(super) const PROTOCOL_ERROR: u16 = 1002;
pub(super) const INVALID_DATA: u16 = 1007;
pub(super) const TOO_BIG: u16 = 1009;

/// Whether `code` may be sent in a close frame (RFC 6455 §7.4: 1005,
/// 1006 and 1015 are for reporting only; 1016–2999 are not assigned).
pub(super) fn sendable(code: u16) -> bool {
    matches!(code, 1000..=1003 | 1007..=1014 | 3000..=4999)
}

/// The code a client answers a server's close frame with: its own code
/// when that is valid, 1002 for a code that may not be sent or a 1-byte
/// payload, 1007 for a reason that is not UTF-8, 1000 for no code.
pub(super) fn close_reply(payload: &[u8]) -> u16 {
    match payload {
        [] => 1000,
        [_] => PROTOCOL_ERROR,
        [a, b, reason @ ..] => {
            let code = u16::from_be_bytes([*a, *b]);
            if !sendable(code) {
                PROTOCOL_ERROR
            } else if std::str::from_utf8(reason).is_err() {
                INVALID_DATA
            } else {
                code
            }
        }
    }
}

/// `websocket: closed by server (1011 internal error)`, with the close
/// frame's reason when it gives one.
pub(crate) fn closed(payload: &[u8]) -> String {
    if payload.is_empty() {
        return "websocket: closed by server (1005 no status)".into();
    }
    if payload.len() < 2 {
        return protocol("a close frame of 1 byte");
    }
    let code = u16::from_be_bytes([payload[0], payload[1]]);
    if !sendable(code) {
        return protocol(format_args!(
            "the server closed with {code} ({}), a code not allowed on the wire",
            close_words(code)
        ));
    }
    // RFC 6455 allows 123 bytes; a server that sends more is cut.
    let reason = barrage_model::words::cut(
        &String::from_utf8_lossy(&payload[2..payload.len().min(2 + MAX_CLOSE_REASON + 4)]),
        MAX_CLOSE_REASON,
        payload.len() > 2 + MAX_CLOSE_REASON,
    );
    if reason.is_empty() {
        format!("websocket: closed by server ({code} {})", close_words(code))
    } else {
        format!("websocket: closed by server ({code} {reason})")
    }
}

/// The longest close reason RFC 6455 allows (a control frame's 125 bytes
/// less the code's 2).
pub(super) const MAX_CLOSE_REASON: usize = 123;

/// A close code's words, as RFC 6455 §7.4.1 names them.
pub(super) fn close_words(code: u16) -> &'static str {
    match code {
        1000 => "normal closure",
        1001 => "going away",
        1002 => "protocol error",
        1003 => "unsupported data",
        1005 => "no status",
        1006 => "abnormal closure",
        1007 => "invalid payload data",
        1008 => "policy violation",
        1009 => "message too big",
        1010 => "mandatory extension",
        1011 => "internal error",
        1012 => "service restart",
        1013 => "try again later",
        1015 => "TLS handshake",
        _ => "unknown close code",
    }
}

pub(super) fn eof() -> Broken {
    "websocket: connection closed by server (EOF)".into()
}

pub(super) fn protocol(what: impl std::fmt::Display) -> Broken {
    format!("websocket: protocol error: {what}")
}

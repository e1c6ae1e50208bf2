//! [`Utf8`]: a text message checked as UTF-8 piece by piece, across
//! fragments, so that it need not be kept whole to be checked (RFC 6455
//! §8.1: text that is not UTF-8 fails the connection with 1007).

/// A UTF-8 check fed piece by piece: a text message's bytes are checked
/// as they come, so that one need not be kept to be checked.
#[derive(Default)]
pub(super) struct Utf8 {
    /// The start of a character cut by the end of the last piece.
    carry: [u8; 4],
    n: usize,
}

impl Utf8 {
    /// False once the bytes so far cannot be UTF-8.
    pub(super) fn feed(&mut self, mut bytes: &[u8]) -> bool {
        while self.n > 0 && !bytes.is_empty() {
            self.carry[self.n] = bytes[0];
            self.n += 1;
            bytes = &bytes[1..];
            match std::str::from_utf8(&self.carry[..self.n]) {
                Ok(_) => self.n = 0,
                Err(e) if e.error_len().is_some() || self.n == 4 => return false,
                Err(_) => {}
            }
        }
        match std::str::from_utf8(bytes) {
            Ok(_) => true,
            Err(e) if e.error_len().is_some() => false,
            Err(e) => {
                let tail = &bytes[e.valid_up_to()..];
                self.carry[..tail.len()].copy_from_slice(tail);
                self.n = tail.len();
                true
            }
        }
    }

    /// Whether the message ended on a whole character.
    pub(super) fn whole(&self) -> bool {
        self.n == 0
    }
}

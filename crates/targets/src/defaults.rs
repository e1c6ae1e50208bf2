//! [`Defaults`]: what `-header` and `-body` give every target, for every
//! target format's reader.

use bytes::Bytes;

/// What `-header` and `-body` give every target.
#[derive(Debug, Clone, Default)]
pub struct Defaults {
    /// Headers placed before each target's own.
    pub headers: Vec<(String, String)>,
    /// Body for targets without one.
    pub body: Bytes,
}

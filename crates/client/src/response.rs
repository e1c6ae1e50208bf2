//! [`Response`]: what came back for one request, whichever protocol
//! carried it.

/// What came back for one hit.
#[derive(Debug, Default)]
pub struct Response {
    /// Status code.
    pub code: u16,
    /// Body bytes received.
    pub bytes_in: u64,
    /// Body bytes kept (`-max-body`).
    pub body: Vec<u8>,
    /// Headers (with `-keep-headers`).
    pub headers: Vec<(String, String)>,
    /// Set when the body broke off after the status arrived.
    pub error: Option<String>,
    /// When the final response's head (status and headers) arrived.
    pub head_at: Option<std::time::Instant>,
    /// When its last byte was read, where the engine notes it (barrage's
    /// HTTP/1.1 engine); `None`: when the caller got it.
    pub end_at: Option<std::time::Instant>,
    /// The status line as the server wrote it ("503 Backend Down"), where
    /// the engine keeps it (barrage's HTTP/1.1 engine).
    pub status: Option<String>,
}

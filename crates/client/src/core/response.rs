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
    /// The HTTP version it came over.
    pub proto: barrage_model::Proto,
    /// The connection it came over, and what opening it cost (the client
    /// fills it in; `None` where no connection was measured).
    pub link: Option<crate::Via>,
    /// `-stream`: its events, stamped from the instant given.
    pub events: Option<Box<(std::time::Instant, crate::core::observe::Taped)>>,
}

/// A response read by any protocol's exchange, with what following it
/// needs; `C`: the connection it gives back, where its protocol gives one
/// back (an HTTP/1.1 connection carries one request at a time), else
/// [`std::convert::Infallible`].
pub(crate) struct Answer<C> {
    pub(crate) code: u16,
    /// A 3xx's `Location`.
    pub(crate) location: Option<Vec<u8>>,
    pub(crate) response: Response,
    /// Its connection, to give back.
    pub(crate) conn: Option<C>,
}

impl<C> Answer<C> {
    /// The same answer, its connection made a `D`.
    pub(crate) fn map_conn<D>(self, f: impl FnOnce(C) -> D) -> Answer<D> {
        Answer {
            code: self.code,
            location: self.location,
            response: self.response,
            conn: self.conn.map(f),
        }
    }
}

impl Answer<std::convert::Infallible> {
    /// An answer whose protocol gives no connection back, as any `D`'s.
    pub(crate) fn none_back<D>(self) -> Answer<D> {
        self.map_conn(|never| match never {})
    }
}

/// What one exchange on a connection came to.
pub(crate) enum Step<C> {
    /// A kept connection the server had closed while it was idle, before
    /// any of the answer came: send again on another, as Go does.
    Again,
    /// The request's record, as it is (a failure, or a body broken off).
    Done(Result<Response, crate::Failure>),
    /// A whole answer, with its connection to give back.
    Answer(Answer<C>),
}

impl<C> Step<C> {
    /// The same step, its connection made a `D`.
    pub(crate) fn map_conn<D>(self, f: impl FnOnce(C) -> D) -> Step<D> {
        match self {
            Step::Again => Step::Again,
            Step::Done(r) => Step::Done(r),
            Step::Answer(a) => Step::Answer(a.map_conn(f)),
        }
    }
}

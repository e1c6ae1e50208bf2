//! barrage's own HTTP/1.1 engine: requests encoded once per target
//! ([`wire`]), responses framed by a pure reader on `httparse`
//! ([`framer`]), connections that hold no buffer while they wait
//! ([`conn`]); the same framer on monoio's io_uring runtime for `-io
//! ring` ([`ring`]). hyper's HTTP/1.1 path stays selectable (`-h1-engine
//! hyper`, in `proto/hyper/h1.rs`); `H1` is a connection of either.

pub mod conn;
pub mod framer;
pub mod later;
pub(crate) mod own;
pub mod ring;
pub(crate) mod shared;
pub mod wire;

pub use conn::{Conn, ExchangeError, Stamps};
pub use framer::{Fed, FrameError, Framer, Head, Limits, MAX_INTERIM};
pub use wire::{Parts, Wire, SEQ_HEADER};

/// An HTTP/1.1 connection of either engine.
pub(crate) enum H1 {
    /// hyper's (`-h1-engine hyper`): a handle to the connection's task.
    Hyper(crate::transport::opened::Linked<crate::proto::hyper::h1::Sender>),
    /// barrage's own.
    Own(Conn),
}

impl H1 {
    /// Whether it can take a request now.
    pub(crate) fn is_ready(&self) -> bool {
        match self {
            H1::Hyper(s) => s.is_ready(),
            H1::Own(c) => c.is_open() && !c.has_leftover(),
        }
    }

    /// What opening it cost, and its ends.
    pub(crate) fn opened(&self) -> &std::sync::Arc<crate::transport::opened::Opened> {
        match self {
            H1::Hyper(s) => &s.opened,
            H1::Own(c) => c.opened(),
        }
    }

    /// It, once it can take a request (hyper's finishes its handshake on
    /// its task); `None` when it closed meanwhile.
    pub(crate) async fn ready(self) -> Option<H1> {
        match self {
            H1::Hyper(mut s) => s.ready().await.is_ok().then_some(H1::Hyper(s)),
            own => own.is_ready().then_some(own),
        }
    }
}

/// A connection of barrage's engine on either runtime (tokio's [`Conn`],
/// monoio's [`ring::RingConn`]), as `-pipeline` drives it: one write of a
/// batch, then its answers in order.
pub(crate) trait Pipe {
    /// Writes `requests` in one write and reads the first answer.
    fn exchange<'a>(
        &'a mut self,
        requests: &'a [(&'a Wire, u64)],
        framer: &'a mut Framer,
        stamps: &'a mut Stamps,
    ) -> impl std::future::Future<Output = Result<(), ExchangeError>> + 'a;
    /// Reads the next answer of the batch.
    fn read_next<'a>(
        &'a mut self,
        framer: &'a mut Framer,
        stamps: &'a mut Stamps,
    ) -> impl std::future::Future<Output = Result<(), ExchangeError>> + 'a;
    /// Whether it may carry another request.
    fn is_open(&self) -> bool;
    /// What opening it cost, and its ends.
    fn opened(&self) -> &std::sync::Arc<crate::transport::opened::Opened>;
}

/// [`Pipe`] for a connection type whose own methods have its names.
macro_rules! pipe_by_own_methods {
    ($conn:ty) => {
        impl Pipe for $conn {
            fn exchange<'a>(
                &'a mut self,
                requests: &'a [(&'a Wire, u64)],
                framer: &'a mut Framer,
                stamps: &'a mut Stamps,
            ) -> impl std::future::Future<Output = Result<(), ExchangeError>> + 'a {
                <$conn>::exchange(self, requests, framer, stamps)
            }
            fn read_next<'a>(
                &'a mut self,
                framer: &'a mut Framer,
                stamps: &'a mut Stamps,
            ) -> impl std::future::Future<Output = Result<(), ExchangeError>> + 'a {
                <$conn>::read_next(self, framer, stamps)
            }
            fn is_open(&self) -> bool {
                <$conn>::is_open(self)
            }
            fn opened(&self) -> &std::sync::Arc<crate::transport::opened::Opened> {
                <$conn>::opened(self)
            }
        }
    };
}

pipe_by_own_methods!(Conn);
pipe_by_own_methods!(ring::RingConn);

/// What the engine's tests build their requests and framers from.
#[cfg(test)]
pub(crate) mod testing {
    use super::{Framer, Limits, Parts, Wire};

    /// `method target` to host `x`, with `body`.
    pub(crate) fn wire(method: &str, target: &str, body: &bytes::Bytes) -> Wire {
        Wire::new(&Parts {
            method,
            target,
            host: "x",
            headers: &[],
            body,
            chunked: false,
            close: false,
            attack: None,
            proxy_auth: None,
        })
    }

    /// A framer for an answer to anything but HEAD: a 64 KiB head, the
    /// body kept whole, no headers.
    pub(crate) fn framer() -> Framer {
        let limits = Limits {
            head_bytes: 64 * 1024,
            keep_body: -1,
            keep_headers: false,
            jar_only: false,
            stream: false,
        };
        Framer::new(limits, false)
    }
}

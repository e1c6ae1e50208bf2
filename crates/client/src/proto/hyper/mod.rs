//! hyper's room: its HTTP/1.1 (`-h1-engine hyper`, [`h1`]) and HTTP/2
//! ([`h2`]; gRPC's calls go over it from `proto/grpc/`), and what the two
//! share ([`io`]): requests built as hyper takes them, answers read from
//! hyper's body, errors worded with their sources.

pub(crate) mod h1;
pub(crate) mod h2;
pub(crate) mod io;

pub(crate) use io::{chain, read, request, Fail};

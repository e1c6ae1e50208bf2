//! The error of parsing a report flag's value: the metrics crate's, so
//! that the flags of both parse into one type.

pub use barrage_metrics::ParseError;

//! A session step's reading of its answer: the `-check` conditions
//! ([`check`]), `:extract` ([`extract`]), and a step's send with its
//! cookie jar and redirects ([`step`]).

pub(crate) mod check;
pub(crate) mod extract;
pub(crate) mod step;

//! `analyze` on each kind of file the page accepts, against what core's own readers and
//! rules say about the same bytes, and on files it must refuse with a clear message.

mod fixtures;
mod kinds;
mod refused;

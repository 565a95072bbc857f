//! The viewer's native tests: charts rendered to SVG strings and checked for structure, HTML
//! fragments checked for escaping, and reading errors checked for their messages.

mod baseline;
mod charts;
mod collapse;
mod compare;
mod fixtures;
mod interleave;
mod load;
mod packed;
mod ranks;
mod read;
mod read_long;
mod readable;
mod text;

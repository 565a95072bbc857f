//! End-to-end tests.

mod schema;

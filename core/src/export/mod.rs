//! Exports of a report into engines teams already run: Prometheus (node_exporter's
//! textfile collector, dcgm-exporter's naming) and the Chrome trace format (Perfetto,
//! `chrome://tracing`), next to a PyTorch profiler trace of the same run.

mod chrome;
mod prometheus;
mod prometheus_health;

pub use chrome::chrome_trace;
pub use prometheus::prometheus_text;

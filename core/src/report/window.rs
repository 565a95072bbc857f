//! The report's `windows`: the stretches older rows were kept at full resolution for, and
//! why (`docs/report-format.md`, "Retention").

use serde::{Deserialize, Serialize};

/// A stretch whose samples the recording kept at full resolution, with the reason.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct KeptWindow {
    /// Time of the first full-resolution row inside the window, seconds since start.
    pub t_start: f64,
    /// Time of the last one.
    pub t_end: f64,
    /// Why: `event` (a marker event such as eval or checkpoint), `fault` (an XID or a lost
    /// GPU), `nvml_error` (a transient NVML error), `slow_step`, or `finding:<rule id>` (a
    /// finding of the provisional diagnosis). Readers keep reasons they do not know.
    pub reason: String,
}

//! The report: one JSON document (`schema: "gpuwhy.report/1"`) holding the run, the devices
//! and their capabilities, the samples, the events, the findings and the recorder's cost.
//!
//! Reading is forgiving about what it does not know (unknown fields are ignored, missing
//! optional ones default) and strict about what it cannot read (a newer major schema, a
//! truncated file, something that is not a report) — with a message that says what to do.

mod column;
mod comparison;
mod finding;
mod group;
mod gz;
mod health;
mod io;
mod job;
pub mod journal;
mod layout;
mod model;
mod packed;
mod place;
mod ranks;
mod series;
mod steps;
mod time;
mod window;

pub(crate) use column::f64_or_nan;
pub use column::Column;
pub use comparison::{
    BaselineComparison, Change, Comparison, ExperimentCheck, GpuChange, MannWhitney, Outcome,
    StepChange, VerdictDiff,
};
pub use finding::{
    Action, Comparator, Cost, Evidence, Experiment, Finding, FindingSource, Severity, Verdict,
};
pub use group::{device_ranges, device_set, group_by_device};
pub use gz::gunzip_head;
pub use health::{
    DeviceHealth, EccCounts, HealthReading, NvlinkErrors, RemappedRows, RetiredPages,
};
#[cfg(feature = "summary")]
pub(crate) use io::check_schema;
pub use io::write_atomic;
pub(crate) use io::{parse_json, read_capped, unpack};
pub use job::{ForeignProcess, JobGpus, JobGpusMethod, MigDevice};
pub use model::{
    Capability, DataLoaderInfo, DeviceInfo, Event, Fault, HostData, HostFacts, NvmlInfo, Overhead,
    Report, RunInfo, Tool,
};
pub use packed::{per_unit, plain, MAX_VALUES, TIME_DIV};
pub use place::JobPlace;
pub use ranks::{
    Exemplar, GpuSpot, Imbalance, NodeSummary, PhaseTimes, RankFinding, RankGpu, RankSteps,
    RankSummary, RanksData, Straggler,
};
pub use series::{CoarseColumn, CoarseData, DeviceSeries, ReasonBuckets, SeriesData};
pub use steps::{PhaseStats, StepsData, ThreadSteps, STEP_KEY};
pub use time::rfc3339_utc;
pub use window::KeptWindow;

/// The schema this build writes.
pub const SCHEMA: &str = "gpuwhy.report/1";
/// The schema family prefix.
pub const SCHEMA_PREFIX: &str = "gpuwhy.report/";
/// The major version this build reads.
pub const SCHEMA_MAJOR: u32 = 1;

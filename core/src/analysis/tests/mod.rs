//! Each rule on synthetic reports and signals: it fires on its pattern and stays quiet on
//! its near miss. Helpers here; the tests by theme below.

mod any;
mod cross;
mod cross_logs;
mod foundation;
mod health;
mod idle;
mod logs;
mod samples;
mod shares;
mod steps;
mod trace;
mod trace_cpu;
mod trace_cpu_loop;
mod trace_real;

pub(super) use crate::analysis::diagnose;
pub(super) use crate::metric::{reasons, GpuMetric};
pub(super) use crate::report::{Column, DeviceInfo, Event, Finding, Report, SeriesData};
pub(super) use crate::rules::tests::{constant, find, h100, report, square, N};

/// `r` diagnosed as a whole: every rule, then the analysis's settling, ordering and verdict.
pub(super) fn diagnosed(mut r: Report) -> Report {
    diagnose(&mut r);
    r
}

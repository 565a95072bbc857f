//! A GPU's health counters, judged by level as DCGM's health watches judge them
//! (docs/health.md): what each level means and what to do.
//!
//! - **drain**: a remap failure (no spare rows left), uncorrected ECC errors since the
//!   driver loaded or during the run, or pages pending retirement — the memory returns wrong
//!   data or will: drain the node and have the GPU checked or replaced;
//! - **reset**: a remapped row pending — it takes effect at the next GPU reset, and until
//!   then the faulty row stays in use: reset the GPU when the job ends;
//! - **watch**: corrected errors or NVLink errors that rose during the run, or corrected
//!   errors counted at all — correctable, but a rising rate comes before remaps and
//!   uncorrectable errors: watch it, with the rate.

use super::super::{action, evidence};
use crate::report::{Action, Comparator, Cost, DeviceHealth, Evidence, HealthReading};
use crate::signals::DeviceSignals;

/// How serious a GPU's health is, least first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Level {
    /// Counted errors that are corrected: watch the rate.
    Watch,
    /// A pending remap: reset the GPU when the job ends.
    Reset,
    /// Wrong data, or no spare rows left: drain and replace.
    Drain,
}

/// What one GPU's health counters show.
pub(super) struct Health {
    pub level: Level,
    /// One sentence: what was seen, and what it means.
    pub sentence: String,
    pub actions: Vec<Action>,
}

/// A count that rose between the first and the last reading, with the hours between them.
fn rise(h: &DeviceHealth, f: impl Fn(&HealthReading) -> Option<u64>) -> Option<(u64, f64)> {
    let (a, b) = (h.first()?, h.last()?);
    let hours = (b.t_s - a.t_s) / 3600.0;
    let up = f(b)?.checked_sub(f(a)?)?;
    (up > 0 && hours > 0.0).then_some((up, hours))
}

fn item(ev: &mut Vec<Evidence>, d: u32, metric: &str, value: f64, threshold: f64) {
    ev.push(evidence(
        metric,
        value,
        Comparator::AtLeast,
        threshold,
        "count",
        Some(d),
    ));
}

/// Reads `d`'s health counters; `None` when nothing is wrong or nothing was read.
pub(super) fn judge(d: &DeviceSignals, ev: &mut Vec<Evidence>) -> Option<Health> {
    let h = d.health.as_ref()?;
    let last = h.last()?;
    let i = d.index;
    let mut seen: Vec<(Level, String)> = Vec::new();
    let remap = last.remapped_rows.unwrap_or_default();
    if remap.failure == Some(true) {
        item(ev, i, "row remap failure", 1.0, 1.0);
        seen.push((
            Level::Drain,
            "a row remap failed (no spare rows left)".into(),
        ));
    }
    if let Some(n) = last.ecc.volatile_uncorrected.filter(|n| *n > 0) {
        item(
            ev,
            i,
            "uncorrected ECC errors since the driver loaded",
            n as f64,
            1.0,
        );
        seen.push((
            Level::Drain,
            format!("{n} uncorrected ECC error{}", plural(n)),
        ));
    } else if let Some((n, _)) = rise(h, |r| r.ecc.aggregate_uncorrected) {
        item(
            ev,
            i,
            "uncorrected ECC errors added during the run",
            n as f64,
            1.0,
        );
        seen.push((
            Level::Drain,
            format!("{n} uncorrected ECC error{} during the run", plural(n)),
        ));
    }
    if last.retired_pages.and_then(|p| p.pending) == Some(true) {
        item(ev, i, "pages pending retirement", 1.0, 1.0);
        seen.push((Level::Drain, "pages are pending retirement".into()));
    }
    if remap.pending == Some(true) {
        item(ev, i, "remapped rows pending", 1.0, 1.0);
        seen.push((
            Level::Reset,
            "a remapped row is pending (it takes effect at the next GPU reset)".into(),
        ));
    }
    watch(h, last, i, ev, &mut seen);
    let level = seen.iter().map(|s| s.0).max()?;
    let what: Vec<String> = seen.into_iter().map(|s| s.1).collect();
    Some(Health {
        level,
        sentence: format!("GPU {i}: {}", what.join("; ")),
        actions: actions(level, i),
    })
}

/// The watch level: corrected ECC errors and NVLink errors, rising or counted.
fn watch(
    h: &DeviceHealth,
    last: &HealthReading,
    i: u32,
    ev: &mut Vec<Evidence>,
    seen: &mut Vec<(Level, String)>,
) {
    let corrected =
        rise(h, |r| r.ecc.volatile_corrected).or_else(|| rise(h, |r| r.ecc.aggregate_corrected));
    if let Some((n, hours)) = corrected {
        item(
            ev,
            i,
            "corrected ECC errors added during the run",
            n as f64,
            1.0,
        );
        seen.push((
            Level::Watch,
            format!(
                "corrected ECC errors rose by {n} during the run ({:.0} an hour)",
                n as f64 / hours
            ),
        ));
    } else if let Some(n) = last.ecc.volatile_corrected.filter(|n| *n > 0) {
        item(
            ev,
            i,
            "corrected ECC errors since the driver loaded",
            n as f64,
            1.0,
        );
        seen.push((
            Level::Watch,
            format!(
                "{n} corrected ECC error{} since the driver loaded",
                plural(n)
            ),
        ));
    }
    let link = |r: &HealthReading| {
        let e = r.nvlink_errors?;
        Some(
            e.crc_flit.unwrap_or(0)
                + e.crc_data.unwrap_or(0)
                + e.replay.unwrap_or(0)
                + e.recovery.unwrap_or(0),
        )
    };
    if let Some((n, hours)) = rise(h, link) {
        item(ev, i, "NVLink errors added during the run", n as f64, 1.0);
        seen.push((
            Level::Watch,
            format!(
                "NVLink CRC, replay or recovery errors rose by {n} ({:.0} an hour)",
                n as f64 / hours
            ),
        ));
    }
}

fn plural(n: u64) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// What to do at `level`, cheapest first.
fn actions(level: Level, i: u32) -> Vec<Action> {
    match level {
        Level::Drain => vec![
            action(Cost::Low, &format!("Stop scheduling jobs on GPU {i} (drain the node) and rerun the job elsewhere: its memory returned, or may return, wrong data")),
            action(Cost::Medium, &format!("Run the field diagnostic on GPU {i} (`dcgmi diag -r 3`) and collect `nvidia-bug-report.sh`")),
            action(Cost::High, &format!("Have GPU {i} replaced (RMA) if the diagnostic fails or the remap failed")),
        ],
        Level::Reset => vec![
            action(Cost::Low, &format!("Reset GPU {i} when the job ends (`nvidia-smi -r -i {i}` with no process on it, or reboot the node): the pending remap takes effect only then")),
            action(Cost::Low, "After the reset, check `nvidia-smi -q -d ROW_REMAPPER`: pending cleared and no remap failure"),
        ],
        Level::Watch => vec![
            action(Cost::Low, &format!("Watch GPU {i}'s error counts (`nvidia-smi -q -d ECC,ROW_REMAPPER`, or DCGM's health watches): a rising rate comes before row remaps and uncorrectable errors")),
            action(Cost::Medium, &format!("If the rate keeps rising, plan to drain GPU {i} and run `dcgmi diag -r 3`")),
        ],
    }
}

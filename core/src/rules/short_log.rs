//! Short logs: a reading from a handful of samples says how little it rests on.
//!
//! A one-sample `nvidia-smi` snapshot or a ten-line dmon log still gets the best-supported
//! reading, but every finding's confidence is capped by how much was seen and says how
//! long to record to settle it. Step markers or a profiler trace are measurements of their
//! own, so a report that has them is not short however few GPU samples it holds.

use crate::report::Finding;
use crate::signals::Signals;

/// Most GPU samples (per GPU) that count as a short log.
pub const SHORT_LOG_SAMPLES: usize = 10;

/// Confidence cap with `n` samples: 0.3 plus 0.04 per sample (0.34 from one sample, 0.7
/// from ten): below the 0.8 a samples-only reading of a long log reaches.
pub fn cap(n: usize) -> f64 {
    0.3 + 0.04 * n.min(SHORT_LOG_SAMPLES) as f64
}

/// Recording length that settles a reading: two minutes covers many steps of any usual
/// training loop, so a sawtooth or a periodic stall shows its period.
pub const SETTLE_S: u32 = 120;

/// Caps the confidence of `findings` (a failing GPU excepted: an XID is certain from one
/// line) when `s` holds a short log, and says so in each finding's `unseen` — except for
/// dmon and CSV logs, whose importer already says how many samples it read and how long a
/// log would settle it (`crate::analysis::temper`).
pub(crate) fn temper(findings: &mut [Finding], s: &Signals) {
    if s.steps.is_some() || s.trace.is_some() {
        return;
    }
    let Some(n) = s.sampled_devices().map(|d| d.samples).max() else {
        return;
    };
    if n == 0 || n > SHORT_LOG_SAMPLES {
        return;
    }
    let note = format!(
        "Only {n} sample{} per GPU{} were seen: this reading rests on very little. Record at least {SETTLE_S} s of training to settle it, e.g. `nvidia-smi dmon -s pucvmet -d 1 -c {SETTLE_S} > gpu.log` or `gpuwhy record -o run.json -- python train.py`.",
        if n == 1 { "" } else { "s" },
        if s.duration_s > 0.0 { format!(" ({:.0} s)", s.duration_s) } else { String::new() },
    );
    let said_by_importer = matches!(s.source.as_str(), "dmon" | "csv");
    for f in findings.iter_mut().filter(|f| f.id != "gpu_fault") {
        f.confidence = f.confidence.min(cap(n));
        if !said_by_importer {
            f.unseen.push(note.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_cap_grows_with_what_was_seen() {
        assert!((super::cap(1) - 0.34).abs() < 1e-9);
        assert!((super::cap(10) - 0.7).abs() < 1e-9);
        assert_eq!(super::cap(50), super::cap(10));
    }
}

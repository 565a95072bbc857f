//! A report's own comparison with a baseline (the report's `comparison` section): what a
//! session that names a baseline report gets at its end.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{compare, Comparison};
use crate::analysis::diagnose;
use crate::report::Report;

/// The `comparison` section of a report whose session named a baseline.
///
/// Exactly one of `result` and `error` is set: a baseline that cannot be read, or a run that
/// cannot be compared with it, never costs the report itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BaselineComparison {
    /// The baseline report's path, as given.
    pub baseline: String,
    /// Baseline → this run, as `gpuwhy compare BASELINE THIS` reports it.
    #[serde(default)]
    pub result: Option<Comparison>,
    /// Why there is no comparison: the baseline could not be read, or the runs are not
    /// comparable (different GPU count or model).
    #[serde(default)]
    pub error: Option<String>,
}

impl BaselineComparison {
    /// Compares the diagnosed `report` with the baseline report at `path`, which is read and
    /// diagnosed again (newer rules apply to an older baseline, as in `gpuwhy compare`).
    /// Runs on different hardware are not compared (the reason goes to `error`).
    pub fn of(report: &Report, path: &Path) -> BaselineComparison {
        let (result, error) = match Report::load(path) {
            Err(e) => (None, Some(format!("cannot read the baseline: {e}"))),
            Ok(mut base) => {
                diagnose(&mut base);
                match compare(&base, report, false) {
                    Ok(c) => (Some(c), None),
                    Err(why) => (None, Some(why)),
                }
            }
        };
        BaselineComparison {
            baseline: path.display().to_string(),
            result,
            error,
        }
    }
}

//! A report's own comparison with a baseline (the report's `comparison` section): what a
//! session that names a baseline report gets at its end.

use std::path::Path;

use super::compare;
use crate::analysis::diagnose;
use crate::report::Report;

pub use crate::report::BaselineComparison;

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

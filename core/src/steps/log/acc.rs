//! One quantity's exact totals, and its quantile sketch once a [`super::StepLog`] keeps no
//! more exact records.

use crate::report::PhaseStats;
use crate::stats::percentile_sorted;
use crate::steps::sketch::QuantileSketch;

/// Exact totals of one quantity, and its sketch once the log keeps no more exact records.
#[derive(Debug, Clone)]
pub(super) struct Acc {
    pub(super) count: u64,
    pub(super) sum: f64,
    pub(super) min: f64,
    pub(super) max: f64,
    pub(super) sketch: Option<QuantileSketch>,
}

impl Default for Acc {
    fn default() -> Self {
        Acc {
            count: 0,
            sum: 0.0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            sketch: None,
        }
    }
}

impl Acc {
    pub(super) fn add(&mut self, x: f64, sketched: bool) {
        self.count += 1;
        self.sum += x;
        self.min = self.min.min(x);
        self.max = self.max.max(x);
        if sketched {
            self.sketch
                .get_or_insert_with(QuantileSketch::new)
                .insert(x);
        }
    }

    /// Starts the sketch from the exact values kept so far (all values until now).
    pub(super) fn start_sketch(&mut self, kept: &[f32]) {
        if self.count == 0 || self.sketch.is_some() {
            return;
        }
        let mut s = QuantileSketch::new();
        for v in kept.iter().filter(|v| !v.is_nan()) {
            s.insert(f64::from(*v));
        }
        self.sketch = Some(s);
    }

    /// Statistics; quantiles exact from `kept` while every value is kept, else from the sketch.
    pub(super) fn stats(&self, kept: Option<&[f32]>) -> PhaseStats {
        let (p50, p95, p99) = match (&self.sketch, kept) {
            (Some(s), _) => (s.quantile(0.5), s.quantile(0.95), s.quantile(0.99)),
            (None, Some(k)) => {
                let mut v: Vec<f64> = k
                    .iter()
                    .filter(|x| !x.is_nan())
                    .map(|x| f64::from(*x))
                    .collect();
                v.sort_by(f64::total_cmp);
                (
                    percentile_sorted(&v, 0.5),
                    percentile_sorted(&v, 0.95),
                    percentile_sorted(&v, 0.99),
                )
            }
            (None, None) => (0.0, 0.0, 0.0),
        };
        PhaseStats {
            count: self.count,
            sum_s: self.sum,
            min_s: self.min,
            max_s: self.max,
            p50_s: p50,
            p95_s: p95,
            p99_s: p99,
        }
    }
}

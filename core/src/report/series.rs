//! The report's sample streams (one per GPU, and the host's): rows at full resolution and
//! buckets of folded samples, documented in `docs/report-format.md` ("Retention", "The
//! compact series form").

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::column::Column;

/// Columnar samples of one stream. Every column has one value per entry of `t`.
/// Written in the compact form (`times`, `columns`) by `report/packed.rs`, which also
/// writes the plain form on request; both forms are read.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(default)]
pub struct SeriesData {
    /// Sample times, seconds since the run started.
    #[serde(alias = "times", deserialize_with = "super::packed::times")]
    pub t: Vec<f64>,
    /// Column name → values (`null` = not available at that sample).
    #[serde(alias = "columns")]
    pub metrics: BTreeMap<String, Column>,
    /// Older or later samples folded into min/mean/max buckets (long runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coarse: Option<CoarseData>,
}

/// Buckets of folded samples, for runs longer than the full-resolution windows. A bucket's
/// `t_start..=t_end` are its first and last folded sample; no row of `t` lies inside it
/// (`docs/report-format.md`, "Retention").
/// Written in either form by `report/packed/coarse.rs`; both are read.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(default)]
pub struct CoarseData {
    /// Samples per bucket being filled when the report was written.
    pub rows_per_bucket: usize,
    /// Start of each bucket, seconds.
    #[serde(deserialize_with = "super::packed::times")]
    pub t_start: Vec<f64>,
    /// End of each bucket, seconds.
    #[serde(deserialize_with = "super::packed::times")]
    pub t_end: Vec<f64>,
    /// Column name → statistics per bucket.
    pub metrics: BTreeMap<String, CoarseColumn>,
    /// Rows folded into each bucket, missing values included (absent in older reports).
    #[serde(deserialize_with = "super::packed::coarse::counts_de")]
    pub rows: Vec<u32>,
    /// Edges (%) of the bands of [`CoarseColumn::bands`], present when a column has bands.
    pub band_edges: Vec<f32>,
    /// A GPU stream's loaded samples by clock-event reason, per bucket (absent in older
    /// reports).
    pub reasons: Option<ReasonBuckets>,
}

/// One column's bucket statistics (written by `report/packed/coarse.rs`).
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(default)]
pub struct CoarseColumn {
    /// Minimum per bucket.
    pub min: Column,
    /// Mean per bucket.
    pub mean: Column,
    /// Maximum per bucket.
    pub max: Column,
    /// Values per bucket (missing ones left out; absent in older reports).
    #[serde(deserialize_with = "super::packed::coarse::counts_de")]
    pub count: Vec<u32>,
    /// Utilization-like columns: per band of [`CoarseData::band_edges`] (below the first
    /// edge, between each two, at or above the last), the count of values per bucket.
    #[serde(deserialize_with = "super::packed::coarse::bands_de")]
    pub bands: Vec<Vec<u32>>,
}

/// A GPU stream's buckets counted by clock-event reason: what the throttling checks need,
/// which a bucket's mean of a bitmask cannot say.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(default)]
pub struct ReasonBuckets {
    /// Per bucket, the samples with `util_gpu` at or above the load threshold
    /// (`metric::LOAD_UTIL`) and a clock-event mask.
    #[serde(deserialize_with = "super::packed::coarse::counts_de")]
    pub loaded: Vec<u32>,
    /// Of `loaded`, per bucket the samples with any throttling bit set.
    #[serde(deserialize_with = "super::packed::coarse::counts_de")]
    pub throttled: Vec<u32>,
    /// The clock-event bits counted one by one in `loaded_bits`.
    pub bits: Vec<u64>,
    /// Per entry of `bits`: per bucket, the samples of `loaded` with that bit set.
    #[serde(deserialize_with = "super::packed::coarse::bands_de")]
    pub loaded_bits: Vec<Vec<u32>>,
}

/// One GPU's samples.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct DeviceSeries {
    /// NVML index of the device.
    pub device: u32,
    /// The samples.
    #[serde(flatten)]
    pub data: SeriesData,
}

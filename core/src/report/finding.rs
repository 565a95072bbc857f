//! Findings: what a rule concluded, with its evidence, fixes and confirming experiment.

use serde::{Deserialize, Serialize};

use super::column::f64_or_nan;

/// How much a finding matters.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default,
)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Worth knowing; costs little.
    #[default]
    Info,
    /// Costs a noticeable share of the run.
    Low,
    /// Costs a large share of the run.
    Medium,
    /// Dominates the run's lost time.
    High,
    /// The hardware is failing or gone.
    Critical,
}

impl Severity {
    /// Weight used to order findings (with confidence and lost share).
    pub fn weight(self) -> f64 {
        match self {
            Severity::Info => 0.2,
            Severity::Low => 0.4,
            Severity::Medium => 0.6,
            Severity::High => 0.8,
            Severity::Critical => 1.0,
        }
    }

    /// Lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Low => "low",
            Severity::Medium => "medium",
            Severity::High => "high",
            Severity::Critical => "critical",
        }
    }
}

/// One measured value compared with the threshold that made it count.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Evidence {
    /// What was measured (`util_gpu p50`, `share of loaded samples with sw_power_cap`, ...).
    pub metric: String,
    /// The measured value.
    #[serde(deserialize_with = "f64_or_nan")]
    pub value: f64,
    /// The threshold it was compared with.
    #[serde(deserialize_with = "f64_or_nan")]
    pub threshold: f64,
    /// How: `>=`, `<=`, `<`, `>`, `!=`.
    pub comparison: Comparator,
    /// Unit of value and threshold.
    pub unit: String,
    /// The device it was measured on, if one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<u32>,
    /// Time range, seconds since start, when it applies to a part of the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_range: Option<[f64; 2]>,
    /// True when this signal agreed with the finding; false when it was checked and did not.
    pub agrees: bool,
    /// Its weight in the finding's confidence (the weighted share of agreeing signals), when
    /// it counts towards it; absent for context shown beside the counted signals, for rules
    /// whose confidence is not a weighted share, and in reports written before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<f64>,
}

impl Evidence {
    /// This item, counted towards its finding's confidence with `weight`.
    pub fn weighing(mut self, weight: f64) -> Self {
        self.weight = Some(weight);
        self
    }
}

/// How an evidence value was compared with its threshold. Written to the report as its
/// symbol (`>=`, `>`, `<=`, `<`, `!=`); a symbol this version does not know is kept as read
/// ([`Comparator::Other`]) and holds for nothing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum Comparator {
    /// `>=`
    AtLeast,
    /// `>`
    Above,
    /// `<=`
    AtMost,
    /// `<`
    Below,
    /// `!=`: differs by more than `f64::EPSILON`.
    Differs,
    /// A symbol written by another version.
    Other(String),
}

impl Comparator {
    /// The symbol, as the report writes it.
    pub fn as_str(&self) -> &str {
        match self {
            Comparator::AtLeast => ">=",
            Comparator::Above => ">",
            Comparator::AtMost => "<=",
            Comparator::Below => "<",
            Comparator::Differs => "!=",
            Comparator::Other(s) => s,
        }
    }

    /// Whether `value` compared with `threshold` this way holds (never for
    /// [`Comparator::Other`], nor when either is NaN, except for `!=`).
    pub fn holds(&self, value: f64, threshold: f64) -> bool {
        match self {
            Comparator::AtLeast => value >= threshold,
            Comparator::Above => value > threshold,
            Comparator::AtMost => value <= threshold,
            Comparator::Below => value < threshold,
            Comparator::Differs => (value - threshold).abs() > f64::EPSILON,
            Comparator::Other(_) => false,
        }
    }
}

impl From<&str> for Comparator {
    fn from(s: &str) -> Self {
        match s {
            ">=" => Comparator::AtLeast,
            ">" => Comparator::Above,
            "<=" => Comparator::AtMost,
            "<" => Comparator::Below,
            "!=" => Comparator::Differs,
            other => Comparator::Other(other.to_string()),
        }
    }
}

impl From<String> for Comparator {
    fn from(s: String) -> Self {
        Comparator::from(s.as_str())
    }
}

impl From<Comparator> for String {
    fn from(c: Comparator) -> Self {
        c.as_str().to_string()
    }
}

impl std::fmt::Display for Comparator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How expensive an action is to try.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cost {
    /// A setting or a flag.
    Low,
    /// A code change.
    Medium,
    /// Hardware, infrastructure or a redesign.
    High,
}

/// A fix to try.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Action {
    /// What to do.
    pub text: String,
    /// How costly it is.
    pub cost: Cost,
}

/// The one-variable experiment that would confirm a finding.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Experiment {
    /// The single change to make.
    pub change: String,
    /// What to expect in which metric if the finding is right.
    pub expect: String,
    /// The metric `gpuwhy compare` should look at.
    #[serde(default)]
    pub metric: String,
}

/// A rule's conclusion.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Finding {
    /// Stable rule id (`data_starvation`, ...).
    pub id: String,
    /// Short title.
    pub title: String,
    /// How much it matters.
    pub severity: Severity,
    /// 0–1, from how many independent signals agree.
    #[serde(deserialize_with = "f64_or_nan")]
    pub confidence: f64,
    /// One or two sentences for a human.
    pub summary: String,
    /// Estimated share of the run's time lost to this cause, 0–1, when it can be estimated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost_share: Option<f64>,
    /// How `lost_share` was estimated (what was measured, over what), or why it was not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost_share_basis: Option<String>,
    /// Devices concerned.
    #[serde(default)]
    pub devices: Vec<u32>,
    /// Measured values against thresholds.
    pub evidence: Vec<Evidence>,
    /// Fixes, cheapest first.
    pub actions: Vec<Action>,
    /// The confirming experiment.
    pub experiment: Experiment,
    /// What could not be seen and would sharpen the diagnosis.
    #[serde(default)]
    pub unseen: Vec<String>,
    /// What the finding was concluded from; absent in reports written before it was kept
    /// (and for a value this version does not know).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "source_or_none"
    )]
    pub source: Option<FindingSource>,
    /// The id of the finding whose mechanism produces this one on the same GPUs (a GPU held
    /// at a lower clock makes the others wait for it: `rank_imbalance` is caused by
    /// `throttling`). Such a finding is listed right after its cause, which carries its
    /// measured lost share; absent for a cause of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caused_by: Option<String>,
}

/// What a finding was concluded from: the input whose evidence decided it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingSource {
    /// The GPU and host samples.
    Samples,
    /// The step markers' phase times.
    Steps,
    /// A profiler trace read beside the samples.
    Trace,
    /// The per-rank summaries of a merged job.
    Ranks,
}

impl FindingSource {
    /// The name the report writes.
    pub fn as_str(self) -> &'static str {
        match self {
            FindingSource::Samples => "samples",
            FindingSource::Steps => "steps",
            FindingSource::Trace => "trace",
            FindingSource::Ranks => "ranks",
        }
    }

    /// The source a report names, `None` for a name this version does not know.
    pub fn from_name(name: &str) -> Option<FindingSource> {
        [
            FindingSource::Samples,
            FindingSource::Steps,
            FindingSource::Trace,
            FindingSource::Ranks,
        ]
        .into_iter()
        .find(|s| s.as_str() == name)
    }
}

/// Reads `source` forgivingly: a name from a newer version is no source, not an error.
fn source_or_none<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<FindingSource>, D::Error> {
    let name: Option<String> = Option::deserialize(d)?;
    Ok(name.as_deref().and_then(FindingSource::from_name))
}

impl Finding {
    /// Ordering score: severity weight × confidence, nudged by the lost share.
    pub fn score(&self) -> f64 {
        self.severity.weight() * self.confidence * (1.0 + self.lost_share.unwrap_or(0.0))
    }
}

/// The report's opening line.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Verdict {
    /// Id of the top finding, or `none` when no bottleneck was found.
    pub id: String,
    /// Title of the top finding.
    pub title: String,
    /// Its confidence.
    #[serde(deserialize_with = "f64_or_nan")]
    pub confidence: f64,
    /// Its estimated share of lost time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost_share: Option<f64>,
    /// One sentence.
    pub summary: String,
}

impl Default for Verdict {
    fn default() -> Self {
        Verdict {
            id: "none".into(),
            title: "No bottleneck found".into(),
            confidence: 0.0,
            lost_share: None,
            summary: "No rule fired.".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparators_keep_their_symbol_and_an_unknown_one_holds_for_nothing() {
        for sym in [">=", ">", "<=", "<", "!="] {
            let c = Comparator::from(sym);
            assert!(!matches!(c, Comparator::Other(_)), "{sym}");
            assert_eq!(
                serde_json::to_string(&c).expect("writes"),
                format!("\"{sym}\"")
            );
        }
        assert!(Comparator::AtLeast.holds(1.0, 1.0) && !Comparator::Above.holds(1.0, 1.0));
        assert!(Comparator::Below.holds(0.5, 1.0) && Comparator::Differs.holds(0.5, 1.0));
        let newer: Comparator = serde_json::from_str("\"~=\"").expect("reads");
        assert_eq!(newer, Comparator::Other("~=".into()));
        assert!(!newer.holds(1.0, 1.0));
        assert_eq!(newer.to_string(), "~=");
    }

    #[test]
    fn a_weight_is_written_when_counted_and_an_older_item_reads_without_one() {
        let old = r#"{"metric":"m","value":0.4,"threshold":0.1,"comparison":">=","unit":"x","agrees":true}"#;
        let e: Evidence = serde_json::from_str(old).expect("reads an item written before weights");
        assert_eq!(e.weight, None);
        assert!(!serde_json::to_string(&e)
            .expect("writes")
            .contains("weight"));
        let weighed = e.weighing(2.0);
        let text = serde_json::to_string(&weighed).expect("writes");
        assert!(text.contains("\"weight\":2.0"), "{text}");
        let back: Evidence = serde_json::from_str(&text).expect("reads");
        assert_eq!(back.weight, Some(2.0));
    }

    #[test]
    fn a_source_is_written_by_name_and_an_unknown_one_is_no_source() {
        let json = r#"{"id":"x","title":"t","severity":"low","confidence":0.5,"summary":"s",
            "evidence":[],"actions":[],"experiment":{"change":"","expect":""}}"#;
        let old: Finding = serde_json::from_str(json).expect("reads an older finding");
        assert_eq!(old.source, None);
        let mut f = old.clone();
        f.source = Some(FindingSource::Steps);
        let text = serde_json::to_string(&f).expect("writes");
        assert!(text.contains("\"source\":\"steps\""), "{text}");
        let back: Finding = serde_json::from_str(&text).expect("reads");
        assert_eq!(back.source, Some(FindingSource::Steps));
        let newer = json.replace(
            "\"summary\":\"s\"",
            "\"summary\":\"s\",\"source\":\"telepathy\"",
        );
        let f: Finding = serde_json::from_str(&newer).expect("a newer source is not an error");
        assert_eq!(f.source, None);
        assert!(!serde_json::to_string(&old)
            .expect("writes")
            .contains("source"));
    }
}

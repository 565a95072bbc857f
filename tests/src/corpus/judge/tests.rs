use super::*;
use crate::corpus::{Brief, Limits, Origin};
use crate::Expected;
use gpuwhy::report::Severity;

fn case(top: &str, also: &[&str], absent: &[&str]) -> Case {
    Case {
        name: "c".into(),
        expect: Expected {
            top: top.into(),
            also: also.iter().map(|s| s.to_string()).collect(),
            absent: absent.iter().map(|s| s.to_string()).collect(),
        },
        lost_share: None,
        limits: Limits::default(),
        origin: Origin::Sim {
            text: String::new(),
        },
    }
}

fn got(verdict: &str, findings: &[&str], idle: Option<f64>) -> Got {
    Got {
        verdict: verdict.into(),
        findings: findings.iter().map(|s| s.to_string()).collect(),
        idle_share: idle,
        ..Got::default()
    }
}

#[test]
fn an_expected_rule_must_be_the_verdict_with_its_companions() {
    let c = case("data_starvation", &["throttling"], &["launch_bound"]);
    let ok = judge(
        &c,
        &got(
            "data_starvation",
            &["data_starvation", "throttling"],
            Some(0.4),
        ),
    );
    assert!(ok.matched, "{}", ok.why);
    let second = judge(
        &c,
        &got("throttling", &["throttling", "data_starvation"], Some(0.4)),
    );
    assert!(!second.matched);
    assert!(second
        .why
        .contains("top throttling instead of data_starvation"));
    let lacking = judge(&c, &got("data_starvation", &["data_starvation"], Some(0.4)));
    assert_eq!(lacking.why, "missing throttling");
    let extra = judge(
        &c,
        &got(
            "data_starvation",
            &["data_starvation", "throttling", "launch_bound"],
            None,
        ),
    );
    assert_eq!(extra.why, "unexpected launch_bound");
}

#[test]
fn unknown_cause_holds_when_gpuwhy_answers_or_the_gpus_are_busy() {
    let c = case("unknown", &[], &[]);
    assert!(judge(&c, &got("small_batch", &["small_batch"], Some(0.6))).matched);
    assert!(judge(&c, &got("none", &[], Some(0.1))).matched);
    let silent = judge(&c, &got("none", &[], Some(0.45)));
    assert!(!silent.matched && silent.silent);
    assert!(silent.why.contains("45%"), "{}", silent.why);
}

#[test]
fn no_bottleneck_is_only_right_for_busy_gpus() {
    let c = case("none", &[], &[]);
    assert!(judge(&c, &got("none", &[], Some(0.05))).matched);
    assert!(!judge(&c, &got("none", &[], Some(0.3))).matched);
    assert!(!judge(&c, &got("small_batch", &["small_batch"], Some(0.05))).matched);
}

#[test]
fn an_unreadable_case_is_a_miss_with_its_reason() {
    let c = case("throttling", &[], &[]);
    let g = Got {
        error: Some("not a file gpuwhy reads".into()),
        ..Got::default()
    };
    let j = judge(&c, &g);
    assert!(!j.matched && !j.silent);
    assert_eq!(j.why, "error: not a file gpuwhy reads");
}

fn judged(name: &str, matched: bool, silent: bool) -> (String, Judgement) {
    (
        name.into(),
        Judgement {
            matched,
            silent,
            why: String::new(),
        },
    )
}

#[test]
fn only_cases_that_matched_before_regress() {
    let baseline = Baseline {
        matched: ["a", "b"].iter().map(|s| s.to_string()).collect(),
    };
    let results = vec![
        judged("a", true, false),
        judged("b", false, false),
        judged("c", false, false),
        judged("d", true, false),
    ];
    let s = summarize(&results, &baseline, false);
    assert_eq!(s.regressions, vec!["b"]);
    assert_eq!(s.misses, vec!["c"]);
    assert_eq!(s.improved, vec!["d"]);
    assert_eq!(s.failed, vec!["b"]);
    assert_eq!(s.passed(), 2);
}

#[test]
fn silence_on_idle_gpus_fails_once_the_rule_exists() {
    let results = vec![judged("quiet", false, true)];
    let before = summarize(&results, &Baseline::default(), false);
    assert!(before.failed.is_empty());
    assert_eq!(before.misses, vec!["quiet"]);
    let after = summarize(&results, &Baseline::default(), true);
    assert_eq!(after.failed, vec!["quiet"]);
    assert!(
        after.misses.is_empty(),
        "a failure is not also a known miss"
    );
}

#[test]
fn the_baseline_round_trips_through_its_file() {
    let b = Baseline {
        matched: ["z", "a"].iter().map(|s| s.to_string()).collect(),
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("b.json");
    std::fs::write(&path, b.to_json()).expect("write");
    assert_eq!(Baseline::load(&path).expect("load"), b);
    assert!(b.to_json().find("\"a\"") < b.to_json().find("\"z\""));
    let missing = Baseline::load(&dir.path().join("none.json")).expect("missing is empty");
    assert!(missing.matched.is_empty());
}

#[test]
fn either_of_two_causes_may_come_first_and_the_lost_share_must_be_near() {
    let mut c = case(
        "data_starvation|throttling",
        &["data_starvation", "throttling"],
        &[],
    );
    let both = ["throttling", "data_starvation"];
    assert!(judge(&c, &got("throttling", &both, Some(0.3))).matched);
    c.lost_share = Some((0.15, 0.25));
    let mut g = got("throttling", &both, Some(0.3));
    g.lost_share = Some(0.2);
    assert!(judge(&c, &g).matched);
    g.lost_share = Some(0.01);
    assert_eq!(judge(&c, &g).why, "lost share 1% outside 15-25%");
    g.lost_share = None;
    assert_eq!(judge(&c, &g).why, "lost share unknown outside 15-25%");
}

fn brief(id: &str, severity: Severity, lost_share: Option<f64>) -> Brief {
    Brief {
        id: id.into(),
        severity,
        lost_share,
    }
}

#[test]
fn no_finding_may_be_more_severe_than_max_severity() {
    let mut c = case("unknown", &[], &[]);
    c.limits.max_severity = Some(Severity::Low);
    let mut g = got("rank_imbalance", &["rank_imbalance"], Some(0.1));
    g.briefs = vec![brief("rank_imbalance", Severity::Low, Some(0.25))];
    assert!(judge(&c, &g).matched);
    g.briefs = vec![brief("rank_imbalance", Severity::High, Some(0.25))];
    assert_eq!(judge(&c, &g).why, "above low severity: rank_imbalance high");
}

#[test]
fn no_lost_share_forbids_a_loss_on_the_named_findings_or_on_all() {
    let mut c = case("unknown", &[], &[]);
    c.limits.no_lost_share = vec!["unexplained_idle".into()];
    let mut g = got("throttling", &["throttling", "unexplained_idle"], Some(0.9));
    g.briefs = vec![
        brief("throttling", Severity::Medium, Some(0.3)),
        brief("unexplained_idle", Severity::Low, None),
    ];
    assert!(judge(&c, &g).matched);
    g.briefs[1].lost_share = Some(1.0);
    assert_eq!(
        judge(&c, &g).why,
        "lost share claimed: unexplained_idle ~100%"
    );
    c.limits.no_lost_share = vec!["*".into()];
    g.briefs[1].lost_share = None;
    assert_eq!(judge(&c, &g).why, "lost share claimed: throttling ~30%");
}

#[test]
fn nothing_else_allows_only_the_expected_findings() {
    let mut c = case("idle_gpu", &["memory_headroom"], &[]);
    c.limits.nothing_else = true;
    let g = got("idle_gpu", &["idle_gpu", "memory_headroom"], Some(1.0));
    assert!(judge(&c, &g).matched);
    let g = got(
        "idle_gpu",
        &["idle_gpu", "memory_headroom", "comm_sync"],
        Some(1.0),
    );
    assert_eq!(judge(&c, &g).why, "nothing else expected, got comm_sync");
}

#[test]
fn limits_are_read_from_an_expect_object() {
    let v: serde_json::Value = serde_json::from_str(
        r#"{"max_severity": "low", "no_lost_share": true, "nothing_else": true}"#,
    )
    .expect("json");
    let l = Limits::from_json(&v, "c").expect("valid");
    assert_eq!(l.max_severity, Some(Severity::Low));
    assert_eq!(l.no_lost_share, vec!["*".to_string()]);
    assert!(l.nothing_else);
    let bad: serde_json::Value = serde_json::from_str(r#"{"max_severity": "huge"}"#).expect("json");
    assert!(Limits::from_json(&bad, "c").is_err());
}

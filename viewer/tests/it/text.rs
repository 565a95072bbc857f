//! Report text is data: every HTML fragment and chart escapes it.

use gpuwhy_viewer::chart::{timeline, Frame};
use gpuwhy_viewer::page::{numbers, overview, ranks, tables};
use gpuwhy_viewer::{Theme, View};

use crate::fixtures::every_text;

const HOSTILE: &str = r#"<img src=x onerror="alert(1)"></script><script>alert(2)</script>'"&"#;

#[test]
fn every_fragment_escapes_report_text() {
    let view = View::new(every_text(HOSTILE));
    let r = &view.report;
    let f = Frame::new(800, view.t_range.0, view.t_range.1);
    let fragments = [
        overview::run_html(r),
        overview::verdict_html(r),
        overview::findings_html(r),
        tables::devices_html(r),
        tables::overhead_html(r),
        tables::events_html(r, 10),
        ranks::ranks_html(r),
        numbers::timeline_html(&view, 0, &f),
        timeline::svg(&view, 0, &f, &Theme::light()).expect("renders"),
    ];
    for html in &fragments {
        assert!(!html.contains("<img"), "{html}");
        assert!(!html.contains("<script"), "{html}");
        assert!(!html.contains("</script"), "{html}");
    }
    let all = fragments.join("");
    assert!(all.contains("&lt;img src=x onerror=&quot;alert(1)&quot;&gt;"));
    // The text is still there to be read, in each part of a finding card.
    // A job report's four hosts, the straggler's slowest phase and its straggler flag too.
    assert_eq!(
        ranks::ranks_html(r)
            .matches("&lt;/script&gt;&lt;script&gt;")
            .count(),
        6
    );
    let cards = overview::findings_html(r);
    assert!(cards.matches("&lt;/script&gt;&lt;script&gt;").count() >= 8);
}

#[test]
fn the_verdict_comes_with_its_lost_share_and_confidence() {
    let view = View::new(every_text("x"));
    let v = overview::verdict_html(&view.report);
    assert!(v.contains("~20% of the run"));
    assert!(v.contains("0.5"));
    assert!(v.contains("sev-high"));
}

#[test]
fn facts_for_the_page_are_json_that_keeps_report_text_as_text() {
    let view = View::new(every_text(HOSTILE));
    let info: serde_json::Value = serde_json::from_str(&view.info().to_json()).expect("JSON");
    assert_eq!(info["gpus"][0]["label"], format!("GPU 0 · {HOSTILE}"));
    assert_eq!(info["verdict"], HOSTILE);
    assert_eq!(info["t1"], view.t_range.1);
    let e = View::load(b"{\"schema\": \"gpuwhy.report/9\"}", "a\"\\\n.json")
        .err()
        .expect("refused");
    let back: serde_json::Value = serde_json::from_str(&e.to_json()).expect("JSON");
    assert_eq!(back["kind"], "newer_schema");
    assert_eq!(back["message"], e.message.as_str());
}

#[test]
fn the_run_says_which_gpus_are_the_job_s_and_why() {
    let mut r = every_text("x");
    r.run.job_gpus = Some(gpuwhy::report::JobGpus {
        indices: vec![0],
        others: vec![1],
        reason: "GPU 0 listed process 4242 of the recorded process tree".into(),
        ..Default::default()
    });
    let html = overview::run_html(&r);
    // One short phrase in the facts; why, in a details box below them.
    assert!(html.contains("s GPUs</dt><dd>0 · not the job"), "{html}");
    assert!(
        html.contains("<summary>Why these GPUs</summary>GPU 0 listed process 4242"),
        "{html}"
    );
}

#[test]
fn a_consequence_s_card_names_its_cause() {
    let mut r = every_text("x");
    let mut cause = r.findings[0].clone();
    cause.id = "throttling".into();
    let mut consequence = r.findings[0].clone();
    consequence.id = "rank_imbalance".into();
    consequence.caused_by = Some("throttling".into());
    r.findings = vec![cause, consequence];
    let cards = overview::findings_html(&r);
    assert_eq!(cards.matches("caused by throttling").count(), 1, "{cards}");
    let at = cards.find("caused by throttling").expect("named");
    assert!(
        at > cards.find("rank_imbalance").expect("consequence"),
        "{cards}"
    );
}

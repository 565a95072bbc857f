//! A merged job report's Ranks section: read from the file's `ranks` (the fields the table
//! shows), drawn from core's `rank_table`, so the page lists the rows `gpuwhy diagnose` prints.

use gpuwhy::merge::{rank_table, RankTable};
use gpuwhy::report::{Exemplar, GpuSpot, Imbalance, NodeSummary, RankFinding, RankGpu, Report};
use gpuwhy_viewer::page::ranks::ranks_html;
use gpuwhy_viewer::View;

use crate::fixtures::{every_text, one_gpu, ranks};

/// A report of one GPU carrying `job` as its `ranks`, written out and read back by the page.
fn job_view(job: gpuwhy::report::RanksData) -> View {
    let mut r = one_gpu(vec![50.0; 10], vec![60.0; 10]);
    r.ranks = Some(job);
    View::load(r.to_json().as_bytes(), "job.json")
        .map_err(|e| e.message)
        .expect("opens")
}

/// The body rows of the table: whether each is marked as a straggler, and its cells' text.
fn rows(html: &str) -> Vec<(bool, Vec<String>)> {
    let body = html.split("<tbody>").nth(1).expect("a table body");
    let body = body.split("</tbody>").next().expect("closed");
    body.split("<tr")
        .skip(1)
        .map(|tr| {
            let marked = tr.starts_with(" class=\"straggler\"");
            let cells = tr
                .split("<t")
                .skip(1)
                .filter(|c| c.starts_with('h') || c.starts_with('d'))
                .map(|c| {
                    let text = c.split_once('>').expect("a tag").1;
                    text.split("</").next().expect("closed").to_string()
                })
                .collect();
            (marked, cells)
        })
        .collect()
}

/// What each listed row must say: core's numbers, rounded as the CLI rounds them.
fn expected(t: &RankTable) -> Vec<(bool, Vec<String>)> {
    let dash = || "—".to_string();
    t.rows
        .iter()
        .map(|x| {
            let cells = vec![
                x.rank.to_string(),
                x.host.to_string(),
                x.local_rank.map_or_else(dash, |l| l.to_string()),
                x.steps.map_or_else(dash, |c| c.to_string()),
                x.step_p50_s.map_or_else(dash, |s| format!("{s:.3} s")),
                x.slowest.map_or_else(dash, |p| {
                    format!("{} {:.3} s ×{:.2}", p.name, p.p50_s, p.ratio)
                }),
                x.util_p50.map_or_else(dash, |u| format!("{u:.0}%")),
                x.straggler
                    .map_or_else(String::new, |p| format!("yes ({p})")),
            ];
            (x.straggler.is_some(), cells)
        })
        .collect()
}

#[test]
fn a_small_job_shows_one_row_per_rank_with_cores_numbers_and_the_straggler_marked() {
    let job = ranks(6, &[3]);
    let view = job_view(job.clone());
    assert_eq!(
        view.report.ranks.as_ref(),
        Some(&job),
        "read back as written"
    );
    let html = ranks_html(&view.report);
    let got = rows(&html);
    assert_eq!(got.len(), 6, "{html}");
    assert_eq!(got, expected(&rank_table(&job)), "{html}");
    let marked: Vec<&str> = (got.iter())
        .filter(|(m, _)| *m)
        .map(|(_, c)| c[0].as_str())
        .collect();
    assert_eq!(marked, ["3"], "{html}");
    // Rank 3: 0.2 s of data against the other ranks' 0.1 s.
    assert_eq!(got[3].1[5], "data 0.200 s ×2.00");
    assert_eq!(got[3].1[7], "yes (data)");
    assert_eq!((got[1].1[2].as_str(), got[2].1[6].as_str()), ("—", "—"));
    assert!(
        html.contains("6 ranks on 2 nodes; world size 7; missing: rank 6; 1 straggler; recording cut short on rank 0."),
        "{html}"
    );
    assert!(!html.contains("not listed"), "{html}");
}

#[test]
fn a_large_job_lists_the_first_ranks_and_the_stragglers_and_says_what_is_left_out() {
    let slow: Vec<u32> = (0..30).map(|i| 40 + 3 * i).collect();
    let job = ranks(200, &slow);
    let view = job_view(job.clone());
    let html = ranks_html(&view.report);
    let t = rank_table(&job);
    let got = rows(&html);
    assert_eq!(got, expected(&t), "{html}");
    assert_eq!(got.len(), 8 + 24, "{html}");
    assert_eq!(got.iter().filter(|(m, _)| *m).count(), 24, "{html}");
    assert!(html.contains("32 of 200 ranks, by rank."), "{html}");
    assert!(
        html.contains(&format!(
            "{} more ranks not listed, 6 of them stragglers (ranks 112, 115, 118, 121, 124, 127)",
            200 - 32
        )),
        "{html}"
    );
}

#[test]
fn only_the_tables_fields_are_read_the_rest_keep_their_defaults() {
    let mut job = ranks(3, &[1]);
    let x = &mut job.ranks[0];
    (x.file, x.offset_s, x.duration_s, x.gpu) = ("r0.json".into(), 1.5, 60.0, Some(0));
    x.gpus = vec![RankGpu {
        index: 0,
        util_p50: Some(50.0),
        ..RankGpu::default()
    }];
    x.findings = vec![RankFinding {
        id: "data_starvation".into(),
        confidence: 0.9,
    }];
    job.stragglers[0].ratio = 2.0;
    (job.start_spread_s, job.overlap_s) = (0.5, 59.0);
    job.nodes = vec![NodeSummary::default()];
    job.imbalance = Some(Imbalance {
        outliers: vec![GpuSpot::default()],
        ..Imbalance::default()
    });
    job.exemplars = vec![Exemplar {
        rank: 1,
        finding: every_text("x").findings.remove(0),
    }];
    let got = job_view(job).report.ranks.expect("ranks read");
    assert_eq!(got, ranks(3, &[1]));
}

#[test]
fn a_report_without_ranks_has_no_section_and_damaged_ranks_say_where() {
    let plain = View::new(one_gpu(vec![1.0], vec![2.0]));
    assert_eq!(ranks_html(&plain.report), "");
    let empty: Report = {
        let mut r = one_gpu(vec![1.0], vec![2.0]);
        r.ranks = Some(Default::default());
        r
    };
    assert_eq!(ranks_html(&empty), "");
    let null = br#"{"schema":"gpuwhy.report/1","ranks":null}"#;
    let v = View::load(null, "r.json")
        .map_err(|e| e.message)
        .expect("opens");
    assert_eq!(v.report.ranks, None);
    for (ranks, says) in [
        (r#"{"ranks":[{"rank":-1}]}"#, "number out of range"),
        (
            r#"{"ranks":[{"rank":0,"host":7}]}"#,
            "invalid type: integer",
        ),
        (
            r#"{"ranks":[{"steps":{"phases":{"data":{"p50_s":"x"}}}}]}"#,
            "invalid type: string",
        ),
        (
            r#"{"stragglers":[{"rank":1,"phase":null}]}"#,
            "invalid type: null",
        ),
        (r#"{"missing":{}}"#, "expected an array"),
        (r#"[1,2]"#, "expected an object"),
    ] {
        let json = format!(r#"{{"schema":"gpuwhy.report/1","ranks":{ranks}}}"#);
        let e = View::load(json.as_bytes(), "r.json")
            .err()
            .expect("refused");
        assert_eq!(e.kind, "damaged", "{json}: {}", e.message);
        assert!(e.message.contains(says), "{json}: {}", e.message);
    }
}

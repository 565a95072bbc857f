//! Identical per-GPU lines collapse into one naming the GPUs ("GPUs 0–7"), as the command
//! line prints them: a finding's evidence and the GPUs' capability lists.

use gpuwhy::report::{Capability, Evidence};
use gpuwhy_viewer::page::{overview, tables};

use crate::fixtures::{every_text, one_gpu};

fn evidence(device: u32, value: f64) -> Evidence {
    Evidence {
        metric: "util_gpu p50".into(),
        value,
        threshold: 90.0,
        comparison: "<".into(),
        unit: "%".into(),
        device: Some(device),
        time_range: None,
        agrees: true,
        weight: None,
    }
}

/// Eight GPUs; GPU 5 alone lacks `pcie_rx`'s reason and reads another utilization.
fn eight_gpus() -> gpuwhy::report::Report {
    let mut r = one_gpu(vec![50.0; 20], vec![60.0; 20]);
    let d0 = r.devices[0].clone();
    r.devices = (0..8)
        .map(|i| {
            let mut d = d0.clone();
            d.index = i;
            d.uuid = Some(format!("GPU-uuid-{i}"));
            if i == 5 {
                d.capabilities
                    .insert("pcie_rx".into(), Capability::unavailable("NO_PERMISSION"));
            }
            d
        })
        .collect();
    let mut f = every_text("x").findings[0].clone();
    f.evidence = (0..8)
        .map(|i| evidence(i, if i == 5 { 20.0 } else { 45.0 }))
        .collect();
    f.devices = (0..8).collect();
    r.findings = vec![f];
    r
}

#[test]
fn identical_evidence_rows_are_one_row_naming_the_gpus() {
    let html = overview::findings_html(&eight_gpus());
    assert!(
        html.contains(" · GPUs 0–7</p>"),
        "the card names its GPUs: {html}"
    );
    let rows: Vec<&str> = html.split("<tr class=").skip(1).collect();
    assert_eq!(rows.len(), 2, "{html}");
    assert!(
        rows[0].contains(">45<") && rows[0].contains("<td>0–4, 6, 7</td>"),
        "{}",
        rows[0]
    );
    assert!(
        rows[1].contains(">20<") && rows[1].contains("<td>5</td>"),
        "{}",
        rows[1]
    );
}

#[test]
fn gpus_with_the_same_capabilities_share_one_list() {
    let html = tables::devices_html(&eight_gpus());
    assert_eq!(
        html.matches("<details class=\"caps\">").count(),
        2,
        "{html}"
    );
    assert!(
        html.contains("GPUs 0–4, 6, 7: 1 of 2 metrics available"),
        "{html}"
    );
    assert!(html.contains("GPU 5: 1 of 2 metrics available"), "{html}");
    // Each GPU's UUID is still shown, under its group.
    for i in 0..8 {
        assert_eq!(html.matches(&format!("GPU-uuid-{i}<")).count(), 1, "{html}");
    }
    // The device table keeps one row per GPU; the two lists have two metrics each.
    assert_eq!(
        html.matches("<tr><th scope=\"row\">").count(),
        8 + 2 * 2,
        "{html}"
    );
}

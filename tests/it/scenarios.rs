//! Every bundled scenario, recorded through the real loader with its workload replayed by
//! the demo trainer, yields its expected top finding, reports every finding of
//! `expect.also` and none of `expect.absent`.

use gpuwhy_tests::{check, expected, record, scenario, scenario_names, Run};

#[test]
fn every_bundled_scenario_yields_its_expected_findings() {
    let names = scenario_names();
    assert!(
        names.len() >= 36,
        "a firing scenario and a near miss per rule, found {names:?}"
    );
    let runs: Vec<_> = names
        .iter()
        .map(|n| {
            let n = *n;
            std::thread::spawn(move || {
                let text = scenario(n).expect("listed");
                (n, expected(text), record(text, &Run::default()))
            })
        })
        .collect();
    let mut wrong = Vec::new();
    for h in runs {
        let (name, expected, got) = h.join().expect("scenario thread");
        let expected =
            expected.unwrap_or_else(|| panic!("scenario {name} has no expect.top_finding"));
        match got {
            Ok(r) => {
                let outcome = check(&expected, &r);
                println!(
                    "{name:<30} expected {:<18} got {:<18} confidence {:.2}  {}",
                    expected.top,
                    r.verdict.id,
                    r.verdict.confidence,
                    outcome.describe(&expected)
                );
                if !outcome.ok() {
                    // What a rare miss needs to be understood from the CI log alone: every
                    // finding with its confidence and lost share, and how late the sampler was.
                    let findings: Vec<String> = r
                        .findings
                        .iter()
                        .map(|f| format!("{} {:.2} lost {:?}", f.id, f.confidence, f.lost_share))
                        .collect();
                    let o = &r.overhead;
                    wrong.push(format!(
                        "{name}: {} ({})\n  findings: {}\n  ticks {}, late {}, skipped {}, calls {}",
                        outcome.describe(&expected),
                        r.verdict.summary,
                        findings.join("; "),
                        o.ticks,
                        o.late_ticks,
                        o.skipped_ticks,
                        o.nvml_calls
                    ));
                }
            }
            Err(e) => wrong.push(format!("{name}: recording failed: {e}")),
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_demo_trainers_phases_line_up_with_what_the_simulated_gpu_plays() {
    let text = scenario("data_starvation").expect("bundled");
    let report = record(text, &Run::default()).expect("records");
    let st = report
        .steps
        .as_ref()
        .expect("the trainer's steps reached the report");
    assert!(
        (13..=15).contains(&st.count),
        "{} steps of 1 s in 15 s",
        st.count
    );
    let data = &st.phase_durations["data"].0;
    // Samples well inside each data phase show the idle GPU, inside compute the busy one.
    let series = &report.series[0].data;
    let util = &series.metrics["util_gpu"].0;
    let at = |lo: f64, hi: f64| -> Vec<f32> {
        (0..series.t.len())
            .filter(|&i| series.t[i] > lo && series.t[i] < hi && !util[i].is_nan())
            .map(|i| util[i])
            .collect()
    };
    // A row lags the GPU by up to one utilization sample period: NVML's utilization
    // describes the period just past, and the simulator answers its newest sample, one every
    // 1/6 s (docs/nvml-facts.md, "Sampling periods and call cost").
    let lag = 1.0 / 6.0;
    let mut checked = 0;
    for (t, d) in st.t.iter().zip(data) {
        let f = t + f64::from(*d);
        let idle = at(t + 0.08 + lag, f - 0.08);
        let busy = at(f + 0.08 + lag, f + 0.45);
        assert!(
            idle.iter().all(|u| *u <= 10.0),
            "data phase at {t}: {idle:?}"
        );
        assert!(busy.iter().all(|u| *u >= 90.0), "compute at {f}: {busy:?}");
        checked += idle.len() + busy.len();
    }
    // The windows hold about 1.2 idle and 2 busy rows a step after the lag (~45 in all).
    assert!(checked >= 35, "only {checked} samples compared");
}

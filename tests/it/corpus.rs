//! The accuracy corpus's real cases (`tests/corpus/`, docs/accuracy.md) keep every match the
//! committed baseline records. The simulated cases take wall time and run in
//! `cargo xtask accuracy`; any one case, real or simulated, runs alone with
//! `gpuwhy_tests::corpus::run_named`, as `real_case_runs_alone_by_name` shows.

use gpuwhy_tests::corpus::{self, Baseline, Origin};

#[test]
fn real_cases_keep_the_matches_of_the_baseline() {
    let cases = corpus::load().expect("the corpus loads");
    let baseline = Baseline::load(&corpus::baseline_path()).expect("the baseline loads");
    let mut regressed = Vec::new();
    let mut real = 0;
    for case in cases
        .iter()
        .filter(|c| matches!(c.origin, Origin::Real { .. }))
    {
        real += 1;
        let got = corpus::run(case);
        let j = corpus::judge(case, &got);
        if baseline.matched.contains(&case.name) && !j.matched {
            regressed.push(format!("{}: {}", case.name, j.why));
        }
    }
    assert!(real >= 10, "only {real} real cases");
    assert!(regressed.is_empty(), "regressed: {regressed:#?}");
}

#[test]
fn real_case_runs_alone_by_name() {
    let (case, got) = corpus::run_named("kineto_resnet50_workers0").expect("the case exists");
    assert_eq!(case.expect.top, "data_starvation");
    assert!(got.error.is_none(), "{:?}", got.error);
    // The trace's GPU is idle about a third of the traced span.
    let idle = got.idle_share.expect("a trace has a busy share");
    assert!((0.2..0.5).contains(&idle), "idle {idle}");
    assert!(corpus::run_named("no_such_case").is_err());
}

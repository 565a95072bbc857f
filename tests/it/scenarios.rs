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
                    wrong.push(format!(
                        "{name}: {} ({})",
                        outcome.describe(&expected),
                        r.verdict.summary
                    ));
                }
            }
            Err(e) => wrong.push(format!("{name}: recording failed: {e}")),
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Markers written down with their simulated time (wall since the recorder started × speed).
struct Log {
    origin: std::time::Instant,
    speed: f64,
    calls: std::rc::Rc<std::cell::RefCell<Vec<(f64, String)>>>,
}

impl Log {
    fn push(&self, what: String) {
        let t = self.origin.elapsed().as_secs_f64() * self.speed;
        self.calls.borrow_mut().push((t, what));
    }
}

impl gpuwhy_tests::Markers for Log {
    fn step_begin(&self) {
        self.push("begin".into());
    }
    fn phase(&self, name: &str) {
        self.push(format!("phase {name}"));
    }
    fn step_end(&self) {
        self.push("end".into());
    }
    fn event(&self, name: &str) {
        self.push(format!("event {name}"));
    }
    fn gpu_phase(&self, name: &str, seconds: f64) {
        self.push(format!("gpu {name} {seconds}"));
    }
}

#[test]
fn the_demo_trainer_marks_phases_when_the_simulated_gpu_plays_them() {
    let calls = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let text = scenario("data_starvation").expect("bundled");
    let run = Run::default();
    let report = gpuwhy_tests::record_with(text, &run, &|_| {
        Box::new(Log {
            origin: std::time::Instant::now(),
            speed: run.speed,
            calls: std::rc::Rc::clone(&calls),
        })
    })
    .expect("records");
    let calls = calls.borrow();
    let steps = calls.iter().filter(|(_, c)| c == "end").count();
    assert!((13..=15).contains(&steps), "{steps} steps of 1 s in 15 s");
    let data_starts: Vec<f64> = calls
        .iter()
        .filter(|(_, c)| c == "phase data")
        .map(|(t, _)| *t)
        .collect();
    let compute_starts: Vec<f64> = calls
        .iter()
        .filter(|(_, c)| c == "phase forward")
        .map(|(t, _)| *t)
        .collect();
    // Samples well inside each data phase show the idle GPU, inside compute the busy one.
    let series = &report.series[0].data;
    let util = &series.metrics["util_gpu"].0;
    let at = |lo: f64, hi: f64| -> Vec<f32> {
        (0..series.t.len())
            .filter(|&i| series.t[i] > lo && series.t[i] < hi && !util[i].is_nan())
            .map(|i| util[i])
            .collect()
    };
    let mut checked = 0;
    for (d, f) in data_starts.iter().zip(&compute_starts) {
        let idle = at(d + 0.08, f - 0.08);
        let busy = at(f + 0.08, f + 0.45);
        assert!(
            idle.iter().all(|u| *u <= 10.0),
            "data phase at {d}: {idle:?}"
        );
        assert!(busy.iter().all(|u| *u >= 90.0), "compute at {f}: {busy:?}");
        checked += idle.len() + busy.len();
    }
    assert!(checked > 60, "{checked} samples checked");
}

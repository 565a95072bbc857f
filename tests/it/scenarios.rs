//! Every bundled scenario, recorded through the real loader, yields its expected top finding.

use gpuwhy_tests::{expected_top, record, scenario, scenario_names, Run};

#[test]
fn every_bundled_scenario_yields_its_expected_top_finding() {
    let names = scenario_names();
    assert!(
        names.len() >= 8,
        "the foundation ships at least eight scenarios, found {names:?}"
    );
    let runs: Vec<_> = names
        .iter()
        .map(|n| {
            let n = *n;
            std::thread::spawn(move || {
                let text = scenario(n).expect("listed");
                (n, expected_top(text), record(text, &Run::default()))
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
                println!(
                    "{name:<20} expected {expected:<16} got {:<16} confidence {:.2}",
                    r.verdict.id, r.verdict.confidence
                );
                if r.verdict.id != expected {
                    wrong.push(format!(
                        "{name}: expected {expected}, got {} ({})",
                        r.verdict.id, r.verdict.summary
                    ));
                }
            }
            Err(e) => wrong.push(format!("{name}: recording failed: {e}")),
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

//! `cargo xtask scenarios`: every bundled scenario recorded through the simulator, with its
//! expected and actual top finding.

use anyhow::Result;
use gpuwhy_tests::{expected_top, record, scenario, scenario_names, Run};

/// Prints the table; returns how many scenarios did not match.
pub fn run(_args: &[String]) -> Result<usize> {
    let names = scenario_names();
    let handles: Vec<_> = names
        .iter()
        .map(|n| {
            let n = *n;
            std::thread::spawn(move || {
                let text = scenario(n).expect("listed scenario exists");
                (n, expected_top(text), record(text, &Run::default()))
            })
        })
        .collect();
    println!(
        "{:<22} {:<18} {:<18} {:>10}  match",
        "scenario", "expected", "actual", "confidence"
    );
    let mut failed = 0;
    for h in handles {
        let (name, expected, got) = h
            .join()
            .map_err(|_| anyhow::anyhow!("a scenario thread panicked"))?;
        let expected = expected.unwrap_or_else(|| "-".into());
        match got {
            Ok(r) => {
                let ok = r.verdict.id == expected;
                failed += usize::from(!ok);
                println!(
                    "{name:<22} {expected:<18} {:<18} {:>10.2}  {}",
                    r.verdict.id,
                    r.verdict.confidence,
                    if ok { "yes" } else { "NO" }
                );
            }
            Err(e) => {
                failed += 1;
                println!(
                    "{name:<22} {expected:<18} {:<18} {:>10}  NO ({e})",
                    "error", "-"
                );
            }
        }
    }
    println!(
        "{} scenarios, {} matched, {failed} failed",
        names.len(),
        names.len() - failed
    );
    Ok(failed)
}

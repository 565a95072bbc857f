//! `cargo xtask scenarios`: every bundled scenario recorded through the simulator (its
//! workload replayed by the demo trainer), with its expected and actual top finding and the
//! findings that are missing (`expect.also`) or must not be there (`expect.absent`).

use anyhow::Result;
use gpuwhy_tests::{check, expected, record, scenario, scenario_names, Run};

/// Prints the table (of the scenarios named in `args`, or all); returns how many did not
/// match.
pub fn run(args: &[String]) -> Result<usize> {
    // `cargo xtask scenarios NAME…` plays only the scenarios named.
    let names: Vec<&str> = scenario_names()
        .into_iter()
        .filter(|n| args.is_empty() || args.iter().any(|a| a == n))
        .collect();
    let handles: Vec<_> = names
        .iter()
        .map(|n| {
            let n = *n;
            std::thread::spawn(move || {
                let text = scenario(n).expect("listed scenario exists");
                (n, expected(text), record(text, &Run::default()))
            })
        })
        .collect();
    println!(
        "{:<28} {:<18} {:<18} {:>10}  match",
        "scenario", "expected", "actual", "confidence"
    );
    let mut failed = 0;
    for h in handles {
        let (name, expected, got) = h
            .join()
            .map_err(|_| anyhow::anyhow!("a scenario thread panicked"))?;
        let Some(expected) = expected else {
            failed += 1;
            println!("{name:<28} {:<18} NO (no expect.top_finding)", "-");
            continue;
        };
        match got {
            Ok(r) => {
                let outcome = check(&expected, &r);
                failed += usize::from(!outcome.ok());
                let ids: Vec<&str> = r.findings.iter().map(|f| f.id.as_str()).collect();
                println!(
                    "{name:<28} {:<18} {:<18} {:>10.2}  {}",
                    expected.top,
                    r.verdict.id,
                    r.verdict.confidence,
                    if outcome.ok() {
                        "yes".to_string()
                    } else {
                        format!(
                            "NO ({}; found [{}])",
                            outcome.describe(&expected),
                            ids.join(", ")
                        )
                    }
                );
            }
            Err(e) => {
                failed += 1;
                println!(
                    "{name:<28} {:<18} {:<18} {:>10}  NO ({e})",
                    expected.top, "error", "-"
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

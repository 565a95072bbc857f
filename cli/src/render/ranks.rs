//! The per-rank table of a merged job report (`gpuwhy merge`'s `ranks` section), as
//! `gpuwhy diagnose job.json` prints it: one line per rank, sorted by rank, with each rank's
//! slowest phase against the other ranks; for large jobs the stragglers and the first ranks.

use std::fmt::Write;

use gpuwhy::merge::{rank_list, rank_table};
use gpuwhy::report::RanksData;

/// The table, with a heading line; empty for a report without ranks. Which ranks are
/// listed and each row's numbers are core's [`rank_table`] (the browser viewer draws the
/// same rows); this only lays them out.
pub fn table(r: &RanksData) -> String {
    let mut out = String::new();
    let t = rank_table(r);
    if t.total == 0 {
        return out;
    }
    let _ = writeln!(
        out,
        "\nRanks ({} of {}, by rank; slowest phase: its p50 against the other ranks' median):",
        t.rows.len(),
        t.total
    );
    let host_w = (t.rows.iter())
        .map(|x| x.host.len())
        .max()
        .unwrap_or(4)
        .clamp(4, 24);
    let _ = writeln!(
        out,
        "  {:>5}  {:<host_w$}  {:>5}  {:>6}  {:>9}  {:<26}  {:>5}  straggler",
        "rank", "host", "local", "steps", "step p50", "slowest phase p50", "util"
    );
    let dash = || "-".to_string();
    for x in &t.rows {
        let host: String = x.host.chars().take(host_w).collect();
        let local = x.local_rank.map_or_else(dash, |l| l.to_string());
        let count = x.steps.map_or_else(dash, |c| c.to_string());
        let step = x.step_p50_s.map_or_else(dash, |s| format!("{s:.3} s"));
        let slow = x.slowest.map_or_else(dash, |p| {
            format!("{} {:.3} s ×{:.2}", p.name, p.p50_s, p.ratio)
        });
        let util = x.util_p50.map_or_else(dash, |u| format!("{u:.0}%"));
        let flag = x
            .straggler
            .map_or_else(String::new, |phase| format!("yes ({phase})"));
        let _ = writeln!(
            out,
            "  {:>5}  {:<host_w$}  {:>5}  {:>6}  {:>9}  {:<26}  {:>5}  {flag}",
            x.rank, host, local, count, step, slow, util
        );
    }
    if t.omitted > 0 {
        let hidden = &t.hidden_stragglers;
        let more = if hidden.is_empty() {
            String::new()
        } else {
            format!(
                ", {} of them stragglers ({})",
                hidden.len(),
                rank_list(hidden)
            )
        };
        let _ = writeln!(
            out,
            "  … {} more ranks not listed{more}; `gpuwhy diagnose --json` lists every rank",
            t.omitted
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpuwhy::merge::{FIRST_RANKS, MAX_STRAGGLER_ROWS};
    use gpuwhy::report::{PhaseTimes, RankSteps, RankSummary, Straggler};

    fn row(rank: u32, data_s: f64) -> RankSummary {
        let t = |p50_s| PhaseTimes {
            p50_s,
            p95_s: p50_s,
        };
        RankSummary {
            rank,
            host: format!("node-{}", rank / 8),
            local_rank: Some(rank % 8),
            util_p50: Some(90.0),
            steps: Some(RankSteps {
                count: 100,
                step: t(0.4 + data_s),
                phases: [("data".into(), t(data_s)), ("forward".into(), t(0.4))]
                    .into_iter()
                    .collect(),
            }),
            ..RankSummary::default()
        }
    }

    fn job(n: u32, slow: &[u32]) -> RanksData {
        let mut ranks: Vec<RankSummary> = (0..n)
            .map(|r| row(r, if slow.contains(&r) { 0.2 } else { 0.1 }))
            .collect();
        ranks.reverse(); // the table sorts
        RanksData {
            stragglers: slow
                .iter()
                .map(|&rank| Straggler {
                    rank,
                    phase: "data".into(),
                    ..Straggler::default()
                })
                .collect(),
            ranks,
            ..RanksData::default()
        }
    }

    #[test]
    fn a_small_job_lists_every_rank_in_order_with_the_straggler_flagged() {
        let t = table(&job(8, &[5]));
        let lines: Vec<&str> = t.lines().filter(|l| l.contains("node-")).collect();
        assert_eq!(lines.len(), 8, "{t}");
        let first: Vec<&str> = lines[0].split_whitespace().collect();
        assert_eq!(&first[..5], ["0", "node-0", "0", "100", "0.500"], "{t}");
        let five = lines[5];
        assert!(five.trim_start().starts_with("5 "), "{t}");
        assert!(
            five.contains("data 0.200 s ×2.00") && five.contains("yes (data)"),
            "{t}"
        );
        assert!(!lines[4].contains("yes"), "{t}");
        assert!(!t.contains("not listed"), "{t}");
    }

    #[test]
    fn a_thousand_ranks_show_the_stragglers_and_the_first_few_and_say_how_many_are_left() {
        let slow: Vec<u32> = (0..30).map(|i| 100 + 30 * i).collect();
        let t = table(&job(1000, &slow));
        let rows = t.lines().filter(|l| l.contains("node-")).count();
        assert_eq!(rows, FIRST_RANKS + MAX_STRAGGLER_ROWS, "{t}");
        assert!(t.contains(&format!("Ranks ({rows} of 1000")), "{t}");
        let omitted = 1000 - rows;
        assert!(
            t.contains(&format!(
                "… {omitted} more ranks not listed, 6 of them stragglers"
            )),
            "{t}"
        );
        // The stragglers listed are the first ones (largest excess), in rank order.
        assert!(t.contains("\n    100  node-12"), "{t}");
        assert!(
            t.lines().count() < 40,
            "compact: {} lines",
            t.lines().count()
        );
    }
}

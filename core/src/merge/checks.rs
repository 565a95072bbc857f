//! Refusing inputs that are not the ranks of one run: a report without a rank, two reports of
//! one rank, ranks that disagree on the world size, ranks that never ran at the same time.
//! Each error names the file and says what to do.

use std::path::PathBuf;

use super::{MergeOptions, RankDigest};
use crate::report::rfc3339_utc;
use crate::{Error, Result};

/// How far apart (seconds) a rank may start after another ended and still count as the same
/// run: room for nodes' clocks that NTP keeps within milliseconds, and for a rank that
/// stopped recording a moment before the slowest one started.
pub const CLOCK_SLACK_S: f64 = 5.0;

fn bad(file: &str, reason: String) -> Error {
    Error::BadReport {
        path: PathBuf::from(file),
        reason,
    }
}

fn end_ms(d: &RankDigest) -> f64 {
    d.run.start_unix_ms as f64 + d.run.duration_s * 1000.0
}

/// Fills in or checks every digest's rank, then sorts the digests by rank.
pub(crate) fn ranks(digests: &mut [RankDigest], opts: &MergeOptions) -> Result<()> {
    if opts.ranks_by_order {
        let n = digests.len() as u32;
        for (i, d) in digests.iter_mut().enumerate() {
            d.run.rank = Some(i as u32);
            d.run.world_size = Some(n);
        }
        return Ok(());
    }
    if let Some(d) = digests.iter().find(|d| d.run.rank.is_none()) {
        return Err(bad(
            &d.file,
            "has no rank (run.rank is null): record each process with RANK and WORLD_SIZE set \
             (torchrun and most launchers set them), or pass --ranks-by-order to number the \
             reports in the order given"
                .into(),
        ));
    }
    digests.sort_by_key(|d| d.run.rank);
    for w in digests.windows(2) {
        if w[0].run.rank == w[1].run.rank {
            return Err(bad(
                &w[1].file,
                format!(
                    "is rank {}, and so is {}: every rank needs its own report (one output path \
                     per rank, e.g. `-o run.rank$RANK.json`); leave out the one from another run",
                    w[1].run.rank.unwrap_or(0),
                    w[0].file
                ),
            ));
        }
    }
    Ok(())
}

/// Checks that the (rank-sorted) digests agree on the world size and ran at the same time.
pub(crate) fn one_run(digests: &[RankDigest], opts: &MergeOptions) -> Result<()> {
    let Some(first) = digests.first() else {
        return Err(Error::InvalidArgument(
            "no rank reports to merge: give one report per rank".into(),
        ));
    };
    if let Some(with) = digests.iter().find(|d| d.run.world_size.is_some()) {
        let ws = with.run.world_size.unwrap_or(0);
        if let Some(d) = digests
            .iter()
            .find(|d| d.run.world_size.is_some_and(|w| w != ws))
        {
            return Err(bad(
                &d.file,
                format!(
                    "says WORLD_SIZE={} but {} says {ws}: these reports are from different jobs; \
                     merge the reports of one job",
                    d.run.world_size.unwrap_or(0),
                    with.file
                ),
            ));
        }
        if let Some(d) = digests.iter().find(|d| d.run.rank.is_some_and(|r| r >= ws)) {
            return Err(bad(
                &d.file,
                format!(
                    "is rank {} but the job's WORLD_SIZE is {ws}: it belongs to another job; \
                     leave it out",
                    d.run.rank.unwrap_or(0)
                ),
            ));
        }
    }
    if opts.force {
        return Ok(());
    }
    let latest = digests
        .iter()
        .max_by_key(|d| d.run.start_unix_ms)
        .unwrap_or(first);
    let earliest_end = digests
        .iter()
        .min_by(|a, b| end_ms(a).total_cmp(&end_ms(b)))
        .unwrap_or(first);
    if latest.run.start_unix_ms as f64 > end_ms(earliest_end) + CLOCK_SLACK_S * 1000.0 {
        return Err(bad(
            &latest.file,
            format!(
                "started at {}, after {} had ended ({}): the ranks of one run record at the \
                 same time, so these are from different runs; merge the reports of one run \
                 (or pass --force if the nodes' clocks disagree)",
                rfc3339_utc(latest.run.start_unix_ms),
                earliest_end.file,
                rfc3339_utc(end_ms(earliest_end) as i64)
            ),
        ));
    }
    Ok(())
}

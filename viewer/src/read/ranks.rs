//! The `ranks` section of a merged job report, read for the page's per-rank table (core's
//! [`rank_table`](gpuwhy::merge::rank_table)) and nothing more: the world size, the missing
//! ranks, each rank's row as far as the table shows it, and the stragglers.
//!
//! Skipped, left at their defaults (the page draws none of them): `start_spread_s`,
//! `overlap_s`, `nodes`, `imbalance` and `exemplars` of the section; `file`, `offset_s`,
//! `duration_s`, `gpu`, `gpus` and `findings` of a rank; `p95_s` of its step and phase
//! times; and of a straggler all but `rank` and `phase`. Each reader still names every
//! field of core's type, so a field core adds does not compile here until it is read or
//! added to this list.

use gpuwhy::report::{PhaseTimes, RankSteps, RankSummary, RanksData, Straggler};

use super::scan::{ReadError, Scan};

type R<T> = Result<T, ReadError>;

/// `ranks`.
pub fn ranks(s: &mut Scan) -> R<RanksData> {
    let mut d = RanksData::default();
    s.fields(&[], &mut |s, k| {
        match k {
            "world_size" => d.world_size = s.opt_int()?,
            "missing" => d.missing = s.list(&mut Scan::int)?,
            "ranks" => d.ranks = s.list(&mut rank)?,
            "stragglers" => d.stragglers = s.list(&mut straggler)?,
            _ => s.skip()?,
        }
        Ok(())
    })?;
    let RanksData {
        world_size: _,
        missing: _,
        start_spread_s: _,
        overlap_s: _,
        ranks: _,
        nodes: _,
        stragglers: _,
        imbalance: _,
        exemplars: _,
    } = &d;
    Ok(d)
}

/// One of `ranks.ranks`.
fn rank(s: &mut Scan) -> R<RankSummary> {
    let mut r = RankSummary::default();
    s.fields(&[], &mut |s, k| {
        match k {
            "rank" => r.rank = s.int()?,
            "host" => r.host = s.string()?,
            "local_rank" => r.local_rank = s.opt_int()?,
            "complete" => r.complete = s.bool()?,
            "util_p50" => r.util_p50 = s.opt_f64()?,
            "steps" => r.steps = s.nullable(steps)?,
            _ => s.skip()?,
        }
        Ok(())
    })?;
    let RankSummary {
        rank: _,
        host: _,
        local_rank: _,
        file: _,
        offset_s: _,
        duration_s: _,
        complete: _,
        gpu: _,
        util_p50: _,
        gpus: _,
        steps: _,
        findings: _,
    } = &r;
    Ok(r)
}

/// A rank's `steps`.
fn steps(s: &mut Scan) -> R<RankSteps> {
    let mut st = RankSteps::default();
    s.fields(&[], &mut |s, k| {
        match k {
            "count" => st.count = s.int()?,
            "step" => st.step = times(s)?,
            "phases" => st.phases = s.map(&mut times)?,
            _ => s.skip()?,
        }
        Ok(())
    })?;
    let RankSteps {
        count: _,
        step: _,
        phases: _,
    } = &st;
    Ok(st)
}

/// A step's or phase's times: the median (`null` read as NaN, as core reads it).
fn times(s: &mut Scan) -> R<PhaseTimes> {
    let mut t = PhaseTimes::default();
    s.fields(&[], &mut |s, k| match k {
        "p50_s" => s.f64_or_nan().map(|v| t.p50_s = v),
        _ => s.skip(),
    })?;
    let PhaseTimes { p50_s: _, p95_s: _ } = &t;
    Ok(t)
}

/// One of `ranks.stragglers`.
fn straggler(s: &mut Scan) -> R<Straggler> {
    let mut g = Straggler::default();
    s.fields(&[], &mut |s, k| {
        match k {
            "rank" => g.rank = s.int()?,
            "phase" => g.phase = s.string()?,
            _ => s.skip()?,
        }
        Ok(())
    })?;
    let Straggler {
        rank: _,
        host: _,
        phase: _,
        p50_s: _,
        others_p50_s: _,
        ratio: _,
        excess_s: _,
        step_p50_s: _,
    } = &g;
    Ok(g)
}

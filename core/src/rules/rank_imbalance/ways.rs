//! The three ways `rank_imbalance` reads a straggler from samples (see the parent module):
//! the wait pattern, time-weighted utilization, and power at equal utilization.

use super::{
    gpus, lined_up_needed, median, others, verb, waits_coincide, Straggle, CLOCK_GAP,
    MAX_UTIL_SPREAD, MIN_WAIT_GAP, POWER_GAP,
};
use crate::report::{Comparator, Evidence};
use crate::rules::{evidence, round};
use crate::signals::cross::GpuActivity;
use crate::signals::Signals;

/// The ways of counting a GPU's wait share: the larger of the two per GPU
/// ([`GpuActivity::wait_share`]), and each alone ([`GpuActivity::wait_by`]: below the busy
/// level, at low power).
const WAYS: [fn(&GpuActivity) -> f64; 3] = [|a| a.wait_share, |a| a.wait_by.0, |a| a.wait_by.1];

/// How much less of the time the GPUs `devs` wait than the others, counted the way
/// ([`WAYS`]) that shows the largest gap: (gap, the others' median wait, the least wait
/// among `devs`). Each way compares like with like; the larger-per-GPU way alone can set a
/// straggler's short phases caught by utilization samples against the others' waits at low
/// power, and hide a straggler costing 10 % of each step (the accuracy corpus's
/// `straggler_mild_10pct` per tick: 0.045 that way, 0.07 to 0.09 at low power alone).
fn wait_gap(acts: &[GpuActivity], devs: &[u32]) -> Option<(f64, f64, f64)> {
    WAYS.iter()
        .filter_map(|way| {
            let rest = others(acts, devs, way)?;
            let least = acts
                .iter()
                .filter(|a| devs.contains(&a.index))
                .map(way)
                .fold(f64::INFINITY, f64::min);
            least.is_finite().then_some((rest - least, rest, least))
        })
        .max_by(|x, y| x.0.total_cmp(&y.0))
}

/// The wait pattern: GPUs that wait at least [`MIN_WAIT_GAP`] less of the time than the
/// others (fewer than half of the GPUs), while the others did work.
pub(super) fn by_wait(s: &Signals) -> Option<Straggle> {
    let acts = &s.cross.activity;
    let stragglers: Vec<&GpuActivity> = acts
        .iter()
        .filter(|a| wait_gap(acts, &[a.index]).is_some_and(|g| g.0 >= MIN_WAIT_GAP))
        .collect();
    if stragglers.is_empty() || stragglers.len() * 2 > acts.len() {
        return None;
    }
    let devs: Vec<u32> = stragglers.iter().map(|a| a.index).collect();
    let (lost, others_wait, least) = wait_gap(acts, &devs)?;
    let others_util = others(acts, &devs, |o| o.util_mean)?;
    // Waiting GPUs that never worked are not waiting for anyone (an idle GPU next to a busy one).
    if others_util < crate::signals::DIP_UTIL {
        return None;
    }
    let mut ev = vec![evidence(
        "others' wait share minus the straggler's (time-weighted)",
        lost,
        Comparator::AtLeast,
        MIN_WAIT_GAP,
        "fraction",
        None,
    )];
    for a in acts {
        ev.push(evidence(
            "wait share (idle, or well below its own level)",
            a.wait_share,
            Comparator::AtLeast,
            0.0,
            "fraction",
            Some(a.index),
        ));
    }
    let conf = lockstep(s, &devs, lost, &mut ev)?;
    let (together, e) = waits_coincide(s, least);
    if !together {
        return None;
    }
    ev.extend(e);
    Some(Straggle {
        basis: "time-weighted: the share of time the other GPUs wait (idle, or well below their own level) minus the straggler's own",
        summary: format!(
            "The other GPUs wait {:.0}% of the time (idle, or working well below their own level: busy at low power inside a collective, or a drop in utilization) and {} {:.0}%: about {:.0}% of every step is spent waiting for {} (time-weighted over {:.0} s of samples).",
            others_wait * 100.0,
            verb(&devs, "waits", "wait"),
            least * 100.0,
            lost * 100.0,
            gpus(&devs),
            acts.iter().map(|a| a.seconds).fold(0.0, f64::max)
        ),
        devices: devs,
        lost,
        evidence: ev,
        confidence: conf,
    })
}

/// Utilization: per-GPU medians spread more than [`MAX_UTIL_SPREAD`], or one GPU's
/// time-weighted mean that far from the others'.
pub(super) fn by_util(s: &Signals) -> Option<Straggle> {
    let spread = s.cross.util_p50_spread.unwrap_or(0.0);
    let acts = &s.cross.activity;
    let mean_outlier = acts
        .iter()
        .filter_map(|a| others(acts, &[a.index], |o| o.util_mean).map(|o| (a, a.util_mean - o)))
        .max_by(|x, y| x.1.abs().total_cmp(&y.1.abs()));
    // A GPU busier on average than the rest is a straggler only if the others wait at the
    // same moments while it works (lined-up samples, when there are any).
    let lines_up = |d: u32, gap: f64| {
        s.cross.aligned_samples == 0
            || s.cross
                .lone_working
                .is_some_and(|(w, share)| w == d && share >= lined_up_needed(gap))
    };
    let mean_hit = acts
        .iter()
        .filter_map(|a| others(acts, &[a.index], |o| o.util_mean).map(|o| (a, a.util_mean - o)))
        .filter(|(a, d)| {
            *d > MAX_UTIL_SPREAD
                && lines_up(a.index, d / 100.0)
                && waits_coincide(s, a.wait_share).0
        })
        .max_by(|x, y| x.1.total_cmp(&y.1));
    if spread <= MAX_UTIL_SPREAD && mean_hit.is_none() {
        return None;
    }
    let outlier = match mean_hit {
        Some((a, _)) => a.index,
        None => s.cross.util_outlier?.0,
    };
    let (distance, basis) = util_distance(s, outlier)?;
    let n = acts.len().max(s.cross.util_p50_by_device.len()).max(2) as f64;
    // A GPU busier than the rest holds them up: they idle `distance` points of the time. A
    // GPU idler than the rest waits alone: the job loses that GPU's share only.
    let lost = if distance > 0.0 {
        distance / 100.0
    } else {
        -distance / 100.0 / n
    };
    let ev = util_evidence(s, spread, mean_outlier);
    let how = if distance > 0.0 {
        "busier than"
    } else {
        "idler than"
    };
    Some(Straggle {
        basis: "time-weighted: the gap in mean utilization between the straggler and the other GPUs",
        devices: vec![outlier],
        lost,
        summary: format!(
            "GPU {outlier} is {:.0} points {how} the other GPUs ({basis}; spread of medians {spread:.0} points); in synchronous training {}. About {:.0}% of the job's time is lost, estimated from that gap.",
            distance.abs(),
            if distance > 0.0 { "the others wait for it" } else { "it waits for the others" },
            lost * 100.0
        ),
        evidence: ev,
        confidence: 0.7,
    })
}

/// Power at equal utilization and equal (or unrecorded) clocks: the GPUs split into two
/// groups [`POWER_GAP`] apart; the smaller group is named.
pub(super) fn by_power(s: &Signals) -> Option<Straggle> {
    let acts = &s.cross.activity;
    let by_limit = acts.iter().all(|a| a.power_limit.is_some_and(|l| l > 0.0));
    if acts.len() < 2 || (!by_limit && acts.iter().any(|a| a.name != acts[0].name)) {
        return None;
    }
    let (p, k, gap) = power_split(acts, by_limit)?;
    let (low, high) = p.split_at(k + 1);
    let clock =
        |g: &[(&GpuActivity, f64)]| median(g.iter().filter_map(|x| x.0.clock_loaded).collect());
    let clocks = clock(low).zip(clock(high));
    // A lower clock on the low-power group is throttling's finding, not this one.
    if clocks.is_some_and(|(l, h)| h > 0.0 && (h - l) / h >= CLOCK_GAP) {
        return None;
    }
    let high_named = high.len() < low.len();
    let named: Vec<u32> = if high_named { high } else { low }
        .iter()
        .map(|x| x.0.index)
        .collect();
    let mut ev = vec![evidence(
        "loaded power gap between the GPU groups (1 − low/high)",
        gap,
        Comparator::AtLeast,
        POWER_GAP,
        "fraction",
        None,
    )];
    // Memory activity follows the work: the group drawing more power should move more data.
    let mem =
        |g: &[(&GpuActivity, f64)]| median(g.iter().filter_map(|x| x.0.util_mem_loaded).collect());
    let mut mem_agrees = false;
    if let (Some(l), Some(h)) = (mem(low), mem(high)) {
        let e = evidence(
            "memory activity under load, high-power group minus low",
            h - l,
            Comparator::Above,
            0.0,
            "points",
            None,
        );
        mem_agrees = e.agrees;
        ev.push(e);
    }
    let reading = if high_named {
        "it computes while the others wait at high utilization but low power (inside a collective)"
    } else {
        "they do less work (or wait inside a collective) while the others compute"
    };
    let (clocks_seen, reading) = match clocks {
        Some(_) => ("equal clocks", reading.to_string()),
        None => (
            "no clocks recorded",
            format!(
                "{reading} — or the others' clocks are held down, which recorded clocks would tell"
            ),
        ),
    };
    Some(Straggle {
        basis: "lower bound: the power gap between the GPUs under load at equal utilization (a waiting GPU draws more than zero)",
        summary: format!(
            "At equal utilization ({clocks_seen}) {} {:.0}% {} power than the others under load: {reading}. About {:.0}% of the time is lost, a lower bound estimated from the power gap (a wait draws more than zero).",
            verb(&named, "draws", "draw"),
            gap * 100.0,
            if high_named { "more" } else { "less" },
            gap * 100.0
        ),
        devices: named,
        lost: gap,
        evidence: ev,
        confidence: if clocks.is_some() { 0.6 } else { 0.45 } + if mem_agrees { 0.1 } else { 0.0 },
    })
}

/// The confidence of a wait pattern from lined-up samples: in synchronous training the
/// others wait at the same moments while the straggler works; independent jobs that merely
/// wait different amounts do not line up so (`None`: a lone straggler that does not).
fn lockstep(s: &Signals, devs: &[u32], lost: f64, ev: &mut Vec<Evidence>) -> Option<f64> {
    let mut conf: f64 = 0.5;
    if s.cross.aligned_samples > 0 && devs.len() == 1 {
        let share = s
            .cross
            .lone_working
            .filter(|(d, _)| *d == devs[0])
            .map_or(0.0, |l| l.1);
        let e = evidence(
            "share of sample times it works while all others wait",
            share,
            Comparator::AtLeast,
            round(lined_up_needed(lost)),
            "fraction",
            Some(devs[0]),
        );
        if !e.agrees {
            return None;
        }
        conf = 0.85;
        ev.push(e);
    } else if s.cross.aligned_samples > 0 {
        conf = 0.7;
    }
    Some(conf)
}

/// How far `outlier`'s utilization is from the others': the gap in time-weighted mean
/// utilization where samples allow, else in medians; with which of the two it is.
fn util_distance(s: &Signals, outlier: u32) -> Option<(f64, &'static str)> {
    let acts = &s.cross.activity;
    let mine = acts.iter().find(|a| a.index == outlier);
    let found = match mine.zip(others(acts, &[outlier], |o| o.util_mean)) {
        Some((a, o)) => (a.util_mean - o, "time-weighted mean utilization"),
        None => {
            let p50s = &s.cross.util_p50_by_device;
            let mine = p50s.iter().find(|u| u.0 == outlier)?.1;
            let rest = median(
                p50s.iter()
                    .filter(|u| u.0 != outlier)
                    .map(|u| u.1)
                    .collect(),
            )?;
            (mine - rest, "median utilization")
        }
    };
    Some(found)
}

/// The spread of per-GPU medians, the outlier's distance in mean utilization, and each
/// GPU's median.
fn util_evidence(
    s: &Signals,
    spread: f64,
    mean_outlier: Option<(&GpuActivity, f64)>,
) -> Vec<Evidence> {
    let mut ev = vec![evidence(
        "spread of per-GPU util_gpu p50",
        spread,
        Comparator::Above,
        MAX_UTIL_SPREAD,
        "points",
        None,
    )];
    if let Some((a, d)) = mean_outlier {
        ev.push(evidence(
            "distance of time-weighted mean util from the others' median",
            d.abs(),
            Comparator::Above,
            MAX_UTIL_SPREAD,
            "points",
            Some(a.index),
        ));
    }
    for (d, u) in &s.cross.util_p50_by_device {
        ev.push(evidence(
            "util_gpu p50",
            *u,
            Comparator::AtLeast,
            0.0,
            "%",
            Some(*d),
        ));
    }
    ev
}

/// GPUs with their (scaled) loaded power.
type PowerOrder<'a> = Vec<(&'a GpuActivity, f64)>;

/// The GPUs ordered by loaded power (scaled by their limits when all have one), where the
/// order splits them into two groups with the largest ratio, and the gap there; `None`
/// unless every GPU was under load at about the same utilization and the gap reaches
/// [`POWER_GAP`].
fn power_split(acts: &[GpuActivity], by_limit: bool) -> Option<(PowerOrder<'_>, usize, f64)> {
    let mut p: Vec<(&GpuActivity, f64)> = acts
        .iter()
        .map(|a| a.power_scaled(by_limit).map(|v| (a, v)))
        .collect::<Option<_>>()?;
    // Every GPU must have been under load, at about the same utilization.
    let utils: Vec<f64> = acts.iter().map(|a| a.util_loaded).collect::<Option<_>>()?;
    let lo = utils.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = utils.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if hi - lo > MAX_UTIL_SPREAD {
        return None;
    }
    p.sort_by(|a, b| a.1.total_cmp(&b.1));
    let k = (0..p.len() - 1).max_by(|i, j| {
        (p[*i].1 / p[*i + 1].1)
            .total_cmp(&(p[*j].1 / p[*j + 1].1))
            .reverse()
    })?;
    let gap = 1.0 - p[k].1 / p[k + 1].1;
    if gap < POWER_GAP {
        return None;
    }
    Some((p, k, gap))
}

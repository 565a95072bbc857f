//! `comparison`: a report's own comparison with the baseline its session named. The page
//! shows what `gpuwhy diagnose` prints of it (the summary line, the findings resolved, new
//! and still there, each experiment's outcome), so those are read; the run labels and the
//! step and per-GPU changes (`result.labels`, `result.steps`, `result.gpus`) are skipped and
//! left empty. Each reader still names every field of core's type, so a field core adds
//! does not compile here until it is read or said to be skipped.

use gpuwhy::compare::{BaselineComparison, Comparison, ExperimentCheck, Outcome, VerdictDiff};

use super::scan::{ReadError, Scan};

type R<T> = Result<T, ReadError>;

/// `comparison`.
pub fn comparison(s: &mut Scan) -> R<BaselineComparison> {
    let mut c = BaselineComparison {
        baseline: String::new(),
        result: None,
        error: None,
    };
    s.fields(&["baseline"], &mut |s, k| {
        match k {
            "baseline" => c.baseline = s.string()?,
            "result" => c.result = s.nullable(result)?,
            "error" => c.error = s.opt_string()?,
            _ => s.skip()?,
        }
        Ok(())
    })?;
    let BaselineComparison {
        baseline: _,
        result: _,
        error: _,
    } = &c;
    Ok(c)
}

fn result(s: &mut Scan) -> R<Comparison> {
    let mut c = Comparison {
        labels: Default::default(),
        forced_despite: None,
        steps: None,
        gpus: Vec::new(),
        verdict: VerdictDiff {
            baseline_top: Default::default(),
            candidate_top: Default::default(),
            resolved: Vec::new(),
            new: Vec::new(),
            persisting: Vec::new(),
        },
        experiments: Vec::new(),
        summary: String::new(),
    };
    s.fields(&["verdict", "summary"], &mut |s, k| {
        match k {
            "forced_despite" => c.forced_despite = s.opt_string()?,
            "verdict" => c.verdict = verdict(s)?,
            "experiments" => c.experiments = s.list(&mut experiment)?,
            "summary" => c.summary = s.string()?,
            // Not shown: "labels", "steps", "gpus".
            _ => s.skip()?,
        }
        Ok(())
    })?;
    let Comparison {
        labels: _,
        forced_despite: _,
        steps: _,
        gpus: _,
        verdict: _,
        experiments: _,
        summary: _,
    } = &c;
    Ok(c)
}

fn verdict(s: &mut Scan) -> R<VerdictDiff> {
    let mut v = VerdictDiff {
        baseline_top: Default::default(),
        candidate_top: Default::default(),
        resolved: Vec::new(),
        new: Vec::new(),
        persisting: Vec::new(),
    };
    s.fields(&[], &mut |s, k| {
        match k {
            "baseline_top" => v.baseline_top = named(s).map(|(id, x)| (id, x[0]))?,
            "candidate_top" => v.candidate_top = named(s).map(|(id, x)| (id, x[0]))?,
            "resolved" => v.resolved = s.list(&mut Scan::string)?,
            "new" => v.new = s.list(&mut Scan::string)?,
            "persisting" => {
                v.persisting = s.list(&mut |s| named(s).map(|(id, x)| (id, x[0], x[1])))?
            }
            _ => s.skip()?,
        }
        Ok(())
    })?;
    let VerdictDiff {
        baseline_top: _,
        candidate_top: _,
        resolved: _,
        new: _,
        persisting: _,
    } = &v;
    Ok(v)
}

/// `[id, x, y]` or `[id, x]`: a finding id and its confidences (NaN for one not given).
fn named(s: &mut Scan) -> R<(String, [f64; 2])> {
    let mut id = None;
    let mut x = [f64::NAN; 2];
    let mut k = 0;
    s.array(&mut |s| {
        match k {
            0 => id = Some(s.string()?),
            1 | 2 => x[k - 1] = s.f64_or_nan()?,
            _ => return Err(s.expected("at most three elements")),
        }
        k += 1;
        Ok(())
    })?;
    match id {
        Some(id) if k >= 2 => Ok((id, x)),
        _ => Err(s.expected("a finding id and its confidence")),
    }
}

fn experiment(s: &mut Scan) -> R<ExperimentCheck> {
    let mut e = ExperimentCheck {
        finding: String::new(),
        metric: String::new(),
        expected: String::new(),
        baseline: None,
        candidate: None,
        outcome: Outcome::Unknown,
    };
    s.fields(&["finding", "outcome"], &mut |s, k| {
        match k {
            "finding" => e.finding = s.string()?,
            "metric" => e.metric = s.string()?,
            "expected" => e.expected = s.string()?,
            "baseline" => e.baseline = s.opt_f64()?,
            "candidate" => e.candidate = s.opt_f64()?,
            "outcome" => {
                e.outcome = match s.string()?.as_str() {
                    "held" => Outcome::Held,
                    "not_held" => Outcome::NotHeld,
                    "unknown" => Outcome::Unknown,
                    _ => return Err(s.expected("`held`, `not_held` or `unknown`")),
                }
            }
            _ => s.skip()?,
        }
        Ok(())
    })?;
    let ExperimentCheck {
        finding: _,
        metric: _,
        expected: _,
        baseline: _,
        candidate: _,
        outcome: _,
    } = &e;
    Ok(e)
}

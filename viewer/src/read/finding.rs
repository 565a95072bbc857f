//! Readers of the verdict and the findings, field by field as core's types declare them
//! (see [`parts`](super::parts) for why). Struct literals name every field, so a field core
//! adds does not compile here until it is read.

use gpuwhy::report::{
    Action, Cost, Evidence, Experiment, Finding, FindingSource, Severity, Verdict,
};

use super::scan::{ReadError, Scan};

type R<T> = Result<T, ReadError>;

/// `verdict`.
pub fn verdict(s: &mut Scan) -> R<Verdict> {
    let (mut id, mut title, mut summary) = (String::new(), String::new(), String::new());
    let (mut confidence, mut lost_share) = (0.0, None);
    s.fields(&["id", "title", "confidence", "summary"], &mut |s, k| {
        match k {
            "id" => id = s.string()?,
            "title" => title = s.string()?,
            "confidence" => confidence = s.f64_or_nan()?,
            "lost_share" => lost_share = s.opt_f64()?,
            "summary" => summary = s.string()?,
            _ => s.skip()?,
        }
        Ok(())
    })?;
    Ok(Verdict {
        id,
        title,
        confidence,
        lost_share,
        summary,
    })
}

fn severity(s: &mut Scan) -> R<Severity> {
    s.ws();
    let at = s.pos;
    Ok(match s.string()?.as_str() {
        "info" => Severity::Info,
        "low" => Severity::Low,
        "medium" => Severity::Medium,
        "high" => Severity::High,
        "critical" => Severity::Critical,
        other => {
            let msg = format!("unknown severity `{other}` (info, low, medium, high, critical)");
            return Err(s.error_at(at, &msg));
        }
    })
}

fn cost(s: &mut Scan) -> R<Cost> {
    s.ws();
    let at = s.pos;
    Ok(match s.string()?.as_str() {
        "low" => Cost::Low,
        "medium" => Cost::Medium,
        "high" => Cost::High,
        other => return Err(s.error_at(at, &format!("unknown cost `{other}` (low, medium, high)"))),
    })
}

fn evidence(s: &mut Scan) -> R<Evidence> {
    let (mut metric, mut comparison, mut unit) = (String::new(), String::new(), String::new());
    let (mut value, mut threshold, mut device, mut time_range, mut agrees) =
        (0.0, 0.0, None, None, false);
    let required = [
        "metric",
        "value",
        "threshold",
        "comparison",
        "unit",
        "agrees",
    ];
    s.fields(&required, &mut |s, k| {
        match k {
            "metric" => metric = s.string()?,
            "value" => value = s.f64_or_nan()?,
            "threshold" => threshold = s.f64_or_nan()?,
            "comparison" => comparison = s.string()?,
            "unit" => unit = s.string()?,
            "device" => device = s.opt_int()?,
            "time_range" => {
                time_range = s.nullable(|s| {
                    s.ws();
                    let at = s.pos;
                    match s.list(&mut Scan::f64)?[..] {
                        [a, b] => Ok([a, b]),
                        _ => Err(s.error_at(at, "expected a start and an end")),
                    }
                })?
            }
            "agrees" => agrees = s.bool()?,
            _ => s.skip()?,
        }
        Ok(())
    })?;
    Ok(Evidence {
        metric,
        value,
        threshold,
        comparison: comparison.into(),
        unit,
        device,
        time_range,
        agrees,
        // The viewer does not show weights: `weight` is skipped with the unknown keys.
        weight: None,
    })
}

fn action(s: &mut Scan) -> R<Action> {
    let (mut text, mut c) = (String::new(), Cost::Low);
    s.fields(&["text", "cost"], &mut |s, k| {
        match k {
            "text" => text = s.string()?,
            "cost" => c = cost(s)?,
            _ => s.skip()?,
        }
        Ok(())
    })?;
    Ok(Action { text, cost: c })
}

fn experiment(s: &mut Scan) -> R<Experiment> {
    let (mut change, mut expect, mut metric) = (String::new(), String::new(), String::new());
    s.fields(&["change", "expect"], &mut |s, k| {
        match k {
            "change" => change = s.string()?,
            "expect" => expect = s.string()?,
            "metric" => metric = s.string()?,
            _ => s.skip()?,
        }
        Ok(())
    })?;
    Ok(Experiment {
        change,
        expect,
        metric,
    })
}

/// One of `findings`.
pub fn finding(s: &mut Scan) -> R<Finding> {
    let (mut id, mut title, mut summary) = (String::new(), String::new(), String::new());
    let (mut sev, mut confidence, mut lost_share) = (Severity::Info, 0.0, None);
    let (mut devices, mut ev, mut actions, mut unseen) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut exp = Experiment::default();
    let mut source = None;
    let mut caused_by = None;
    let required = [
        "id",
        "title",
        "severity",
        "confidence",
        "summary",
        "evidence",
        "actions",
        "experiment",
    ];
    s.fields(&required, &mut |s, k| {
        match k {
            "id" => id = s.string()?,
            "title" => title = s.string()?,
            "severity" => sev = severity(s)?,
            "confidence" => confidence = s.f64_or_nan()?,
            "summary" => summary = s.string()?,
            "lost_share" => lost_share = s.opt_f64()?,
            "devices" => devices = s.list(&mut Scan::int)?,
            "evidence" => ev = s.list(&mut evidence)?,
            "actions" => actions = s.list(&mut action)?,
            "experiment" => exp = experiment(s)?,
            "unseen" => unseen = s.list(&mut Scan::string)?,
            "source" => {
                source = s
                    .opt_string()?
                    .as_deref()
                    .and_then(FindingSource::from_name)
            }
            "caused_by" => caused_by = s.opt_string()?,
            _ => s.skip()?,
        }
        Ok(())
    })?;
    Ok(Finding {
        id,
        title,
        severity: sev,
        confidence,
        summary,
        lost_share,
        // How the lost share was estimated is not shown on the page: skipped.
        lost_share_basis: None,
        devices,
        evidence: ev,
        actions,
        experiment: exp,
        unseen,
        source,
        caused_by,
    })
}

//! The line that says which GPUs are the job's, for `record`, `diagnose` and `demo`.

use gpuwhy::report::{JobGpusMethod, Report};

fn list(v: &[u32]) -> String {
    v.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
}

/// "GPUs of this job: …; not this job's: …" with the reason, when the report tells the job's
/// GPUs from others or had to take every GPU on a node of several; `None` otherwise.
pub fn line(report: &Report) -> Option<String> {
    let j = report.run.job_gpus.as_ref()?;
    if j.others.is_empty() && (j.method != JobGpusMethod::All || j.indices.len() < 2) {
        return None;
    }
    let mut s = format!("GPUs of this job: {}", list(&j.indices));
    if !j.others.is_empty() {
        s += &format!("; not this job's (shown, not judged): {}", list(&j.others));
    }
    Some(format!("{s} — {}", j.reason))
}

//! The line that says which GPUs are the job's, for `record`, `diagnose` and `demo`.

use gpuwhy::report::{JobGpusMethod, Report};

/// The devices by index; a MIG slice says which GPU it is a slice of
/// (`docs/job-gpus.md`, "MIG").
fn list(report: &Report, v: &[u32]) -> String {
    v.iter()
        .map(|i| {
            let mig = report
                .devices
                .iter()
                .find(|d| d.index == *i)
                .and_then(|d| d.mig.as_ref());
            match mig {
                Some(m) => format!("{i} (MIG slice {} of GPU {})", m.slot, m.parent),
                None => i.to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// "GPUs of this job: …; not this job's: …" with the reason, when the report tells the job's
/// GPUs from others or had to take every GPU on a node of several; `None` otherwise.
pub fn line(report: &Report) -> Option<String> {
    let j = report.run.job_gpus.as_ref()?;
    if j.others.is_empty() && (j.method != JobGpusMethod::All || j.indices.len() < 2) {
        return None;
    }
    let mut s = format!("GPUs of this job: {}", list(report, &j.indices));
    if !j.others.is_empty() {
        s += &format!(
            "; not this job's (shown, not judged): {}",
            list(report, &j.others)
        );
    }
    Some(format!("{s} — {}", j.reason))
}

#[cfg(test)]
mod tests {
    use gpuwhy::recording::Recording;
    use gpuwhy::report::{DeviceInfo, JobGpus, MigDevice};

    use super::*;

    #[test]
    fn a_mig_slice_is_named_with_its_gpu() {
        let mut r = Report::from_recording(&Recording::new(Default::default()));
        r.devices = vec![
            DeviceInfo::default(),
            DeviceInfo {
                index: 1,
                mig: Some(MigDevice {
                    parent: 0,
                    slot: 0,
                    ..MigDevice::default()
                }),
                ..DeviceInfo::default()
            },
        ];
        r.run.job_gpus = Some(JobGpus {
            indices: vec![1],
            others: vec![0],
            method: JobGpusMethod::Processes,
            reason: "GPU 1 listed process 7".into(),
            shared: Vec::new(),
        });
        let text = line(&r).expect("a line");
        assert!(
            text.starts_with("GPUs of this job: 1 (MIG slice 0 of GPU 0); not this job's (shown, not judged): 0 —"),
            "{text}"
        );
    }
}

//! `shared_gpu`: another process, not of the job, runs on one of the job's GPUs.

use super::{evidence, gpus, Rule, RuleDoc, RuleMeta};
use crate::report::Comparator;
use crate::report::{Action, Cost, Experiment, Finding, Severity};
use crate::signals::Signals;

static META: RuleMeta = RuleMeta {
    id: "shared_gpu",
    title: "Another process shares the job's GPU",
    severity: Severity::Medium,
    doc: RuleDoc {
        detects: "A compute process that is not of the recorded job (not the recorded command or its descendants, not the session's own process) on one of the job's GPUs.",
        why: "GPUs time-slice between processes' contexts and split their memory: a neighbour's job, a forgotten notebook or an evaluation process takes SM time and memory from training, and makes the job's GPU a straggler among its peers. On shared machines it is a cause of slowness in its own right.",
        evidence: "The GPUs' compute-process lists read during the run, each process's peak memory over the GPU's total, its share of the GPU's SM time where the driver gives per-process utilization (not on MIG), and the share of the run it was seen. Only said when the job's own processes were found in those lists, so the rest can be told apart (see docs/job-gpus.md).",
        first: "Find the process (`nvidia-smi`, the pid and name in the evidence) and stop or move it; ask the scheduler for exclusive GPUs (compute mode EXCLUSIVE_PROCESS, a Kubernetes GPU limit, Slurm --exclusive).",
    },
};

/// Memory share at or above which a neighbour counts as heavy, %: a CUDA context alone takes
/// a few hundred MiB, about 0.5 % of an 80 GB GPU; 10 % is a real workload's allocation.
pub const HEAVY_MEMORY_PCT: f64 = 10.0;

/// SM-time share at or above which a neighbour counts as heavy, %: GPUs time-slice between
/// processes' contexts, so the share the driver attributes to the neighbour
/// (`nvmlDeviceGetProcessUtilization`, docs/job-gpus.md) is time the job's kernels could not
/// run; a tenth of the GPU's time is as much as the memory line's real workload.
pub const HEAVY_SM_PCT: f64 = 10.0;

/// See the module docs.
pub struct SharedGpu;

impl Rule for SharedGpu {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn evaluate(&self, s: &Signals) -> Option<Finding> {
        let shared = &s.job_gpus.as_ref()?.shared;
        if shared.is_empty() {
            return None;
        }
        let mut devices: Vec<u32> = shared.iter().map(|p| p.device).collect();
        devices.sort_unstable();
        devices.dedup();
        let (ev, names, heavy) = per_process(shared, s.duration_s);
        let mut f = META.finding(
            if heavy { 0.8 } else { 0.6 },
            format!(
                "{} {} not of this job: {}. It takes SM time and memory from training.",
                gpus(&devices),
                if devices.len() == 1 {
                    "runs a process"
                } else {
                    "run processes"
                },
                names.join("; ")
            ),
            ev,
        );
        f.devices = devices;
        f.actions = vec![
            Action { text: "Identify the process (`nvidia-smi`, `ps -p PID`) and stop it or move it to another GPU".into(), cost: Cost::Low },
            Action { text: "Request exclusive GPUs from the scheduler, or set compute mode EXCLUSIVE_PROCESS (`nvidia-smi -c 3`)".into(), cost: Cost::Medium },
        ];
        f.experiment = Experiment {
            change: "Run the job once with the other process stopped (one change)".into(),
            expect: "step time and the job's GPU utilization return to those of the unshared GPUs; the GPU no longer straggles".into(),
            metric: "step time p50, util_gpu p50 of the shared GPU".into(),
        };
        if shared.iter().any(|p| p.sm_share.is_none()) {
            f.unseen = vec!["How much SM time some of the other processes take is not known: the driver gave no per-process utilization for them (not supported on MIG-enabled GPUs and some boards, or no sample while they ran); their memory share and presence are.".into()];
        }
        Some(f)
    }
}

/// Evidence and a one-line name for each process not of the job on the job's GPUs (at most
/// 20), and whether any of them takes a heavy share of memory or SM time.
fn per_process(
    shared: &[crate::report::ForeignProcess],
    duration_s: f64,
) -> (Vec<crate::report::Evidence>, Vec<String>, bool) {
    let mut ev = Vec::new();
    let mut names = Vec::new();
    let mut heavy = false;
    for p in shared.iter().take(20) {
        let who = match &p.name {
            Some(n) => format!("process {} ({n})", p.pid),
            None => format!("process {}", p.pid),
        };
        if let Some(m) = p.memory_share {
            let mut e = evidence(
                &format!("{who} memory share"),
                m * 100.0,
                Comparator::AtLeast,
                HEAVY_MEMORY_PCT,
                "%",
                Some(p.device),
            );
            e.time_range = Some([p.first_s, p.last_s]);
            heavy |= e.agrees;
            ev.push(e);
        }
        if let Some(sm) = p.sm_share {
            let mut e = evidence(
                &format!("{who} SM time share"),
                sm * 100.0,
                Comparator::AtLeast,
                HEAVY_SM_PCT,
                "%",
                Some(p.device),
            );
            e.time_range = Some([p.first_s, p.last_s]);
            heavy |= e.agrees;
            ev.push(e);
        }
        if duration_s > 0.0 {
            let seen = ((p.last_s - p.first_s) / duration_s).clamp(0.0, 1.0);
            ev.push(evidence(
                &format!("{who} share of the run seen"),
                seen * 100.0,
                Comparator::Above,
                0.0,
                "%",
                Some(p.device),
            ));
        }
        let mem = p
            .used_mib
            .map_or(String::new(), |m| format!(", {:.1} GiB", m / 1024.0));
        let sm = p
            .sm_share
            .map_or(String::new(), |x| format!(", {:.0}% of SM time", x * 100.0));
        names.push(format!("{who} on GPU {}{mem}{sm}", p.device));
    }
    (ev, names, heavy)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{constant, diagnosed, find, h100, report, GpuMetric, N};
    use crate::report::{ForeignProcess, JobGpus, JobGpusMethod, Report};

    /// GPU 0 busy, GPU 1 idle all run.
    fn busy_and_idle() -> Report {
        report(vec![
            (h100(0), vec![(GpuMetric::UtilGpu, constant(97.0, N))]),
            (h100(1), vec![(GpuMetric::UtilGpu, constant(0.0, N))]),
        ])
    }

    fn job_on_gpu0(shared: Vec<ForeignProcess>) -> JobGpus {
        JobGpus {
            indices: vec![0],
            others: vec![1],
            method: JobGpusMethod::Processes,
            reason: "GPU 0 listed process 4242 of the recorded process tree".into(),
            shared,
        }
    }

    #[test]
    fn an_idle_gpu_that_is_not_the_job_s_is_no_straggler() {
        // Even judged as one job, a GPU with no work is unused, not out of step.
        let all = diagnosed(busy_and_idle());
        assert!(find(&all, "rank_imbalance").is_none(), "{:?}", all.findings);
        assert_eq!(
            find(&all, "idle_gpu").map(|f| f.devices.clone()),
            Some(vec![1])
        );
        let mut r = busy_and_idle();
        r.run.job_gpus = Some(job_on_gpu0(Vec::new()));
        let r = diagnosed(r);
        assert!(find(&r, "rank_imbalance").is_none(), "{:?}", r.findings);
        assert!(
            r.findings.iter().all(|f| !f.devices.contains(&1)),
            "no rule judges GPU 1: {:?}",
            r.findings
        );
    }

    #[test]
    fn a_neighbour_on_the_job_s_gpu_is_named_with_its_memory_share() {
        let mut r = busy_and_idle();
        r.run.job_gpus = Some(job_on_gpu0(vec![ForeignProcess {
            device: 0,
            pid: 7777,
            name: Some("python3".into()),
            used_mib: Some(20_000.0),
            memory_share: Some(0.25),
            sm_share: None,
            first_s: 0.0,
            last_s: r.run.duration_s,
        }]));
        let r = diagnosed(r);
        let f = find(&r, "shared_gpu").expect("fires");
        assert_eq!(f.devices, [0]);
        assert!(f.summary.contains("7777 (python3)"), "{}", f.summary);
        let mem = &f.evidence[0];
        assert_eq!((mem.value, mem.agrees), (25.0, true));
        assert_eq!(f.confidence, 0.8);
        let quiet = diagnosed({
            let mut q = busy_and_idle();
            q.run.job_gpus = Some(job_on_gpu0(Vec::new()));
            q
        });
        assert!(find(&quiet, "shared_gpu").is_none());
    }

    #[test]
    fn a_neighbour_s_sm_share_is_evidence_of_its_own() {
        let mut r = busy_and_idle();
        r.run.job_gpus = Some(job_on_gpu0(vec![ForeignProcess {
            device: 0,
            pid: 4100,
            used_mib: Some(800.0),
            memory_share: Some(0.01),
            sm_share: Some(0.35),
            first_s: 0.0,
            last_s: r.run.duration_s,
            ..ForeignProcess::default()
        }]));
        let r = diagnosed(r);
        let f = find(&r, "shared_gpu").expect("fires");
        let sm = f
            .evidence
            .iter()
            .find(|e| e.metric.contains("SM time share"))
            .expect("SM share evidence");
        assert_eq!((sm.value, sm.threshold, sm.agrees), (35.0, 10.0, true));
        assert_eq!(f.confidence, 0.8, "a small context but a heavy SM user");
        assert!(f.summary.contains("35% of SM time"), "{}", f.summary);
        assert!(f.unseen.is_empty(), "nothing left unmeasured");
    }
}

//! Which GPUs are the job's, end to end: the simulated node's process lists read by the
//! recorder, the decision in `run.job_gpus`, and the rules judging the job's GPUs only.

use gpuwhy::analysis::SM_ACTIVITY_FOR_UTIL;
use gpuwhy::jobgpus::JobEnv;
use gpuwhy::report::{JobGpusMethod, Report};
use gpuwhy_tests::{record, scenario, Run};

fn ids(r: &Report) -> Vec<&str> {
    r.findings.iter().map(|f| f.id.as_str()).collect()
}

#[test]
fn an_idle_gpu_the_job_does_not_use_is_shown_apart_and_no_straggler() {
    let r = record(
        scenario("job_one_of_two").expect("bundled"),
        &Run::default(),
    )
    .expect("records");
    let j = r.run.job_gpus.as_ref().expect("decided");
    assert_eq!(j.method, JobGpusMethod::Processes, "{}", j.reason);
    assert_eq!((&j.indices[..], &j.others[..]), (&[0][..], &[1][..]));
    assert!(
        j.reason.contains(&std::process::id().to_string()),
        "{}",
        j.reason
    );
    assert!(j.shared.is_empty(), "{:?}", j.shared);
    // GPU 1 is still sampled and in the report.
    assert!(r
        .series
        .iter()
        .any(|s| s.device == 1 && !s.data.t.is_empty()));
    assert!(!ids(&r).contains(&"rank_imbalance"), "{:?}", r.findings);
    assert_eq!(r.verdict.id, "none", "{}", r.verdict.summary);
}

#[test]
fn a_neighbour_on_the_job_s_gpu_is_named_with_its_memory() {
    let r = record(scenario("shared_gpu").expect("bundled"), &Run::default()).expect("records");
    let j = r.run.job_gpus.as_ref().expect("decided");
    assert_eq!((&j.indices[..], &j.others[..]), (&[0][..], &[1][..]));
    assert_eq!(j.shared.len(), 1, "{:?}", j.shared);
    let p = &j.shared[0];
    assert_eq!((p.device, p.pid), (0, 31337));
    let share = p.memory_share.expect("memory known");
    assert!((0.2..0.3).contains(&share), "20000 of 81559 MiB: {share}");
    // The driver's per-process samples give its SM time too (30 % in the scenario).
    let sm = p.sm_share.expect("per-process utilization read");
    assert!((sm - 0.3).abs() < 1e-9, "{sm}");
    assert_eq!(r.verdict.id, "shared_gpu", "{}", r.verdict.summary);
    // The busy GPU of another user is not judged either.
    assert!(
        r.findings.iter().all(|f| !f.devices.contains(&1)),
        "{:?}",
        r.findings
    );
}

#[test]
fn the_user_s_gpus_and_cuda_visible_devices_decide_when_processes_cannot() {
    let text = scenario("job_one_of_two").expect("bundled");
    let chosen = Run {
        gpus: Some("1".into()),
        duration_s: Some(3.0),
        ..Run::default()
    };
    let r = record(text, &chosen).expect("records");
    let j = r.run.job_gpus.as_ref().expect("decided");
    assert_eq!(j.method, JobGpusMethod::Override);
    assert_eq!((&j.indices[..], &j.others[..]), (&[1][..], &[0][..]));
    // Without the job's process in the lists, CUDA_VISIBLE_DEVICES names the GPU.
    let foreign = text.replace("\"pid\": \"self\"", "\"pid\": 4242");
    let env = Run {
        job_env: JobEnv {
            cuda_visible_devices: Some("0".into()),
            cuda_device_order: None,
        },
        duration_s: Some(3.0),
        ..Run::default()
    };
    let r = record(&foreign, &env).expect("records");
    let j = r.run.job_gpus.as_ref().expect("decided");
    assert_eq!(j.method, JobGpusMethod::CudaVisibleDevices, "{}", j.reason);
    assert_eq!(j.indices, [0]);
    let r = record(
        &foreign,
        &Run {
            duration_s: Some(3.0),
            ..Run::default()
        },
    )
    .expect("records");
    let j = r.run.job_gpus.as_ref().expect("decided");
    assert_eq!(j.method, JobGpusMethod::All);
    assert_eq!(j.indices, [0, 1]);
    assert!(
        j.reason.contains("CUDA_VISIBLE_DEVICES is not set"),
        "{}",
        j.reason
    );
}

#[test]
fn a_job_on_a_mig_slice_is_diagnosed_from_its_slice() {
    let text = scenario("mig_slice_starved").expect("bundled");
    let r = record(text, &Run::default()).expect("records");
    // The GPU first, then its two slices as devices of their own.
    assert_eq!(r.devices.len(), 3, "{:?}", r.devices);
    let slice = &r.devices[1];
    let mig = slice.mig.as_ref().expect("a MIG device");
    assert_eq!((mig.parent, mig.slot, mig.gpu_instance), (0, 0, Some(1)));
    assert!(slice.uuid.as_deref().is_some_and(|u| u.starts_with("MIG-")));
    assert!(r.devices[0].mig.is_none());
    let util = &slice.capabilities["util_gpu"];
    assert!(!util.available, "no utilization on MIG");
    assert!(
        slice.capabilities["gpm_sm_util"].available,
        "GPM per instance"
    );
    let j = r.run.job_gpus.as_ref().expect("decided");
    assert_eq!(j.method, JobGpusMethod::Processes, "{}", j.reason);
    assert_eq!((&j.indices[..], &j.others[..]), (&[1][..], &[0, 2][..]));
    let f = r
        .findings
        .iter()
        .find(|f| f.id == "data_starvation")
        .expect("the data wait is named");
    assert_eq!(r.verdict.id, "data_starvation", "{}", r.verdict.summary);
    assert!(f.devices.iter().all(|d| *d == 1), "{:?}", f.devices);
    assert!(!ids(&r).contains(&"unexplained_idle"), "{:?}", ids(&r));
    // The evidence names what its values are: SM activity, not utilization.
    let named: Vec<&str> = f.evidence.iter().map(|e| e.metric.as_str()).collect();
    assert!(
        named.iter().any(|m| m.contains("gpm_sm_util"))
            && !named
                .iter()
                .any(|m| m.replace(SM_ACTIVITY_FOR_UTIL, "").contains("util_gpu")),
        "{named:?}"
    );
    // Without the job's process in the lists, its MIG- UUID in CUDA_VISIBLE_DEVICES names it.
    let uuid = slice.uuid.clone().expect("uuid");
    let foreign = text.replace("\"pid\": \"self\"", "\"pid\": 4242");
    let env = Run {
        job_env: JobEnv {
            cuda_visible_devices: Some(uuid),
            cuda_device_order: None,
        },
        duration_s: Some(3.0),
        ..Run::default()
    };
    let r = record(&foreign, &env).expect("records");
    let j = r.run.job_gpus.as_ref().expect("decided");
    assert_eq!(j.method, JobGpusMethod::CudaVisibleDevices, "{}", j.reason);
    assert_eq!(&j.indices[..], &[1][..]);
}

#[test]
fn a_job_in_a_container_is_found_through_the_host_s_pid() {
    let text = scenario("container_pid_namespace").expect("bundled");
    let r = record(text, &Run::default()).expect("records");
    let j = r.run.job_gpus.as_ref().expect("decided");
    assert_eq!(j.method, JobGpusMethod::Processes, "{}", j.reason);
    assert!(j.reason.contains("4000123"), "NVML's pid: {}", j.reason);
    assert_eq!((&j.indices[..], &j.others[..]), (&[0][..], &[1][..]));
    assert!(!ids(&r).contains(&"rank_imbalance"), "{:?}", ids(&r));
    // Without the host's /proc the pid is nobody this /proc knows: every GPU is taken.
    let unmapped = text.replace("\"host_pid\": 4000123, ", "");
    let unmapped = unmapped.replace("\"pid\": \"self\"", "\"pid\": 4000123");
    let r = record(&unmapped, &Run::default()).expect("records");
    let j = r.run.job_gpus.as_ref().expect("decided");
    assert_eq!(j.method, JobGpusMethod::All, "{}", j.reason);
}

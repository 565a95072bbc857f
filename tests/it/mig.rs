//! The MIG and per-process utilization bindings (`core/src/nvml/mig.rs`) through the real
//! loader against the simulator's MIG-partitioned H100 and shared GPU (docs/job-gpus.md).

use gpuwhy::nvml::Nvml;
use gpuwhy_tests::{install_sim, scenario};

#[test]
fn a_mig_enabled_gpu_lists_its_slices_with_their_instances() {
    let sim = install_sim(scenario("mig_slice_starved").expect("bundled"), false).expect("install");
    let nvml = Nvml::load_from(sim.lib()).expect("loads");
    let gpu = nvml.device_by_index(0).expect("GPU 0");
    assert_eq!(nvml.mig_mode(gpu).expect("mode"), (true, true));
    assert!(!nvml.is_mig_device(gpu).expect("answers"));
    let slots = nvml.max_mig_device_count(gpu).expect("count");
    assert_eq!(slots, 7);
    let first = nvml.mig_device_by_index(gpu, 0).expect("slot 0");
    let second = nvml.mig_device_by_index(gpu, 1).expect("slot 1");
    let empty = nvml
        .mig_device_by_index(gpu, 2)
        .expect_err("slot 2 is empty");
    assert_eq!(empty.code_name(), "NOT_FOUND");
    assert!(nvml.is_mig_device(first).expect("answers"));
    assert_eq!(nvml.mig_parent(second).expect("parent"), gpu);
    assert_eq!(nvml.gpu_instance_id(first).expect("gi"), 1);
    assert_eq!(nvml.gpu_instance_id(second).expect("gi"), 2);
    assert_eq!(nvml.compute_instance_id(first).expect("ci"), 0);
    assert!(nvml.uuid(first).expect("uuid").starts_with("MIG-"));
    let total = nvml.memory_info(first).expect("memory").total;
    assert_eq!(total >> 20, 40448, "the slice's memory");
    let util = nvml.utilization(first).expect_err("no utilization on MIG");
    assert!(util.is_unavailable(), "{util}");
    assert!(nvml
        .utilization(gpu)
        .expect_err("nor on the GPU")
        .is_unavailable());
    // GPM of one GPU instance, through its GPU.
    let a = nvml.gpm_sample().expect("sample");
    nvml.gpm_mig_sample_get(gpu, 2, &a).expect("instance 2");
    let missing = nvml
        .gpm_mig_sample_get(gpu, 9, &a)
        .expect_err("no instance 9");
    assert_eq!(missing.code_name(), "NOT_FOUND");
    let per_process = nvml
        .process_utilization(gpu, 0)
        .expect_err("not supported on MIG-enabled GPUs");
    assert!(per_process.is_unavailable());
}

#[test]
fn per_process_samples_give_each_process_s_sm_share_once() {
    let sim = install_sim(scenario("shared_gpu").expect("bundled"), false).expect("install");
    let nvml = Nvml::load_from(sim.lib()).expect("loads");
    let gpu = nvml.device_by_index(0).expect("GPU 0");
    assert_eq!(
        nvml.mig_mode(gpu).expect("an H100 without MIG"),
        (false, false)
    );
    assert_eq!(
        nvml.mig_device_by_index(gpu, 0)
            .expect_err("no slice")
            .code_name(),
        "NOT_FOUND"
    );
    let samples = nvml.process_utilization(gpu, 0).expect("samples");
    // Only the neighbour has an SM share in the scenario.
    assert_eq!(samples.len(), 1, "{samples:?}");
    assert_eq!((samples[0].pid, samples[0].sm_util), (31337, 30));
    let newest = samples[0].timestamp_us;
    let again = nvml
        .process_utilization(gpu, newest)
        .expect("nothing newer");
    assert!(
        again.iter().all(|s| s.timestamp_us > newest),
        "only newer samples: {again:?}"
    );
}

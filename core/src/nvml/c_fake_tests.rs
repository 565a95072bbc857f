//! The bindings against small fake NVML libraries written in C (`testdata/*.c`), through
//! the real loader. They cover what the simulator does not: old-driver symbol mixes, the
//! R535 process-info stride, garbage readings. They need a C compiler (`$CC` or `cc`),
//! which every supported build machine has (gcc builds the `-sys` crates anyway).

use std::path::{Path, PathBuf};
use std::process::Command;

use super::*;
use crate::Error;

/// Compiles `testdata/<source>` into `dir/<name>`.
fn build(dir: &Path, source: &str, name: &str) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src/nvml/testdata")
        .join(source);
    let out = dir.join(name);
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let status = Command::new(&cc)
        .args(["-shared", "-fPIC", "-o"])
        .arg(&out)
        .arg(&src)
        .status()
        .unwrap_or_else(|e| panic!("cannot run the C compiler `{cc}`: {e}"));
    assert!(status.success(), "{cc} failed on {}", src.display());
    out
}

fn fake() -> (tempfile::TempDir, Nvml) {
    let dir = tempfile::tempdir().expect("temp dir");
    let lib = build(dir.path(), "fake_nvml.c", "libnvidia-ml.so.1");
    let nvml = Nvml::load_from(&lib).expect("fake loads");
    (dir, nvml)
}

#[test]
fn identity_queries_go_through_the_newest_exported_symbols() {
    let (_dir, nvml) = fake();
    assert_eq!(nvml.init_symbol(), "nvmlInit_v2");
    assert_eq!(nvml.driver_version().as_deref(), Ok("535.54.03"));
    assert_eq!(nvml.cuda_driver_version(), Ok(12020));
    assert!(nvml.nvml_version().unwrap_err().missing_symbol);
    assert_eq!(nvml.device_count(), Ok(2));
    assert_eq!(
        nvml.device_by_index(7).unwrap_err().code,
        codes::INVALID_ARGUMENT
    );
    let d = nvml.device_by_index(0).unwrap();
    assert_eq!(nvml.name(d).as_deref(), Ok("NVIDIA H100 80GB HBM3"));
    assert!(nvml.uuid(d).unwrap().starts_with("GPU-12345678"));
    let pci = nvml.pci_info(d).unwrap();
    assert_eq!(
        (pci.bus_id.as_str(), pci.bus, pci.pci_device_id),
        ("00000000:3B:00.0", 0x3b, 0x233010DE)
    );
    assert_eq!(nvml.architecture(d), Ok(9));
    assert_eq!(nvml.cuda_compute_capability(d), Ok((9, 0)));
    let resolved = nvml.resolved_symbols();
    assert!(resolved.contains(&("nvmlDeviceGetPciInfo", Some("nvmlDeviceGetPciInfo_v3"))));
    assert!(resolved.contains(&(
        "nvmlDeviceGetComputeRunningProcesses",
        Some("nvmlDeviceGetComputeRunningProcesses_v3")
    )));
    assert!(resolved.contains(&("nvmlSystemGetNVMLVersion", None)));
}

#[test]
fn retired_or_refusing_symbols_fall_back_to_legacy_ones() {
    let (_dir, nvml) = fake();
    let (d0, d1) = (
        nvml.device_by_index(0).unwrap(),
        nvml.device_by_index(1).unwrap(),
    );
    assert_eq!(nvml.memory_info(d0).unwrap().reserved, Some(1 << 20));
    // Device 1's v2 answers FUNCTION_NOT_FOUND: v1 from then on, for every device.
    assert_eq!(nvml.memory_info(d1).unwrap().reserved, None);
    assert_eq!(nvml.memory_info(d0).unwrap().reserved, None);
    // TemperatureV answers DEPRECATED.
    assert_eq!(nvml.temperature_gpu_c(d0), Ok(61));
    assert_eq!(nvml.clock_event_reasons(d0), Ok(0x4));
    let resolved = nvml.resolved_symbols();
    assert!(resolved.contains(&("nvmlDeviceGetMemoryInfo", Some("nvmlDeviceGetMemoryInfo"))));
    assert!(resolved.contains(&("nvmlDeviceGetTemperature", Some("nvmlDeviceGetTemperature"))));
    assert!(resolved.contains(&(
        "nvmlDeviceGetCurrentClocksEventReasons",
        Some("nvmlDeviceGetCurrentClocksThrottleReasons")
    )));
}

#[test]
fn readings_are_typed_and_garbage_is_rejected() {
    let (_dir, nvml) = fake();
    let (d0, d1) = (
        nvml.device_by_index(0).unwrap(),
        nvml.device_by_index(1).unwrap(),
    );
    assert_eq!(nvml.power_usage_mw(d0), Ok(350_000));
    assert_eq!(nvml.power_usage_mw(d1).unwrap_err().code, codes::UNKNOWN);
    assert_eq!(nvml.enforced_power_limit_mw(d0), Ok(700_000));
    assert_eq!(
        nvml.utilization(d0),
        Ok(Utilization {
            gpu: 87,
            memory: 40
        })
    );
    assert_eq!(nvml.utilization(d1).unwrap_err().code, codes::UNKNOWN);
    assert_eq!(
        nvml.temperature_threshold_c(d0, TemperatureThreshold::Slowdown),
        Ok(81)
    );
    assert_eq!(nvml.clock_mhz(d0, ClockType::Mem), Ok(1002));
    assert_eq!(nvml.max_clock_mhz(d0, ClockType::Sm), Ok(2001));
    assert_eq!(nvml.performance_state(d0), Ok(0));
    assert_eq!(nvml.pcie_throughput_kbs(d0, PcieCounter::Rx), Ok(2000));
    assert_eq!(
        [
            nvml.pcie_link_gen(d0),
            nvml.pcie_link_width(d0),
            nvml.max_pcie_link_gen(d0),
            nvml.max_pcie_link_width(d0)
        ],
        [Ok(4), Ok(8), Ok(5), Ok(16)]
    );
    let mut f = [
        FieldValue::new(185),
        FieldValue::new(83),
        FieldValue::new(82),
        FieldValue::with_scope(138, u32::MAX),
    ];
    nvml.field_values(d0, &mut f).unwrap();
    assert_eq!(f[0].result, Ok(250_000.0));
    assert_eq!(f[1].result, Ok((1u64 << 40) as f64));
    assert!(f[2].result.unwrap_err().is_not_supported());
    assert_eq!(f[3].result, Ok(2.5));
    assert_eq!(f[0].timestamp_us, 123);
    assert_eq!(nvml.error_string(codes::NOT_SUPPORTED), "Not Supported");
    assert_eq!(nvml.error_string(codes::NO_PERMISSION), "NO_PERMISSION");
}

#[test]
fn r535_process_list_with_32_byte_elements_is_read_correctly() {
    let (_dir, nvml) = fake();
    let d = nvml.device_by_index(0).unwrap();
    let procs = nvml.compute_processes(d).unwrap();
    let want: Vec<ProcessInfo> = (0..3)
        .map(|i| ProcessInfo {
            pid: 1000 + i,
            used_memory: Some(u64::from(i + 1) << 30),
        })
        .collect();
    assert_eq!(procs, want);
}

#[test]
fn events_gpm_and_foreign_handles() {
    let (dir, nvml) = fake();
    let (d0, d1) = (
        nvml.device_by_index(0).unwrap(),
        nvml.device_by_index(1).unwrap(),
    );
    let mut set = nvml.event_set().unwrap();
    assert!(set
        .register(d1, EVENT_XID_CRITICAL)
        .unwrap_err()
        .is_not_supported());
    assert_eq!(set.register(d0, EVENT_XID_CRITICAL | 0x4 | 0x1), Ok(0xC));
    assert_eq!(
        set.wait(10),
        Ok(Some(EventData {
            device: d0,
            event_type: EVENT_XID_CRITICAL,
            xid: 79
        }))
    );
    assert_eq!(set.wait(10), Ok(None));
    drop(set);

    assert_eq!(nvml.gpm_supported(d0), Ok(true));
    assert_eq!(nvml.gpm_supported(d1), Ok(false));
    let (a, b) = (nvml.gpm_sample().unwrap(), nvml.gpm_sample().unwrap());
    nvml.gpm_sample_get(d0, &a).unwrap();
    nvml.gpm_sample_get(d0, &b).unwrap();
    let ids: Vec<u32> = (0..150)
        .map(|i| {
            if i % 2 == 0 {
                GPM_SM_OCCUPANCY
            } else {
                GPM_ANY_TENSOR_UTIL
            }
        })
        .collect();
    let r = nvml.gpm_metrics(&a, &b, &ids).unwrap();
    assert_eq!(r.len(), 150);
    assert_eq!(r[148], Ok(37.5));
    assert!(r[149].unwrap_err().is_not_supported());

    let other = Nvml::load_from(&dir.path().join("libnvidia-ml.so.1")).unwrap();
    assert_eq!(other.name(d0).unwrap_err().code, codes::INVALID_ARGUMENT);
    assert_eq!(
        other.gpm_metrics(&a, &b, &ids).unwrap_err().code,
        codes::INVALID_ARGUMENT
    );
}

#[test]
fn drop_balances_init_with_shutdown() {
    let (dir, nvml) = fake();
    // SAFETY: loading the fake just built; its initialisers do nothing.
    let lib = unsafe { libloading::Library::new(dir.path().join("libnvidia-ml.so.1")) }.unwrap();
    // SAFETY: `fake_init_count` is `int (void)` in fake_nvml.c.
    let count = unsafe { lib.get::<unsafe extern "C" fn() -> i32>(b"fake_init_count\0") }.unwrap();
    // SAFETY: as above; the library stays loaded while `count` is used.
    let before = unsafe { count() };
    drop(nvml);
    // SAFETY: as above.
    assert_eq!(unsafe { count() }, before - 1);
}

#[test]
fn failing_legacy_init_reports_nvmls_message() {
    let dir = tempfile::tempdir().expect("temp dir");
    let lib = build(dir.path(), "fake_nvml_init_fails.c", "libnvidia-ml.so.1");
    let err = Nvml::load_from(&lib).unwrap_err();
    assert!(
        matches!(&err, Error::NvmlInit { code: 9, message, .. } if message == "Driver Not Loaded"),
        "{err}"
    );
}

#[test]
fn buffered_samples_are_sorted_filtered_and_bounded() {
    let (_dir, nvml) = fake();
    let d0 = nvml.device_by_index(0).unwrap();
    let d1 = nvml.device_by_index(1).unwrap();
    let mut got = Vec::new();
    // Handed out newest first, junk above the `unsigned int`: read oldest first, clean.
    nvml.samples(d0, SamplingType::GpuUtilization, 0, &mut got)
        .unwrap();
    let pairs: Vec<(u64, f64)> = got.iter().map(|s| (s.timestamp_us, s.value)).collect();
    assert_eq!(pairs, [(100, 10.0), (200, 20.0), (300, 30.0)]);
    // lastSeenTimeStamp keeps only newer ones; none newer (NOT_FOUND) is empty, not an error.
    nvml.samples(d0, SamplingType::GpuUtilization, 150, &mut got)
        .unwrap();
    assert_eq!(got.len(), 2);
    nvml.samples(d0, SamplingType::GpuUtilization, 300, &mut got)
        .unwrap();
    assert!(got.is_empty());
    assert_eq!(
        nvml.sample_count(d0, SamplingType::GpuUtilization, 150),
        Ok(2)
    );
    assert_eq!(
        nvml.sample_count(d0, SamplingType::GpuUtilization, 300),
        Ok(0)
    );
    // One call takes at most SAMPLES_PER_CALL; the size query sees them all.
    assert_eq!(
        nvml.sample_count(d0, SamplingType::ProcessorClock, 0),
        Ok(200)
    );
    nvml.samples(d0, SamplingType::ProcessorClock, 0, &mut got)
        .unwrap();
    assert_eq!(got.len(), SAMPLES_PER_CALL);
    assert_eq!(got.last().map(|s| s.value), Some(1000.0 + 127.0));
    // An unknown value type is refused; NOT_SUPPORTED is the driver's per-type answer.
    let e = nvml
        .samples(d1, SamplingType::GpuUtilization, 0, &mut got)
        .unwrap_err();
    assert_eq!(e.code, codes::UNKNOWN);
    assert!(got.is_empty());
    let e = nvml
        .samples(d1, SamplingType::TotalPower, 0, &mut got)
        .unwrap_err();
    assert_eq!(e.code, codes::NOT_SUPPORTED);
}

use super::*;
use crate::host::process::tests::stat_line;
use crate::host::{cpu_count_logical, MemProc};

const PSI: &str = "some avg10=1.50 avg60=0.10 avg300=0.19 total=2132337\n\
                   full avg10=0.25 avg60=0.06 avg300=0.16 total=1917819\n";

/// A full `/proc` whose counters are the given values.
fn host(cpu: [[u64; 5]; 2], disk: (u64, u64), tree_ticks: [u64; 4]) -> MemProc {
    let line = |label: &str, [user, system, idle, iowait, steal]: [u64; 5]| {
        format!("{label} {user} 0 {system} {idle} {iowait} 0 0 {steal} 0 0\n")
    };
    let total: [u64; 5] = std::array::from_fn(|i| cpu[0][i] + cpu[1][i]);
    let stat = line("cpu ", total) + &line("cpu0", cpu[0]) + &line("cpu1", cpu[1]) + "ctxt 5\n";
    let diskstats = format!(
        "   8 0 sda 1 0 {} 0 1 0 {} 0 0 0 0\n   8 1 sda1 1 0 999 0 1 0 999 0 0 0 0\n   7 0 loop0 1 0 999 0 1 0 999 0 0 0 0\n",
        disk.0, disk.1
    );
    let mut fs = MemProc::new()
        .with("/proc/stat", &stat)
        .with("/proc/diskstats", &diskstats)
        .with(
            "/proc/meminfo",
            "MemTotal: 4096 kB\nMemAvailable: 1024 kB\n",
        )
        .with(
            "/proc/pressure/cpu",
            "some avg10=3.00 avg60=0.10 avg300=0.19 total=2\n",
        )
        .with("/proc/pressure/io", PSI)
        .with("/proc/pressure/memory", PSI);
    // The target 100 has a child 200 with a child 300 (a three-level tree); 999 is unrelated.
    for ((pid, ppid), ticks) in [(100, 1), (200, 100), (300, 200), (999, 1)]
        .into_iter()
        .zip(tree_ticks)
    {
        fs.set(
            &format!("/proc/{pid}/stat"),
            stat_line(pid, "python train.py", ppid, ticks, 0, 5),
        );
    }
    fs
}

fn second() -> Duration {
    Duration::from_secs(1)
}

#[test]
fn first_sample_has_no_rates_but_has_instant_values() {
    let mut sampler = HostSampler::with_ticks_per_second(Some(100), 100.0);
    let s = sampler.sample_with(&host([[0; 5]; 2], (0, 0), [0; 4]), second());
    assert_eq!(s.cpu_core_util.len(), 2);
    assert!(s.cpu_core_util.iter().all(|v| v.is_nan()));
    for rate in [
        s.cpu_total_util,
        s.cpu_iowait,
        s.proc_tree_cpu,
        s.disk_read_bps,
        s.disk_write_bps,
    ] {
        assert!(rate.is_nan());
    }
    assert_eq!(s.proc_tree_count, 3.0);
    assert_eq!(s.mem_available_bytes, 1024.0 * 1024.0);
    assert_eq!(
        (s.psi_cpu_some, s.psi_io_some, s.psi_io_full),
        (3.0, 1.5, 0.25)
    );
    assert_eq!((s.psi_mem_some, s.psi_mem_full), (1.5, 0.25));
    assert_eq!(sampler.unavailable(), []);
}

#[test]
fn rates_from_known_deltas() {
    let mut sampler = HostSampler::with_ticks_per_second(Some(100), 100.0);
    sampler.sample_with(&host([[0; 5]; 2], (0, 0), [0; 4]), second());
    // Over 2 s: cpu0 is busy 150 of 200 ticks, cpu1 50 of 200 of which 100 are iowait;
    // the disk reads 1 MiB and writes 512 KiB; the tree uses 100 + 40 + 60 ticks = 2 s of CPU.
    let fs = host(
        [[100, 40, 50, 0, 10], [50, 0, 50, 100, 0]],
        (2048, 1024),
        [100, 40, 60, 7777],
    );
    let s = sampler.sample_with(&fs, 2 * second());
    assert_eq!(s.cpu_core_util, [75.0, 25.0]);
    assert_eq!(s.cpu_total_util, 50.0);
    assert_eq!(s.cpu_iowait, 25.0);
    assert_eq!(s.disk_read_bps, (2048.0 * 512.0) / 2.0);
    assert_eq!(s.disk_write_bps, (1024.0 * 512.0) / 2.0);
    assert_eq!(s.proc_tree_cpu, 100.0, "2 s of CPU in 2 s is one core");
    assert_eq!(s.proc_tree_count, 3.0);
}

#[test]
fn zero_elapsed_gives_no_per_second_rates() {
    let mut sampler = HostSampler::with_ticks_per_second(Some(100), 100.0);
    sampler.sample_with(&host([[0; 5]; 2], (0, 0), [0; 4]), second());
    let s = sampler.sample_with(&host([[1, 1, 1, 1, 0]; 2], (8, 8), [5; 4]), Duration::ZERO);
    assert!(s.disk_read_bps.is_nan() && s.proc_tree_cpu.is_nan());
    assert_eq!(s.cpu_total_util, 50.0, "tick ratios need no wall time");
}

#[test]
fn without_a_target_the_tree_is_nan_and_not_scanned() {
    let fs = host([[0; 5]; 2], (0, 0), [0; 4]);
    let mut sampler = HostSampler::with_ticks_per_second(None, 100.0);
    sampler.sample_with(&fs, second());
    let s = sampler.sample_with(&fs, second());
    assert!(s.proc_tree_cpu.is_nan() && s.proc_tree_count.is_nan());
    assert_eq!(fs.list_pids_calls(), 0);
    assert_eq!(sampler.unavailable(), []);
}

#[test]
fn missing_files_make_their_fields_nan_and_are_reported_once() {
    let mut fs = host([[0; 5]; 2], (0, 0), [0; 4]);
    for path in [
        "/proc/pressure/cpu",
        "/proc/pressure/io",
        "/proc/pressure/memory",
        "/proc/diskstats",
    ] {
        fs.remove(path);
    }
    fs.set("/proc/meminfo", "MemTotal: 4096 kB\n");
    let mut sampler = HostSampler::with_ticks_per_second(Some(4242), 100.0);
    for _ in 0..3 {
        let s = sampler.sample_with(&fs, second());
        assert!(
            s.psi_io_full.is_nan() && s.psi_cpu_some.is_nan() && s.mem_available_bytes.is_nan()
        );
        assert!(s.disk_read_bps.is_nan() && s.proc_tree_count.is_nan());
    }
    let names: Vec<&str> = sampler.unavailable().iter().map(|(m, _)| *m).collect();
    assert_eq!(
        names,
        [
            "disk_read_bps",
            "disk_write_bps",
            "mem_available_bytes",
            "psi_cpu_some",
            "psi_io_some",
            "psi_io_full",
            "psi_mem_some",
            "psi_mem_full",
            "proc_tree_cpu",
            "proc_tree_count",
        ]
    );
    let why = |metric: &str| {
        &sampler
            .unavailable()
            .iter()
            .find(|(m, _)| *m == metric)
            .unwrap()
            .1
    };
    assert!(
        why("psi_io_full").contains("CONFIG_PSI"),
        "{}",
        why("psi_io_full")
    );
    assert!(why("mem_available_bytes").contains("MemAvailable"));
    assert!(why("proc_tree_cpu").contains("4242"));
}

#[test]
fn an_unreadable_proc_stat_is_nan_not_zero_and_recovers() {
    let mut fs = host([[0; 5]; 2], (0, 0), [0; 4]);
    fs.remove("/proc/stat");
    let mut sampler = HostSampler::with_ticks_per_second(None, 100.0);
    let s = sampler.sample_with(&fs, second());
    assert!(s.cpu_core_util.is_empty() && s.cpu_total_util.is_nan());
    assert_eq!(sampler.unavailable().len(), 3);
    let fs = host([[1, 1, 1, 1, 0]; 2], (0, 0), [0; 4]);
    sampler.sample_with(&fs, second());
    let s = sampler.sample_with(&host([[2, 1, 2, 1, 0]; 2], (0, 0), [0; 4]), second());
    assert_eq!(s.cpu_total_util, 50.0);
}

#[test]
fn every_field_is_nan_off_linux() {
    if cfg!(target_os = "linux") {
        return;
    }
    let mut sampler = HostSampler::new(None);
    let s = sampler.sample();
    assert!(s.cpu_total_util.is_nan() && s.mem_available_bytes.is_nan());
    assert!(sampler
        .unavailable()
        .iter()
        .all(|(_, why)| why.starts_with("not Linux")));
    assert_eq!(sampler.unavailable().len(), METRICS.len());
}

#[cfg(target_os = "linux")]
#[test]
fn smoke_test_against_this_machines_proc() {
    // Every file on every sample, the host-wide ones kept open.
    let mut sampler = HostSampler::with_cadence(Some(std::process::id()), 1, true);
    sampler.sample();
    // Burn a little CPU so the interval is not empty, without a timed assertion.
    let deadline = Instant::now() + Duration::from_millis(50);
    let mut spin = 0u64;
    while Instant::now() < deadline {
        spin = spin.wrapping_add(1);
    }
    std::hint::black_box(spin);
    let s = sampler.sample();
    assert_eq!(s.cpu_core_util.len(), cpu_count_logical());
    assert!(s.cpu_total_util.is_finite(), "{s:?}");
    assert!(s.mem_available_bytes.is_finite() && s.mem_available_bytes > 0.0);
    assert!(
        s.proc_tree_cpu.is_finite() && s.proc_tree_cpu >= 0.0,
        "{s:?}"
    );
    assert!(s.proc_tree_count >= 1.0);
    let psi_ok = s.psi_cpu_some.is_finite()
        || sampler
            .unavailable()
            .iter()
            .any(|(m, _)| *m == "psi_cpu_some");
    assert!(
        psi_ok,
        "a NaN must come with a reason: {:?}",
        sampler.unavailable()
    );
    if !sampler
        .unavailable()
        .iter()
        .any(|(m, _)| *m == "disk_read_bps")
    {
        assert!(s.disk_read_bps.is_finite() && s.disk_write_bps.is_finite());
    }
}

#[test]
fn slow_moving_data_is_read_every_nth_sample_and_held_between() {
    let mut sampler = HostSampler::with_ticks_per_second(Some(100), 100.0);
    sampler.slow_every = 3;
    // Disk counters grow by 1 MB per sample, the tree by 10 ticks; CPU moves every sample.
    let mut readings = Vec::new();
    let mut fs = host([[0; 5]; 2], (0, 0), [0; 4]);
    for i in 0..7u64 {
        let busy = 10 * (i + 1);
        let sectors = 2048 * i;
        let next = host(
            [[busy, 0, 100, 0, 0]; 2],
            (sectors, sectors),
            [10 * i, 0, 0, 0],
        );
        for path in ["/proc/stat", "/proc/diskstats", "/proc/100/stat"] {
            fs.set(path, next.read(path).unwrap());
        }
        readings.push(sampler.sample_with(&fs, second()));
    }
    // Read on samples 0, 3 and 6 only; CPU and memory on all seven.
    assert_eq!(fs.reads_of("/proc/stat"), 7);
    assert_eq!(fs.reads_of("/proc/meminfo"), 7);
    assert_eq!(fs.reads_of("/proc/diskstats"), 3);
    assert_eq!(fs.reads_of("/proc/pressure/io"), 3);
    // The rate read at sample 3 covers the three seconds since sample 0 (3 × 1 MiB of
    // 512-byte sectors over 3 s), and samples 4 and 5 repeat it.
    let mib = 1_048_576.0;
    for s in &readings[3..6] {
        assert_eq!(s.disk_read_bps, mib as f32);
        assert_eq!(s.psi_io_some, 1.5);
    }
    assert!(
        readings[1].disk_read_bps.is_nan(),
        "held from the first read: no rate yet"
    );
    assert!(
        readings[1].psi_io_some == 1.5,
        "instant values are held too"
    );
    // The tree's CPU over those three seconds: 30 ticks at 100 per second = 10% of a core.
    assert_eq!(readings[3].proc_tree_cpu, 10.0);
    assert_eq!(readings[5].proc_tree_cpu, 10.0);
    // CPU is fresh on every sample: the busy counters grew by 10 of 110 ticks each time.
    assert!(readings[1..].iter().all(|s| s.cpu_total_util.is_finite()));
}

#[test]
fn the_default_cadence_reads_slow_data_every_slow_every_samples() {
    let fs = host([[0; 5]; 2], (0, 0), [0; 4]);
    let mut sampler = HostSampler::with_cadence(None, SLOW_EVERY, false);
    for _ in 0..2 * SLOW_EVERY {
        sampler.sample_with(&fs, second());
    }
    assert_eq!(fs.reads_of("/proc/diskstats"), 2);
    assert_eq!(fs.reads_of("/proc/stat"), 2 * SLOW_EVERY as usize);
}

use super::*;

const STAT: &str = "\
cpu  8644 0 2621 68245 275 0 59 228 0 0
cpu0 4168 0 1165 34542 44 0 19 107 0 0
cpu1 4476 0 1455 33703 231 0 39 120 0 0
intr 1234 0 0
ctxt 5678
btime 1700000000
";

#[test]
fn proc_stat_reads_aggregate_and_per_core_lines() {
    let stat = parse_proc_stat(STAT);
    let total = stat.total.unwrap();
    assert_eq!(total.user, 8644);
    assert_eq!(total.idle, 68245);
    assert_eq!(total.iowait, 275);
    assert_eq!(total.steal, 228);
    assert_eq!(stat.cores.len(), 2);
    assert_eq!(stat.cores[1].0, 1);
    assert_eq!(stat.cores[1].1.system, 1455);
}

#[test]
fn proc_stat_skips_malformed_lines_and_accepts_old_short_ones() {
    let text = "cpu 1 2 3 4\ncpu0 1 2 x 4 5\ncpu1 1 2\ncpuX 1 2 3 4\ncpu2 10 0 0 90\n\
                cpu4000000000 1 2 3 4\n";
    let stat = parse_proc_stat(text);
    assert_eq!(stat.total.unwrap().idle, 4);
    assert_eq!(stat.total.unwrap().steal, 0);
    assert_eq!(stat.cores.len(), 1);
    assert_eq!(stat.cores[0].0, 2);
    assert_eq!(parse_proc_stat("garbage\n\n"), ProcStat::default());
}

#[test]
fn guest_time_is_not_counted_twice() {
    let t = CpuTimes {
        user: 10,
        idle: 5,
        guest: 7,
        guest_nice: 3,
        ..CpuTimes::default()
    };
    assert_eq!(t.total(), 15);
}

#[test]
fn busy_and_iowait_percentages_over_an_interval() {
    let prev = CpuTimes {
        user: 100,
        idle: 100,
        iowait: 10,
        ..CpuTimes::default()
    };
    // 100 ticks pass: 30 user, 10 system, 40 idle, 20 iowait -> 40% busy, 20% iowait.
    let cur = CpuTimes {
        user: 130,
        system: 10,
        idle: 140,
        iowait: 30,
        ..CpuTimes::default()
    };
    assert_eq!(cur.busy_percent_since(&prev), 40.0);
    assert_eq!(cur.iowait_percent_since(&prev), 20.0);
    assert!(cur.busy_percent_since(&cur).is_nan(), "no tick passed");
}

#[test]
fn iowait_going_backwards_stays_within_range() {
    let prev = CpuTimes {
        user: 100,
        idle: 100,
        iowait: 50,
        ..CpuTimes::default()
    };
    let cur = CpuTimes {
        user: 150,
        idle: 150,
        iowait: 40,
        ..CpuTimes::default()
    };
    let busy = cur.busy_percent_since(&prev);
    assert!((0.0..=100.0).contains(&busy), "{busy}");
    assert_eq!(cur.iowait_percent_since(&prev), 0.0);
}

#[test]
fn meminfo_converts_kilobytes_to_bytes() {
    let text =
        "MemTotal:       24683656 kB\nMemFree:        24416224 kB\nMemAvailable:   24394908 kB\n";
    let info = parse_meminfo(text);
    assert_eq!(info.total, Some(24_683_656 * 1024));
    assert_eq!(info.available, Some(24_394_908 * 1024));
}

#[test]
fn meminfo_without_mem_available_leaves_it_missing() {
    let info = parse_meminfo("MemTotal: 1000 kB\nMemAvailable: lots kB\nnonsense\n");
    assert_eq!(info.total, Some(1_024_000));
    assert_eq!(info.available, None);
}

const DISKSTATS: &str = "\
   7       0 loop0 5 0 100 0 0 0 0 0 0 0 0 0 0 0 0 0 0
   1       0 ram0 5 0 100 0 0 0 0 0 0 0 0 0 0 0 0 0 0
 253       0 zram0 5 0 100 0 0 0 0 0 0 0 0 0 0 0 0 0 0
 252       0 dm-0 5 0 100 0 3 0 100 0 0 0 0 0 0 0 0 0 0
   9       0 md0 5 0 100 0 3 0 100 0 0 0 0 0 0 0 0 0 0
   8       0 sda 9769 3747 2000 11699 1251 6561 1000 4804 0 3792 17494
   8       1 sda1 9000 3000 1500 11000 1000 6000 800 4000 0 3000 17000
 259       0 nvme0n1 10 0 4 0 10 0 8 0 0 0 0
 259       1 nvme0n1p1 10 0 4 0 10 0 8 0 0 0 0
 259       2 nvme0n12 10 0 1 0 10 0 1 0 0 0 0
 254       0 vda 1 2
 254       0 vdb 1 2 x 4 5 6 7 8 9 10
";

#[test]
fn diskstats_keeps_whole_disks_only() {
    let disks = parse_diskstats(DISKSTATS);
    let names: Vec<&str> = disks.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["sda", "nvme0n1", "nvme0n12"]);
    assert_eq!(disks[0].read, 2000 * 512);
    assert_eq!(disks[0].written, 1000 * 512);
    assert_eq!(disks[1].read, 4 * 512);
}

#[test]
fn partition_names() {
    assert!(is_partition_of("sda1", "sda"));
    assert!(is_partition_of("sda12", "sda"));
    assert!(is_partition_of("nvme0n1p1", "nvme0n1"));
    assert!(is_partition_of("mmcblk0p2", "mmcblk0"));
    assert!(!is_partition_of("sdab", "sda"));
    assert!(!is_partition_of("sda", "sda"));
    assert!(!is_partition_of("nvme0n12", "nvme0n1"));
    assert!(!is_partition_of("nvme0n1p", "nvme0n1"));
    assert!(!is_virtual_disk("mdx"));
    assert!(is_virtual_disk("md127"));
}

#[test]
fn psi_reads_some_and_full_avg10() {
    let text = "some avg10=0.19 avg60=0.10 avg300=0.19 total=2132337\n\
                full avg10=12.50 avg60=0.06 avg300=0.16 total=1917819\n";
    let psi = parse_psi(text);
    assert_eq!(psi.some_avg10, Some(0.19));
    assert_eq!(psi.full_avg10, Some(12.5));
}

#[test]
fn psi_cpu_file_of_older_kernels_has_no_full_line() {
    let psi = parse_psi("some avg10=3.00 avg60=0.10 avg300=0.19 total=2132337\n");
    assert_eq!(psi.some_avg10, Some(3.0));
    assert_eq!(psi.full_avg10, None);
    assert_eq!(parse_psi("some avg10=abc\nfull\n"), Psi::default());
}

#[test]
fn cpuinfo_counts_distinct_physical_cores() {
    // Socket 0 has two hyper-threaded cores (four logical CPUs), socket 1 two cores whose ids
    // repeat socket 0's: counting pairs, not core ids, gives four physical cores.
    let block = |cpu: u32, phys: u32, core: u32| {
        format!("processor\t: {cpu}\nmodel name\t: AMD EPYC 7763\nphysical id\t: {phys}\ncore id\t\t: {core}\n\n")
    };
    let text = [
        block(0, 0, 0),
        block(1, 0, 1),
        block(2, 0, 0),
        block(3, 0, 1),
        block(4, 1, 0),
        block(5, 1, 1),
    ]
    .concat();
    let info = parse_cpuinfo(text.trim_end());
    assert_eq!(info.model.as_deref(), Some("AMD EPYC 7763"));
    assert_eq!(info.physical_cores, Some(4));
}

#[test]
fn cpuinfo_without_core_ids_has_no_physical_count() {
    let text = "processor\t: 0\nBogoMIPS\t: 50.00\nCPU part\t: 0xd0c\n\nprocessor\t: 1\n";
    let info = parse_cpuinfo(text);
    assert_eq!(info.model, None);
    assert_eq!(info.physical_cores, None);
}

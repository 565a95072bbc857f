use super::*;
use crate::host::MemProc;

/// A `/proc/<pid>/stat` line with the given fields and zeros elsewhere.
pub(crate) fn stat_line(
    pid: u32,
    comm: &str,
    ppid: u32,
    utime: u64,
    stime: u64,
    start: u64,
) -> String {
    format!(
        "{pid} ({comm}) S {ppid} {pid} {pid} 0 -1 4194304 101 0 0 0 {utime} {stime} 7 9 20 0 1 0 \
         {start} 3133440 396 18446744073709551615 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0"
    )
}

#[test]
fn pid_stat_fields_of_a_real_line() {
    let line = "5122 (cat) R 5112 5112 3531 0 -1 4194304 101 0 0 0 3 4 0 0 20 0 1 0 40160 \
                3133440 396 18446744073709551615 94288571199488 94288571219369 0 0 0 0 0 0 0 0";
    let s = parse_pid_stat(line).unwrap();
    assert_eq!(
        s,
        PidStat {
            pid: 5122,
            ppid: 5112,
            ticks: 7,
            start: 40160
        }
    );
}

#[test]
fn pid_stat_comm_with_spaces_and_parentheses() {
    let s = parse_pid_stat(&stat_line(1234, "my (weird) proc", 1, 50, 25, 99)).unwrap();
    assert_eq!((s.pid, s.ppid, s.ticks, s.start), (1234, 1, 75, 99));
    let s = parse_pid_stat(&stat_line(7, ") S 999 (", 3, 1, 1, 5)).unwrap();
    assert_eq!((s.pid, s.ppid), (7, 3));
}

#[test]
fn pid_stat_rejects_malformed_lines() {
    assert_eq!(parse_pid_stat(""), None);
    assert_eq!(parse_pid_stat("12 cat S 1 2 3"), None);
    assert_eq!(parse_pid_stat("12 (cat) S 1 2 3"), None, "truncated");
    assert_eq!(
        parse_pid_stat("x (cat) S 1 1 1 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 5"),
        None
    );
    assert_eq!(parse_pid_stat(")12 (cat"), None);
}

#[test]
fn tree_follows_grandchildren_and_ignores_others() {
    // 1 ─ 10 ─ 20 ─ 30      (10 is the root)
    //   │    └ 21
    //   └ 11 ─ 22
    let procs = [
        (1, 0),
        (10, 1),
        (11, 1),
        (20, 10),
        (21, 10),
        (22, 11),
        (30, 20),
    ];
    let mut tree = tree_of(10, &procs);
    tree.sort_unstable();
    assert_eq!(tree, [10, 20, 21, 30]);
    assert_eq!(tree_of(99, &procs), [99]);
}

#[test]
fn tree_survives_a_cycle() {
    let mut tree = tree_of(1, &[(1, 2), (2, 1)]);
    tree.sort_unstable();
    assert_eq!(tree, [1, 2]);
}

fn three_level_proc(ticks: [u64; 5]) -> MemProc {
    // 100 is the root, 200 and 201 its children, 300 a grandchild; 999 is not in the tree.
    let layout = [(100, 1), (200, 100), (201, 100), (300, 200), (999, 1)];
    let mut fs = MemProc::new();
    for ((pid, ppid), t) in layout.into_iter().zip(ticks) {
        fs.set(
            &format!("/proc/{pid}/stat"),
            stat_line(pid, "python", ppid, t, 0, pid.into()),
        );
    }
    fs
}

#[test]
fn tracker_sums_ticks_over_three_levels() {
    let mut tracker = TreeTracker::new(100);
    let first = tracker
        .read(&three_level_proc([10, 10, 10, 10, 10]))
        .unwrap();
    assert_eq!(
        first,
        TreeReading {
            count: 4,
            ticks_delta: None
        }
    );
    let second = tracker
        .read(&three_level_proc([15, 30, 10, 110, 5000]))
        .unwrap();
    assert_eq!(
        second,
        TreeReading {
            count: 4,
            ticks_delta: Some(5 + 20 + 100)
        }
    );
}

#[test]
fn tracker_scans_all_processes_only_every_nth_call() {
    let mut fs = three_level_proc([0; 5]);
    let mut tracker = TreeTracker::new(100);
    tracker.read(&fs).unwrap();
    assert_eq!(fs.list_pids_calls(), 1);
    // A new child between scans is not seen until the next scan.
    fs.set("/proc/400/stat", stat_line(400, "worker", 100, 0, 0, 400));
    for _ in 1..TREE_RESCAN_EVERY {
        assert_eq!(tracker.read(&fs).unwrap().count, 4);
    }
    assert_eq!(fs.list_pids_calls(), 1);
    assert_eq!(tracker.read(&fs).unwrap().count, 5);
    assert_eq!(fs.list_pids_calls(), 2);
}

#[test]
fn tracker_drops_exited_members_and_strangers_reusing_a_pid() {
    let mut fs = three_level_proc([0; 5]);
    let mut tracker = TreeTracker::new(100);
    tracker.read(&fs).unwrap();
    fs.remove("/proc/201/stat");
    fs.set("/proc/300/stat", stat_line(300, "other", 1, 500, 0, 12345));
    let reading = tracker.read(&fs).unwrap();
    assert_eq!(
        reading,
        TreeReading {
            count: 2,
            ticks_delta: Some(0)
        }
    );
}

#[test]
fn tracker_reports_a_missing_root() {
    let mut tracker = TreeTracker::new(4242);
    let why = tracker.read(&three_level_proc([0; 5])).unwrap_err();
    assert!(why.contains("4242"), "{why}");
}

#[test]
fn tracker_does_not_adopt_a_new_process_with_the_roots_pid() {
    let mut fs = three_level_proc([0; 5]);
    let mut tracker = TreeTracker::new(100);
    tracker.read(&fs).unwrap();
    fs.set(
        "/proc/100/stat",
        stat_line(100, "impostor", 1, 0, 0, 777_777),
    );
    for _ in 1..TREE_RESCAN_EVERY {
        let _ = tracker.read(&fs);
    }
    assert!(
        tracker.read(&fs).is_err(),
        "the rescan must not adopt the new pid 100"
    );
}

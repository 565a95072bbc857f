use super::*;

fn gpus(n: u32) -> Vec<Gpu> {
    (0..n)
        .map(|i| Gpu {
            index: i,
            uuid: Some(format!("GPU-{i}0000000-aaaa")),
            pci_bus_id: Some(format!("0000:{:02X}:00.0", 0x18 + i)),
            name: Some("NVIDIA H100 80GB HBM3".into()),
            memory_total_mib: Some(80_000.0),
            parent: None,
        })
        .collect()
}

/// GPU 0 whole, GPU 1 MIG-enabled with two slices (indices 2 and 3).
fn sliced() -> Vec<Gpu> {
    let mut g = gpus(2);
    for (index, slot) in [(2, 0), (3, 1)] {
        g.push(Gpu {
            index,
            uuid: Some(format!("MIG-{slot}1111111-bbbb")),
            pci_bus_id: g[1].pci_bus_id.clone(),
            name: Some("NVIDIA H100 80GB HBM3 MIG 3g.40gb".into()),
            memory_total_mib: Some(40_000.0),
            parent: Some(1),
        });
    }
    g
}

fn seen(device: u32, pid: u32, owner: Owner, used_mib: f64) -> Seen {
    Seen {
        device,
        pid,
        owner,
        name: None,
        used_mib: Some(used_mib),
        sm_share: None,
        first_s: 1.0,
        last_s: 9.0,
    }
}

fn run(g: &[Gpu], s: &[Seen], env: &JobEnv, chosen: Option<&[Selector]>) -> JobGpus {
    decide(&Inputs {
        gpus: g,
        seen: s,
        env,
        chosen,
        tree_known: true,
        unreadable: &[],
    })
}

fn cvd(v: &str) -> JobEnv {
    JobEnv {
        cuda_visible_devices: Some(v.into()),
        cuda_device_order: None,
    }
}

#[test]
fn the_job_s_processes_decide_and_the_neighbour_on_its_gpu_is_named() {
    let g = gpus(2);
    let s = [
        seen(0, 4242, Owner::Job, 60_000.0),
        seen(0, 7777, Owner::Other, 20_000.0),
        seen(1, 9999, Owner::Other, 1_000.0),
    ];
    // A CUDA_VISIBLE_DEVICES naming GPU 1 loses against what the processes show.
    let j = run(&g, &s, &cvd("1"), None);
    assert_eq!(j.method, JobGpusMethod::Processes);
    assert_eq!((j.indices, j.others), (vec![0], vec![1]));
    assert!(j.reason.contains("4242"), "{}", j.reason);
    assert_eq!(j.shared.len(), 1, "only the job's GPUs' other processes");
    assert_eq!(j.shared[0].pid, 7777);
    assert_eq!(j.shared[0].memory_share, Some(0.25));
}

#[test]
fn unresolved_pids_are_others_only_once_the_job_s_own_pids_resolved() {
    let g = gpus(1);
    let with_job = [
        seen(0, 1, Owner::Job, 10.0),
        seen(0, 2, Owner::Unresolved, 10.0),
    ];
    assert_eq!(run(&g, &with_job, &JobEnv::default(), None).shared.len(), 1);
    // In a container none of NVML's (host) pids resolve: the job's own could be among them.
    let none = [
        seen(0, 1, Owner::Unresolved, 10.0),
        seen(0, 2, Owner::Other, 10.0),
    ];
    let j = run(&g, &none, &JobEnv::default(), None);
    assert!(j.shared.is_empty());
    assert_eq!(j.method, JobGpusMethod::All);
}

#[test]
fn the_override_wins_and_says_what_it_could_not_find() {
    let g = gpus(4);
    let s = [seen(0, 4242, Owner::Job, 1.0)];
    let sel = parse_gpus("2,GPU-30,7").expect("valid");
    let j = run(&g, &s, &JobEnv::default(), Some(&sel));
    assert_eq!(j.method, JobGpusMethod::Override);
    assert_eq!((j.indices, j.others), (vec![2, 3], vec![0, 1]));
    assert!(j.reason.contains("not on this node: 7"), "{}", j.reason);
    // An override naming nothing here falls through to the next way.
    let sel = parse_gpus("9").expect("valid");
    let j = run(&g, &s, &JobEnv::default(), Some(&sel));
    assert_eq!(j.method, JobGpusMethod::Processes);
}

#[test]
fn cuda_visible_devices_decides_without_processes_through_cuda_s_order() {
    let mut g = gpus(3);
    // NVML index 0 sits on the highest bus: CUDA ordinal 0 is NVML index 1.
    g[0].pci_bus_id = Some("0000:C0:00.0".into());
    let j = run(&g, &[], &cvd("0"), None);
    assert_eq!(j.method, JobGpusMethod::CudaVisibleDevices);
    assert_eq!(j.indices, [1]);
    let j = run(&g, &[], &cvd("GPU-20"), None);
    assert_eq!(j.indices, [2]);
    // Mixed models without PCI_BUS_ID: fastest-first cannot be known; UUIDs still work.
    g[2].name = Some("Tesla T4".into());
    let j = run(&g, &[], &cvd("1"), None);
    assert_eq!(j.method, JobGpusMethod::All);
    assert!(j.reason.contains("fastest-first"), "{}", j.reason);
    let env = JobEnv {
        cuda_visible_devices: Some("1".into()),
        cuda_device_order: Some("PCI_BUS_ID".into()),
    };
    assert_eq!(run(&g, &[], &env, None).indices, [2]);
    assert_eq!(run(&g, &[], &cvd("GPU-20"), None).indices, [2]);
}

#[test]
fn nothing_to_go_by_means_every_gpu_and_says_why() {
    let g = gpus(2);
    let j = decide(&Inputs {
        gpus: &g,
        seen: &[seen(1, 50, Owner::Other, 5.0)],
        env: &JobEnv::default(),
        chosen: None,
        tree_known: false,
        unreadable: &[(
            0,
            "NO_PERMISSION from nvmlDeviceGetComputeRunningProcesses_v3".into(),
        )],
    });
    assert_eq!(j.method, JobGpusMethod::All);
    assert_eq!((j.indices, j.others), (vec![0, 1], vec![]));
    assert!(j.reason.contains("no process tree"), "{}", j.reason);
    assert!(
        j.reason.contains("CUDA_VISIBLE_DEVICES is not set"),
        "{}",
        j.reason
    );
    assert!(j.shared.is_empty());
    let j = run(&g, &[], &cvd("MIG-abc"), None);
    assert!(j.reason.contains("MIG"), "{}", j.reason);
}

#[test]
fn diagnose_override_keeps_the_recorded_neighbours_of_the_gpus_that_stay() {
    let devices: Vec<DeviceInfo> = (0..3)
        .map(|i| DeviceInfo {
            index: i,
            ..Default::default()
        })
        .collect();
    let before = JobGpus {
        indices: vec![0, 1],
        others: vec![2],
        shared: vec![
            ForeignProcess {
                device: 0,
                pid: 1,
                ..Default::default()
            },
            ForeignProcess {
                device: 1,
                pid: 2,
                ..Default::default()
            },
        ],
        ..Default::default()
    };
    let j = override_report(&devices, Some(&before), &[Selector::Index(1)]);
    assert_eq!((j.indices, j.others), (vec![1], vec![0, 2]));
    assert_eq!(j.shared.len(), 1);
    assert_eq!(j.shared[0].pid, 2);
}

#[test]
fn a_mig_uuid_in_cuda_visible_devices_names_its_slice_alone() {
    let g = sliced();
    let j = run(&g, &[], &cvd("MIG-11111111-bbbb"), None);
    assert_eq!(j.method, JobGpusMethod::CudaVisibleDevices);
    assert_eq!((j.indices, j.others), (vec![3], vec![0, 1, 2]));
    let none = run(&g, &[], &cvd("MIG-ffff"), None);
    assert_eq!(none.method, JobGpusMethod::All);
    assert!(none.reason.contains("no MIG device"), "{}", none.reason);
    // Taking every device, the sliced GPU is left to its slices.
    assert_eq!((none.indices, none.others), (vec![0, 2, 3], vec![1]));
}

#[test]
fn a_job_process_on_a_slice_makes_the_slice_the_job_s_not_its_gpu() {
    let g = sliced();
    // The GPU's list shows the slice's processes too, as a driver's does.
    let mut neighbour = seen(3, 7777, Owner::Other, 10_000.0);
    neighbour.sm_share = Some(0.4);
    let s = [
        seen(1, 4242, Owner::Job, 30_000.0),
        seen(3, 4242, Owner::Job, 30_000.0),
        neighbour,
    ];
    let j = run(&g, &s, &JobEnv::default(), None);
    assert_eq!(j.method, JobGpusMethod::Processes);
    assert_eq!((j.indices, j.others), (vec![3], vec![0, 1, 2]));
    assert_eq!(j.shared.len(), 1);
    assert_eq!(
        j.shared[0].memory_share,
        Some(0.25),
        "of the slice's memory"
    );
    assert_eq!(j.shared[0].sm_share, Some(0.4));
}

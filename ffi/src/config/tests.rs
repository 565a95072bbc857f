//! Reading `gpuwhy_config`: defaults, older and newer struct sizes, each field.

use super::*;

fn triple(p: Option<JobPlace>) -> Option<(u32, u32, Option<u32>)> {
    p.map(|p| (p.rank, p.world_size, p.local_rank))
}

#[test]
fn rank_comes_from_the_config_then_the_environment() {
    let none = |_: &str| None;
    let got =
        |r, w, l, env: &dyn Fn(&str) -> Option<String>| job_place(r, w, l, env).ok().map(triple);
    assert_eq!(got(3, 8, -1, &none), Some(Some((3, 8, None))));
    assert_eq!(got(3, 8, 1, &none), Some(Some((3, 8, Some(1)))));
    assert_eq!(got(-1, 0, -1, &none), Some(None));
    let env = |k: &str| match k {
        "RANK" => Some("5".to_string()),
        "WORLD_SIZE" => Some("16".to_string()),
        "LOCAL_RANK" => Some("5".to_string()),
        _ => None,
    };
    assert_eq!(got(-1, 0, -1, &env), Some(Some((5, 16, Some(5)))));
    // A local rank in the config without rank and world size is not taken alone.
    assert_eq!(got(-1, 0, 2, &env), Some(Some((5, 16, Some(5)))));
    // Explicit numbers win over the environment, local rank included.
    assert_eq!(got(1, 2, -1, &env), Some(Some((1, 2, None))));
    assert!(job_place(8, 8, -1, none).is_err());
    assert!(job_place(1, 8, 8, none).is_err());
}

#[test]
fn gpus_reach_the_recorder_and_a_bad_list_is_refused() {
    let read_with = |gpus: Option<&std::ffi::CStr>, size: usize| {
        let mut cfg = gpuwhy_config::defaults(size as u32);
        cfg.gpus = gpus.map_or(std::ptr::null(), |g| g.as_ptr());
        // SAFETY: `cfg` is a whole struct (at least `size` bytes) with NULL or valid strings.
        unsafe { read(&cfg) }
    };
    let s = read_with(Some(c"1,GPU-ab"), CONFIG_SIZE).expect("valid");
    assert_eq!(s.recorder.job.gpus.as_deref(), Some("1,GPU-ab"));
    let e = read_with(Some(c"1,x"), CONFIG_SIZE).expect_err("x is no GPU");
    assert_eq!(e.status, GPUWHY_INVALID_ARGUMENT);
    // A caller built before `gpus` was appended gets the default, whatever lies past.
    let old = std::mem::offset_of!(gpuwhy_config, gpus);
    let s = read_with(Some(c"x"), old).expect("the field is not read");
    assert_eq!(s.recorder.job.gpus, None);
}

#[test]
fn host_proc_reaches_the_recorder_and_an_older_caller_gets_none() {
    let read_with = |dir: &std::ffi::CStr, size: usize| {
        let mut cfg = gpuwhy_config::defaults(size as u32);
        cfg.host_proc = dir.as_ptr();
        // SAFETY: `cfg` is a whole struct (at least `size` bytes) with valid strings.
        unsafe { read(&cfg) }
    };
    let s = read_with(c"/host/proc", CONFIG_SIZE).expect("valid");
    assert_eq!(
        s.recorder.job.host_proc.as_deref(),
        Some(std::path::Path::new("/host/proc"))
    );
    let old = std::mem::offset_of!(gpuwhy_config, host_proc);
    let s = read_with(c"/host/proc", old).expect("the field is not read");
    assert_eq!(s.recorder.job.host_proc, None);
}

#[test]
fn the_provisional_period_reads_zero_as_the_default_and_negative_as_off() {
    let read_with = |period: f64, size: usize| {
        let mut cfg = gpuwhy_config::defaults(size as u32);
        cfg.provisional_period_s = period;
        // SAFETY: `cfg` is a whole struct (at least `size` bytes) without strings.
        unsafe { read(&cfg) }
    };
    let period = |p: f64| read_with(p, CONFIG_SIZE).map(|s| s.provisional_period_s);
    assert_eq!(period(0.0).expect("default"), Some(PROVISIONAL_PERIOD_S));
    assert_eq!(period(-1.0).expect("off"), None);
    assert_eq!(period(30.0).expect("set"), Some(30.0));
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let Err(e) = period(bad) else {
            panic!("{bad} taken for a period")
        };
        assert_eq!(e.status, GPUWHY_INVALID_ARGUMENT);
        assert!(e.message.contains("provisional_period_s"), "{}", e.message);
    }
    let old = std::mem::offset_of!(gpuwhy_config, provisional_period_s);
    let s = read_with(-1.0, old).expect("the field is not read");
    assert_eq!(s.provisional_period_s, Some(PROVISIONAL_PERIOD_S));
}

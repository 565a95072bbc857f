//! Scripted faults through the ABI: lost GPU, error windows, latency, capability lists, XID
//! events.

use std::ffi::c_uint;
use std::time::Instant;

use super::*;
use crate::exports::events::*;
use crate::exports::processes::nvmlDeviceGetComputeRunningProcesses_v2;
use crate::exports::system::nvmlDeviceGetCount;
use crate::exports::usage::nvmlDeviceGetPowerUsage;

const FAULTS: &str = r#"{
  "devices": [{"count": 2}],
  "faults": [
    {"kind": "xid", "device": 0, "at_s": 2, "code": 48},
    {"kind": "gpu_lost", "device": 1, "at_s": 6},
    {"kind": "error", "function": "nvmlDeviceGetPowerUsage", "code": 13, "device": 0, "from_s": 3, "until_s": 4},
    {"kind": "latency", "function": "nvmlDeviceGetArchitecture", "ms": 30, "from_s": 0, "until_s": 1}
  ]
}"#;

fn power(h: NvmlDevice) -> NvmlReturn {
    let mut mw: c_uint = 0;
    // SAFETY: valid out pointer.
    unsafe { nvmlDeviceGetPowerUsage(h, &mut mw) }
}

#[test]
fn a_gpu_is_lost_from_its_time_on() {
    let s = Session::start(FAULTS);
    let (h0, h1) = (s.handle(0), s.handle(1));
    assert_eq!(power(h1), SUCCESS);
    s.advance(6.5);
    assert_eq!(power(h1), ERROR_GPU_IS_LOST);
    assert_eq!(power(h0), SUCCESS, "the other GPU is unaffected");
    let mut h: NvmlDevice = std::ptr::null_mut();
    assert_eq!(
        // SAFETY: valid out pointer.
        unsafe { crate::exports::system::nvmlDeviceGetHandleByIndex(1, &mut h) },
        ERROR_GPU_IS_LOST
    );
    let mut n: c_uint = 0;
    // SAFETY: valid out pointer.
    assert_eq!(unsafe { nvmlDeviceGetCount(&mut n) }, SUCCESS);
    assert_eq!(n, 2, "a lost GPU is still counted");
}

#[test]
fn an_error_window_applies_only_inside_it_and_to_its_device() {
    let s = Session::start(FAULTS);
    let (h0, h1) = (s.handle(0), s.handle(1));
    s.advance(3.2);
    assert_eq!(power(h0), ERROR_FUNCTION_NOT_FOUND);
    assert_eq!(power(h1), SUCCESS);
    s.advance(1.0);
    assert_eq!(power(h0), SUCCESS, "the window ended at 4 s");
}

#[test]
fn latency_slows_the_call_in_its_window() {
    let s = Session::start(FAULTS);
    let h = s.handle(0);
    let before = crate::state::paused_ms();
    assert_eq!(
        get_u32(crate::exports::identity::nvmlDeviceGetArchitecture, h),
        9
    );
    assert_eq!(
        crate::state::paused_ms() - before,
        30,
        "30 ms in the window"
    );
    s.advance(2.0);
    let before = crate::state::paused_ms();
    get_u32(crate::exports::identity::nvmlDeviceGetArchitecture, h);
    assert_eq!(
        crate::state::paused_ms(),
        before,
        "no delay after the window"
    );
}

#[test]
fn capability_lists_answer_not_supported_and_no_permission() {
    let s = Session::start(
        r#"{"devices": [{"unsupported": ["nvmlDeviceGetPowerUsage"],
                         "no_permission": ["nvmlDeviceGetComputeRunningProcesses_v2"]}]}"#,
    );
    let h = s.handle(0);
    assert_eq!(power(h), ERROR_NOT_SUPPORTED);
    let mut count: c_uint = 0;
    // SAFETY: valid count pointer, NULL infos.
    let r = unsafe { nvmlDeviceGetComputeRunningProcesses_v2(h, &mut count, std::ptr::null_mut()) };
    assert_eq!(r, ERROR_NO_PERMISSION);
}

fn new_set() -> NvmlEventSet {
    let mut set: NvmlEventSet = std::ptr::null_mut();
    // SAFETY: valid out pointer.
    assert_eq!(unsafe { nvmlEventSetCreate(&mut set) }, SUCCESS);
    set
}

fn wait(set: NvmlEventSet) -> Result<NvmlEventData, NvmlReturn> {
    let mut data = NvmlEventData {
        device: std::ptr::null_mut(),
        eventType: 0,
        eventData: 0,
        gpuInstanceId: 0,
        computeInstanceId: 0,
    };
    // SAFETY: valid out pointer.
    match unsafe { nvmlEventSetWait(set, &mut data, 0) } {
        SUCCESS => Ok(data),
        code => Err(code),
    }
}

#[test]
fn an_xid_is_delivered_once_to_a_registered_set() {
    let s = Session::start(FAULTS);
    let (h0, h1) = (s.handle(0), s.handle(1));
    let set = new_set();
    let other = new_set();
    assert_eq!(
        nvmlDeviceRegisterEvents(h0, EVENT_TYPE_XID_CRITICAL_ERROR, set),
        SUCCESS
    );
    assert_eq!(
        nvmlDeviceRegisterEvents(h1, EVENT_TYPE_XID_CRITICAL_ERROR, set),
        SUCCESS
    );
    assert_eq!(
        nvmlDeviceRegisterEvents(h0, 0x4, other),
        SUCCESS,
        "P-state only"
    );
    assert_eq!(
        nvmlDeviceRegisterEvents(h0, 0x10, other),
        ERROR_NOT_SUPPORTED
    );
    assert_eq!(
        wait(set).map(|d| d.eventData),
        Err(ERROR_TIMEOUT),
        "nothing before 2 s"
    );
    s.advance(2.5);
    let event = wait(set).expect("the XID at 2 s");
    assert_eq!(
        (event.device, event.eventType, event.eventData),
        (h0, 0x8, 48)
    );
    assert_eq!(event.gpuInstanceId, NO_MIG_INSTANCE);
    assert_eq!(
        wait(set).map(|d| d.eventData),
        Err(ERROR_TIMEOUT),
        "delivered once"
    );
    assert_eq!(
        wait(other).map(|d| d.eventData),
        Err(ERROR_TIMEOUT),
        "not registered for XIDs"
    );
    s.advance(4.0);
    let lost = wait(set).expect("the lost GPU's XID 79");
    assert_eq!((lost.device, lost.eventData), (h1, 79));
    assert_eq!(nvmlEventSetFree(set), SUCCESS);
    assert_eq!(
        nvmlEventSetFree(set),
        ERROR_INVALID_ARGUMENT,
        "already freed"
    );
    assert_eq!(wait(set).map(|d| d.eventData), Err(ERROR_INVALID_ARGUMENT));
}

#[test]
fn waiting_with_a_zero_timeout_does_not_block_and_long_timeouts_are_capped() {
    let _s = Session::start(FAULTS);
    let set = new_set();
    let before = crate::state::paused_ms();
    assert_eq!(wait(set).map(|d| d.eventData), Err(ERROR_TIMEOUT));
    assert_eq!(
        crate::state::paused_ms(),
        before,
        "a zero timeout does not wait"
    );
    let mut data = std::mem::MaybeUninit::<NvmlEventData>::uninit();
    assert_eq!(
        // SAFETY: `data` is valid for one write.
        unsafe { nvmlEventSetWait(set, data.as_mut_ptr(), 60_000) },
        ERROR_TIMEOUT
    );
    assert_eq!(
        crate::state::paused_ms() - before,
        50,
        "a minute is capped at 50 ms"
    );
}

#[test]
fn a_removed_gpu_leaves_the_count_and_the_others_move_down() {
    let s = Session::start(
        r#"{"devices": [{"count": 3}],
            "faults": [{"kind": "gpu_removed", "device": 1, "at_s": 2}]}"#,
    );
    let (h0, h1, h2) = (s.handle(0), s.handle(1), s.handle(2));
    let count = || {
        let mut n: c_uint = 0;
        // SAFETY: valid out pointer.
        assert_eq!(unsafe { nvmlDeviceGetCount(&mut n) }, SUCCESS);
        n
    };
    assert_eq!(count(), 3);
    s.advance(2.5);
    assert_eq!(count(), 2, "the removed GPU is no longer counted");
    assert_eq!(power(h1), ERROR_GPU_IS_LOST, "its old handle is dead");
    assert_eq!((power(h0), power(h2)), (SUCCESS, SUCCESS));
    assert_eq!(s.handle(1), h2, "index 1 is now the third GPU");
    let mut h: NvmlDevice = std::ptr::null_mut();
    assert_eq!(
        // SAFETY: valid out pointer.
        unsafe { crate::exports::system::nvmlDeviceGetHandleByIndex(2, &mut h) },
        ERROR_INVALID_ARGUMENT,
        "past the shorter list"
    );
    let set = new_set();
    assert_eq!(
        nvmlDeviceRegisterEvents(h0, EVENT_TYPE_XID_CRITICAL_ERROR, set),
        SUCCESS
    );
    assert_eq!(
        wait(set).map(|d| d.eventData),
        Err(ERROR_TIMEOUT),
        "a removal raises no XID"
    );
}

#[test]
fn a_slow_init_blocks_only_the_caller_and_time_starts_after_it() {
    let _s = Session::uninitialised(r#"{"init_delay_ms": 300, "devices": [{}]}"#);
    let other = std::thread::spawn(|| {
        // Call while the init is in its delay (the guard only stops a hang).
        let guard = Instant::now();
        while !crate::state::init_pausing() {
            assert!(guard.elapsed().as_secs() < 120, "the init never started");
            std::thread::yield_now();
        }
        let mut n: c_uint = 0;
        // SAFETY: valid out pointer.
        let r = unsafe { nvmlDeviceGetCount(&mut n) };
        (r, crate::state::paused_ms())
    });
    let before = crate::state::paused_ms();
    assert_eq!(crate::exports::system::nvmlInit(), SUCCESS);
    assert_eq!(
        crate::state::paused_ms() - before,
        300,
        "the init waited its delay"
    );
    let (r, waited) = other.join().expect("joins");
    assert_eq!(
        r, ERROR_UNINITIALIZED,
        "a call during init is not blocked by it"
    );
    assert_eq!(waited, 0, "the other thread was not made to wait");
    let before = crate::state::paused_ms();
    assert_eq!(crate::exports::system::nvmlInit(), SUCCESS);
    assert_eq!(
        crate::state::paused_ms(),
        before,
        "a second init is counted, not slow"
    );
}

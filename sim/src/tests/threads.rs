//! NVML promises thread safety: gpuwhy's sampler calls from a background thread while
//! other threads may call too.

use super::*;
use crate::exports::events::{nvmlEventSetCreate, nvmlEventSetFree, nvmlEventSetWait};
use crate::exports::fields::nvmlDeviceGetFieldValues;
use crate::exports::usage::{nvmlDeviceGetPowerUsage, nvmlDeviceGetUtilizationRates};

/// A handle crossing threads; it is an address into the static device table.
#[derive(Clone, Copy)]
struct Shared(NvmlDevice);
// SAFETY: the handle is only compared with table addresses by the library, which guards its
// state with a mutex; sending the address to another thread is what NVML callers do.
unsafe impl Send for Shared {}

#[test]
fn concurrent_calls_all_succeed() {
    let s = Session::start(SQUARE);
    let h = Shared(s.handle(0));
    let workers: Vec<_> = (0..4)
        .map(|k| {
            std::thread::spawn(move || {
                let h = h;
                for _ in 0..300 {
                    let mut u = NvmlUtilization { gpu: 0, memory: 0 };
                    assert_eq!(
                        // SAFETY: valid out pointer.
                        unsafe { nvmlDeviceGetUtilizationRates(h.0, &mut u) },
                        SUCCESS
                    );
                    assert!(get_u32(nvmlDeviceGetPowerUsage, h.0) >= 100_000);
                    let mut f = [NvmlFieldValue {
                        fieldId: 138 + k % 2,
                        scopeId: u32::MAX,
                        timestamp: 0,
                        latencyUsec: 0,
                        valueType: 0,
                        nvmlReturn: 0,
                        value: NvmlValue { ullVal: 0 },
                    }];
                    // SAFETY: `f` holds one initialised element.
                    let r = unsafe { nvmlDeviceGetFieldValues(h.0, 1, f.as_mut_ptr()) };
                    assert_eq!((r, f[0].nvmlReturn), (SUCCESS, SUCCESS));
                }
            })
        })
        .collect();
    let mut set: NvmlEventSet = std::ptr::null_mut();
    // SAFETY: valid out pointer.
    assert_eq!(unsafe { nvmlEventSetCreate(&mut set) }, SUCCESS);
    let mut data = std::mem::MaybeUninit::<NvmlEventData>::uninit();
    for _ in 0..5 {
        // SAFETY: `data` is valid for one write.
        let r = unsafe { nvmlEventSetWait(set, data.as_mut_ptr(), 5) };
        assert_eq!(
            r, ERROR_TIMEOUT,
            "a waiting thread does not block the others"
        );
    }
    for w in workers {
        w.join().expect("worker");
    }
    assert_eq!(nvmlEventSetFree(set), SUCCESS);
}

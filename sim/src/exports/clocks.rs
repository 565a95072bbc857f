//! Temperature, clocks, P-state and clock event ("throttle") reasons.

use std::ffi::c_uint;

use super::device_scalar;
use crate::abi::*;
use crate::metric::Metric;
use crate::scenario::Device;

/// Checks a sensor: the GPU die sensor is modelled; `NVML_TEMPERATURE_GPU_MAX` exists in the
/// header but not on the simulated GPUs, which answer NOT_SUPPORTED as a driver does for a
/// sensor the board lacks; anything past the header's sensors is INVALID_ARGUMENT.
fn sensor(sensor_type: c_uint) -> Result<(), NvmlReturn> {
    match sensor_type {
        TEMPERATURE_GPU => Ok(()),
        t if t < TEMPERATURE_COUNT => Err(ERROR_NOT_SUPPORTED),
        _ => Err(ERROR_INVALID_ARGUMENT),
    }
}

/// `nvmlDeviceGetTemperatureV`: `temp_c` for sensor `NVML_TEMPERATURE_GPU`. `version` must
/// be `nvmlTemperature_v1` (0x0100000C), else ARGUMENT_VERSION_MISMATCH; sensor
/// `NVML_TEMPERATURE_GPU_MAX` is NOT_SUPPORTED, an unknown one INVALID_ARGUMENT.
///
/// # Safety
/// `temperature` must be NULL or valid for reading and writing one `nvmlTemperature_v1_t`
/// whose `version` and `sensorType` are initialised.
#[cfg(not(feature = "old-driver"))]
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetTemperatureV(
    device: NvmlDevice,
    temperature: *mut NvmlTemperature,
) -> NvmlReturn {
    let read = |c: crate::state::Call, d: &Device| {
        // SAFETY: `device_scalar` calls this only after checking the pointer is non-NULL;
        // the caller guarantees the input field `version` is initialised.
        let version = unsafe { (&raw const (*temperature).version).read() };
        if version != TEMPERATURE_V1_VERSION {
            return Err(ERROR_ARGUMENT_VERSION_MISMATCH);
        }
        // SAFETY: as above, for the input field `sensorType`.
        let sensor_type = unsafe { (&raw const (*temperature).sensorType).read() };
        sensor(sensor_type)?;
        Ok(NvmlTemperature {
            version,
            sensorType: sensor_type,
            temperature: d.value(Metric::TempC, c.t).round() as i32,
        })
    };
    // SAFETY: forwarded from this function's contract.
    unsafe { device_scalar("nvmlDeviceGetTemperatureV", device, temperature, read) }
}

/// `nvmlDeviceGetTemperature`: `temp_c`, °C, for `NVML_TEMPERATURE_GPU` (0); sensor
/// `NVML_TEMPERATURE_GPU_MAX` is NOT_SUPPORTED, an unknown one INVALID_ARGUMENT.
///
/// # Safety
/// `temp` must be NULL or valid for writing one `unsigned int`.
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetTemperature(
    device: NvmlDevice,
    sensor_type: c_uint,
    temp: *mut c_uint,
) -> NvmlReturn {
    // SAFETY: forwarded from this function's contract.
    unsafe {
        device_scalar("nvmlDeviceGetTemperature", device, temp, |c, d| {
            sensor(sensor_type)?;
            Ok(d.value(Metric::TempC, c.t).round().max(0.0) as c_uint)
        })
    }
}

/// `nvmlDeviceGetTemperatureThreshold`: SHUTDOWN (0), SLOWDOWN (1), MEM_MAX (2) and
/// GPU_MAX (3) from the device facts (a fact of 0 reads NOT_SUPPORTED); the acoustic and
/// GPS thresholds (4–7) are NOT_SUPPORTED; other values INVALID_ARGUMENT.
///
/// # Safety
/// `temp` must be NULL or valid for writing one `unsigned int`.
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetTemperatureThreshold(
    device: NvmlDevice,
    threshold_type: c_uint,
    temp: *mut c_uint,
) -> NvmlReturn {
    // SAFETY: forwarded from this function's contract.
    unsafe {
        device_scalar("nvmlDeviceGetTemperatureThreshold", device, temp, |_, d| {
            let f = &d.facts;
            let value = match threshold_type {
                TEMPERATURE_THRESHOLD_SHUTDOWN => f.temp_shutdown_c,
                TEMPERATURE_THRESHOLD_SLOWDOWN => f.temp_slowdown_c,
                TEMPERATURE_THRESHOLD_MEM_MAX => f.temp_mem_max_c,
                TEMPERATURE_THRESHOLD_GPU_MAX => f.temp_gpu_max_c,
                t if t < TEMPERATURE_THRESHOLD_COUNT => 0,
                _ => return Err(ERROR_INVALID_ARGUMENT),
            };
            if value == 0 {
                Err(ERROR_NOT_SUPPORTED)
            } else {
                Ok(value)
            }
        })
    }
}

/// The metric and max fact of an `nvmlClockType_t`: GRAPHICS 0, SM 1, MEM 2, VIDEO 3.
fn clock(d: &Device, clock_type: c_uint) -> Result<(Metric, u32), NvmlReturn> {
    let f = &d.facts;
    Ok(match clock_type {
        CLOCK_GRAPHICS => (Metric::GraphicsClockMhz, f.max_graphics_clock_mhz),
        CLOCK_SM => (Metric::SmClockMhz, f.max_sm_clock_mhz),
        CLOCK_MEM => (Metric::MemClockMhz, f.max_mem_clock_mhz),
        CLOCK_VIDEO => (Metric::VideoClockMhz, f.max_video_clock_mhz),
        _ => return Err(ERROR_INVALID_ARGUMENT),
    })
}

/// `nvmlDeviceGetClockInfo`: the current clock of a type, MHz; unknown types are
/// INVALID_ARGUMENT.
///
/// # Safety
/// `clock_mhz` must be NULL or valid for writing one `unsigned int`.
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetClockInfo(
    device: NvmlDevice,
    clock_type: c_uint,
    clock_mhz: *mut c_uint,
) -> NvmlReturn {
    // SAFETY: forwarded from this function's contract.
    unsafe {
        device_scalar("nvmlDeviceGetClockInfo", device, clock_mhz, |c, d| {
            let (metric, _) = clock(d, clock_type)?;
            Ok(d.value_u32(metric, c.t))
        })
    }
}

/// `nvmlDeviceGetMaxClockInfo`: the max clock of a type, MHz.
///
/// # Safety
/// `clock_mhz` must be NULL or valid for writing one `unsigned int`.
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetMaxClockInfo(
    device: NvmlDevice,
    clock_type: c_uint,
    clock_mhz: *mut c_uint,
) -> NvmlReturn {
    // SAFETY: forwarded from this function's contract.
    unsafe {
        device_scalar("nvmlDeviceGetMaxClockInfo", device, clock_mhz, |_, d| {
            Ok(clock(d, clock_type)?.1)
        })
    }
}

/// `nvmlDeviceGetPerformanceState`: `pstate` (0 = P0 … 15, 32 = unknown).
///
/// # Safety
/// `p_state` must be NULL or valid for writing one `nvmlPstates_t` (4 bytes).
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetPerformanceState(
    device: NvmlDevice,
    p_state: *mut c_uint,
) -> NvmlReturn {
    // SAFETY: forwarded from this function's contract.
    unsafe {
        device_scalar("nvmlDeviceGetPerformanceState", device, p_state, |c, d| {
            let p = d.value_u32(Metric::Pstate, c.t);
            Ok(if p > 15 { PSTATE_UNKNOWN } else { p })
        })
    }
}

/// `nvmlDeviceGetCurrentClocksEventReasons`: the `clock_event_reasons` bit mask.
///
/// # Safety
/// `reasons` must be NULL or valid for writing one `unsigned long long`.
#[cfg(not(feature = "old-driver"))]
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetCurrentClocksEventReasons(
    device: NvmlDevice,
    reasons: *mut u64,
) -> NvmlReturn {
    // SAFETY: forwarded from this function's contract.
    unsafe {
        device_scalar(
            "nvmlDeviceGetCurrentClocksEventReasons",
            device,
            reasons,
            |c, d| Ok(event_reasons(d, c.t)),
        )
    }
}

/// `nvmlDeviceGetCurrentClocksThrottleReasons`: the deprecated name of the same mask.
///
/// # Safety
/// `reasons` must be NULL or valid for writing one `unsigned long long`.
#[no_mangle]
pub unsafe extern "C" fn nvmlDeviceGetCurrentClocksThrottleReasons(
    device: NvmlDevice,
    reasons: *mut u64,
) -> NvmlReturn {
    // SAFETY: forwarded from this function's contract.
    unsafe {
        device_scalar(
            "nvmlDeviceGetCurrentClocksThrottleReasons",
            device,
            reasons,
            |c, d| Ok(event_reasons(d, c.t)),
        )
    }
}

fn event_reasons(d: &Device, t: f64) -> u64 {
    d.value(Metric::ClockEventReasons, t).round() as u64
}

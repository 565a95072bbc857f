//! Running compute processes, defended against drivers that use a different element size than the
//! symbol promises.
//!
//! `_v3` and `_v2` fill 24-byte `nvmlProcessInfo_t` elements and the unversioned function 16-byte
//! ones, but drivers 535.43–535.86 wrote 32-byte elements through `_v3` without a version bump, and
//! one later driver wrote 16-byte ones (docs/nvml-facts.md, "Hazards"). So the buffer is sized for
//! 32-byte elements, pre-filled with a marker pattern, and decoded with the expected size first; if
//! the entries that size yields cannot be real, 24, 32 and 16 are tried in turn.

use std::ffi::c_uint;

use serde::Serialize;

use super::device::Device;
use super::error::NvmlError;
use super::library::Nvml;
use super::sys::{self, codes};

/// One process with a CUDA context on the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ProcessInfo {
    /// Process id (in the driver's PID namespace, which may not be ours inside containers).
    pub pid: u32,
    /// GPU memory the process uses, bytes; `None` when NVML cannot tell (Windows WDDM).
    pub used_memory: Option<u64>,
}

/// Largest element size any driver is known to write.
const MAX_STRIDE: usize = 32;
/// Spare elements allocated beyond the reported count, for processes that start between
/// the answer that asked for more room and the next fill.
const SLACK: usize = 8;
/// Entries the first fill has room for (with [`SLACK`]): a GPU's compute processes rarely
/// number more, and a longer list costs one more call.
const FIRST_CAPACITY: usize = 8;
/// Fill attempts before giving up on a process list that keeps growing.
const ATTEMPTS: usize = 4;
/// Byte the buffer is pre-filled with, so bytes the driver did not write decode to values
/// no real entry has (pid 0xA5A5A5A5, memory ~1.2e19).
const MARKER: u8 = 0xA5;
/// Highest pid Linux can hand out (`PID_MAX_LIMIT` on 64-bit).
const PID_MAX: u32 = 4_194_304;
/// Memory bound used when the device's total is unknown: 4 TiB, beyond any GPU.
const MEMORY_BOUND_FALLBACK: u64 = 1 << 42;
/// Highest MIG instance id treated as real; non-MIG entries use 0xFFFFFFFF.
const MIG_ID_MAX: u32 = 1024;

const UNDETERMINED: NvmlError = NvmlError::new(
    "nvmlDeviceGetComputeRunningProcesses (element size not recognised: 24-, 32- and 16-byte decodings are all implausible)",
    codes::UNKNOWN,
);

/// The element size `symbol` is declared to fill.
fn declared_stride(symbol: &str) -> usize {
    if symbol == "nvmlDeviceGetComputeRunningProcesses" {
        16
    } else {
        24
    }
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[at..at + 4]);
    u32::from_ne_bytes(w)
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_ne_bytes(w)
}

/// Decodes `count` entries of `stride` bytes, or `None` if they cannot be real entries.
///
/// The first entry reads the same at every stride, so only its MIG ids (which, at a wrong
/// stride, are the next entry's pid or marker bytes) tell strides apart; later entries must
/// have a pid in `1..=PID_MAX`, memory at most `memory_bound` (or not-available), and MIG
/// ids that are either 0xFFFFFFFF or small.
fn decode_at(
    bytes: &[u8],
    count: usize,
    stride: usize,
    memory_bound: u64,
) -> Option<Vec<ProcessInfo>> {
    if count.checked_mul(stride)? > bytes.len() {
        return None;
    }
    let mig_ok = |id: u32| id == u32::MAX || id < MIG_ID_MAX;
    let mut out = Vec::with_capacity(count);
    for i in 0..count {
        let e = &bytes[i * stride..(i + 1) * stride];
        let pid = u32_at(e, 0);
        let mem = u64_at(e, 8);
        if stride >= 24 && !(mig_ok(u32_at(e, 16)) && mig_ok(u32_at(e, 20))) {
            return None;
        }
        if i > 0 {
            let pid_ok = pid != 0 && (pid <= PID_MAX || cfg!(not(target_os = "linux")));
            let mem_ok = mem == sys::NVML_VALUE_NOT_AVAILABLE_U64 || mem <= memory_bound;
            if !(pid_ok && mem_ok) {
                return None;
            }
        }
        let used_memory = (mem != sys::NVML_VALUE_NOT_AVAILABLE_U64).then_some(mem);
        out.push(ProcessInfo { pid, used_memory });
    }
    Some(out)
}

/// Decodes with the `declared` stride if plausible, else the first plausible of 24, 32, 16.
fn decode(
    bytes: &[u8],
    count: usize,
    declared: usize,
    memory_bound: u64,
) -> Option<Vec<ProcessInfo>> {
    std::iter::once(declared)
        .chain([24, 32, 16].into_iter().filter(|&s| s != declared))
        .find_map(|s| decode_at(bytes, count, s, memory_bound))
}

impl Nvml {
    /// Processes with a compute context on `d`: a fill with room for [`FIRST_CAPACITY`]
    /// entries, retried with the count NVML asks for while the list does not fit (nvml.h:
    /// INSUFFICIENT_SIZE sets `infoCount` to the size needed), so a short list costs one
    /// driver call instead of a size query and a fill. `_v3`, falling back to `_v2` and the
    /// unversioned function.
    ///
    /// # Errors
    ///
    /// NVML's error, or code UNKNOWN when no element size gives plausible entries.
    pub fn compute_processes(&self, d: Device) -> Result<Vec<ProcessInfo>, NvmlError> {
        let h = self.raw(d)?;
        self.syms.compute_processes.call(|symbol, f| {
            let mut needed = FIRST_CAPACITY as c_uint;
            for _ in 0..ATTEMPTS {
                let capacity = needed as usize + SLACK;
                let mut buf = vec![u64::from_ne_bytes([MARKER; 8]); capacity * MAX_STRIDE / 8];
                let mut count = c_uint::try_from(capacity).unwrap_or(c_uint::MAX);
                // SAFETY: `f` is `nvmlReturn_t (nvmlDevice_t, unsigned int*, nvmlProcessInfo*_t*)`;
                // `buf` (8-byte aligned) holds `capacity` elements of the largest size any
                // driver writes, and `count` tells NVML that capacity.
                let rc = unsafe { f(h, &mut count, buf.as_mut_ptr().cast()) };
                match rc {
                    codes::SUCCESS => {}
                    codes::INSUFFICIENT_SIZE => {
                        needed = count.max(needed.saturating_mul(2));
                        continue;
                    }
                    _ => return Err(NvmlError::new(symbol, rc)),
                }
                let n = (count as usize).min(capacity);
                let bound = if n > 1 {
                    self.memory_info(d)
                        .map(|m| m.total)
                        .unwrap_or(MEMORY_BOUND_FALLBACK)
                } else {
                    MEMORY_BOUND_FALLBACK
                };
                let bytes: Vec<u8> = buf.iter().flat_map(|w| w.to_ne_bytes()).collect();
                return decode(&bytes, n, declared_stride(symbol), bound).ok_or(UNDETERMINED);
            }
            Err(NvmlError::new(symbol, codes::INSUFFICIENT_SIZE))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;
    const TOTAL: u64 = 80 * GIB;

    /// A buffer of marker bytes with `entries` written at `stride` the way a driver would:
    /// pid, 4 padding bytes, memory, then (for 24/32) MIG ids and (for 32) CC memory.
    fn written(stride: usize, entries: &[(u32, u64)]) -> Vec<u8> {
        let mut b = vec![MARKER; 8 * MAX_STRIDE];
        for (i, &(pid, mem)) in entries.iter().enumerate() {
            let e = &mut b[i * stride..(i + 1) * stride];
            e[0..4].copy_from_slice(&pid.to_ne_bytes());
            e[4..8].copy_from_slice(&[0; 4]);
            e[8..16].copy_from_slice(&mem.to_ne_bytes());
            if stride >= 24 {
                e[16..24].copy_from_slice(&[0xFF; 8]);
            }
            if stride == 32 {
                e[24..32].copy_from_slice(&0u64.to_ne_bytes());
            }
        }
        b
    }

    fn expect(entries: &[(u32, u64)]) -> Vec<ProcessInfo> {
        entries
            .iter()
            .map(|&(pid, m)| ProcessInfo {
                pid,
                used_memory: (m != u64::MAX).then_some(m),
            })
            .collect()
    }

    const PROCS: &[(u32, u64)] = &[(4242, 10 * GIB), (4243, 512 << 20), (9001, 3 * GIB)];

    #[test]
    fn declared_stride_is_used_when_the_driver_honours_it() {
        for stride in [24, 16] {
            let b = written(stride, PROCS);
            assert_eq!(
                decode(&b, PROCS.len(), stride, TOTAL),
                Some(expect(PROCS)),
                "stride {stride}"
            );
        }
    }

    #[test]
    fn r535_thirty_two_byte_elements_are_detected_through_v3() {
        let b = written(32, PROCS);
        assert_eq!(decode(&b, PROCS.len(), 24, TOTAL), Some(expect(PROCS)));
    }

    #[test]
    fn sixteen_byte_elements_through_v3_are_detected_even_for_one_or_two_processes() {
        for n in 1..=PROCS.len() {
            let b = written(16, &PROCS[..n]);
            assert_eq!(
                decode(&b, n, 24, TOTAL),
                Some(expect(&PROCS[..n])),
                "{n} processes"
            );
        }
    }

    #[test]
    fn two_entries_at_thirty_two_bytes_are_not_read_as_twenty_four() {
        let b = written(32, &PROCS[..2]);
        assert_eq!(decode(&b, 2, 24, TOTAL), Some(expect(&PROCS[..2])));
    }

    #[test]
    fn memory_not_available_becomes_none() {
        let procs = [(100, u64::MAX), (101, u64::MAX)];
        let b = written(24, &procs);
        let got = decode(&b, 2, 24, TOTAL).expect("plausible");
        assert_eq!(
            got[1],
            ProcessInfo {
                pid: 101,
                used_memory: None
            }
        );
    }

    #[test]
    fn garbage_at_every_stride_is_an_error_not_made_up_processes() {
        let mut b = vec![MARKER; 8 * MAX_STRIDE];
        b[..4].copy_from_slice(&7u32.to_ne_bytes());
        assert_eq!(decode(&b, 3, 24, TOTAL), None);
        assert_eq!(UNDETERMINED.code, codes::UNKNOWN);
    }

    #[test]
    fn memory_above_the_device_total_is_implausible() {
        let procs = [(10, GIB), (11, 100 * GIB)];
        let b = written(24, &procs);
        assert_eq!(decode_at(&b, 2, 24, TOTAL), None);
        assert!(decode_at(&b, 2, 24, 200 * GIB).is_some());
    }

    #[test]
    fn symbols_declare_their_element_size() {
        assert_eq!(
            declared_stride("nvmlDeviceGetComputeRunningProcesses_v3"),
            24
        );
        assert_eq!(
            declared_stride("nvmlDeviceGetComputeRunningProcesses_v2"),
            24
        );
        assert_eq!(declared_stride("nvmlDeviceGetComputeRunningProcesses"), 16);
    }
}

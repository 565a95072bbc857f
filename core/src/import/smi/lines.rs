//! What a line of an `nvidia-smi -q` dump is: a GPU block's opening, a lost GPU, its
//! indentation, a timestamp, a clock-event reason's name.

use crate::metric::reasons;

/// The bus id of a `GPU 00000000:17:00.0` line at the margin.
pub(super) fn gpu_block(line: &str) -> Option<&str> {
    if indent(line) > 0 {
        return None;
    }
    let id = line.trim().strip_prefix("GPU ")?.trim();
    let hex = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_hexdigit());
    let mut parts = id.split(':');
    let ok = parts.next().is_some_and(hex)
        && parts.next().is_some_and(hex)
        && parts
            .next()
            .and_then(|p| p.split_once('.'))
            .is_some_and(|(a, b)| hex(a) && hex(b))
        && parts.next().is_none();
    ok.then_some(id)
}

/// The key of the GPU at `bus`: its place among the buses seen so far.
pub(super) fn position(buses: &mut Vec<String>, bus: &str) -> u32 {
    let p = match buses.iter().position(|b| b == bus) {
        Some(p) => p,
        None => {
            buses.push(bus.to_string());
            buses.len() - 1
        }
    };
    p as u32
}

/// The bus of a `Unable to determine the device handle for GPU 0000:02:00.0: GPU is lost…`
/// line (nvidia-smi's words for a GPU that fell off the bus), when it says the GPU is lost.
pub(super) fn lost(line: &str) -> Option<&str> {
    let rest = line
        .trim()
        .strip_prefix("Unable to determine the device handle for GPU")?
        .trim_start();
    if !rest.to_ascii_lowercase().contains("gpu is lost") {
        return None;
    }
    let end = rest.find(": ")?;
    Some(rest[..end].trim())
}

/// Leading white space, a tab counted as four spaces.
pub(super) fn indent(line: &str) -> usize {
    line.chars()
        .take_while(|c| c.is_whitespace())
        .map(|c| if c == '\t' { 4 } else { 1 })
        .sum()
}

/// `Mon Nov 30 10:00:00 2026` (the dump's `Timestamp`, local time taken as UTC) → seconds
/// since the epoch.
pub(super) fn timestamp(v: &str) -> Option<f64> {
    const MONTHS: [&str; 12] = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    let parts: Vec<&str> = v.split_whitespace().collect();
    let [_, mon, day, clock, year] = parts.as_slice() else {
        return None;
    };
    let m = MONTHS
        .iter()
        .position(|x| mon.to_ascii_lowercase().starts_with(x))? as u32
        + 1;
    let d: u32 = day.parse().ok()?;
    let date = super::super::table::parse_date(&format!("{year}-{m}-{d}"))?;
    Some(date + super::super::table::parse_clock(clock)?)
}

/// Reason bits by the names nvidia-smi prints under `Clocks Event Reasons` (and the older
/// `Clocks Throttle Reasons`): the same bits as NVML's `nvmlClocksEventReason*`
/// ([`reasons`]).
pub(super) fn reason_bit(key: &str) -> Option<u64> {
    Some(match key {
        "idle" | "gpu idle" => reasons::GPU_IDLE,
        "applications clocks setting" => reasons::APPLICATIONS_CLOCKS,
        "sw power cap" => reasons::SW_POWER_CAP,
        "hw slowdown" => reasons::HW_SLOWDOWN,
        "sync boost" => reasons::SYNC_BOOST,
        "sw thermal slowdown" => reasons::SW_THERMAL,
        "hw thermal slowdown" => reasons::HW_THERMAL,
        "hw power brake slowdown" => reasons::HW_POWER_BRAKE,
        "display clock setting" | "display clocks setting" => reasons::DISPLAY_CLOCKS,
        _ => return None,
    })
}

//! One row of a `--query-gpu` CSV log: its cells read by their columns into a sample of one
//! GPU, with the GPU's static facts beside it.

use super::*;

pub(super) struct Row {
    pub(super) index: Option<u32>,
    pub(super) identity: Option<String>,
    pub(super) time: Option<f64>,
    pub(super) row: [f32; GpuMetric::COUNT],
    pub(super) info: DeviceInfo,
    pub(super) health: Option<health::RowHealth>,
}

impl Row {
    /// What tells this row's GPU from the others' in a log without GPU columns
    /// ([`polls::features`]).
    pub(super) fn features(&self) -> Vec<f32> {
        let i = &self.info;
        // A model name as a number: equal names equal, different names apart.
        let name = i.name.as_ref().map(|n| {
            n.bytes()
                .fold(0u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)))
                % 1000
        });
        polls::features(
            &self.row,
            [
                i.memory_total_mib,
                i.power_limit_w,
                i.max_sm_clock_mhz,
                name.map(f64::from),
            ],
        )
    }
}

pub(super) fn parse_row(cells: &[&str], cols: &[Col], names: &[String]) -> Result<Row, String> {
    if cells.len() != cols.len() {
        return Err(format!(
            "expected {} comma-separated values ({}), found {}",
            cols.len(),
            names.join(", "),
            cells.len()
        ));
    }
    let mut out = Row {
        index: None,
        identity: None,
        time: None,
        row: empty_row(),
        info: DeviceInfo::default(),
        health: None,
    };
    let mut mask: Option<u64> = None;
    for ((cell, col), name) in cells.iter().zip(cols).zip(names) {
        let missing = is_missing(cell);
        let num = || {
            number(cell)
                .ok_or_else(|| format!("expected a number in column `{name}`, found `{cell}`"))
        };
        match col {
            Col::Health(h) => out
                .health
                .get_or_insert_with(Default::default)
                .cell(*h, cell, missing)
                .map_err(|e| format!("column `{name}`: {e}"))?,
            Col::Time if !missing => {
                out.time = Some(timestamp(cell).ok_or_else(|| {
                    format!("expected a timestamp (YYYY/MM/DD HH:MM:SS.fff) in column `{name}`, found `{cell}`")
                })?)
            }
            Col::Index if !missing => {
                out.index = Some(cell.parse().map_err(|_| {
                    format!("expected a GPU index in column `{name}`, found `{cell}`")
                })?)
            }
            Col::Name if !missing => out.info.name = Some(cell.to_string()),
            Col::Uuid if !missing => {
                out.info.uuid = Some(cell.to_string());
                out.identity = Some(cell.to_string());
            }
            Col::BusId if !missing => {
                out.info.pci_bus_id = Some(cell.to_string());
                out.identity.get_or_insert_with(|| cell.to_string());
            }
            Col::Metric(m) if !missing => out.row[m.index()] = num()?,
            Col::Fact(f) if !missing => fact(&mut out.info, *f, f64::from(num()?)),
            Col::ReasonBit(bit) if !missing => {
                let active = match cell.to_ascii_lowercase().as_str() {
                    "active" => true,
                    "not active" => false,
                    _ => return Err(format!("expected `Active` or `Not Active` in column `{name}`, found `{cell}`")),
                };
                let m = mask.get_or_insert(0);
                if active {
                    *m |= bit;
                }
            }
            _ => {}
        }
    }
    let ci = GpuMetric::ClockReasons.index();
    if let (Some(m), true) = (mask, out.row[ci].is_nan()) {
        out.row[ci] = m as f32;
    }
    Ok(out)
}

/// Puts the value `v` of a static fact into the device's facts.
fn fact(i: &mut DeviceInfo, f: Fact, v: f64) {
    match f {
        Fact::MemTotal => i.memory_total_mib = Some(v),
        Fact::PowerLimit => i.power_limit_w = Some(v),
        Fact::MaxSm => i.max_sm_clock_mhz = Some(v),
        Fact::MaxGraphics => i.max_graphics_clock_mhz = Some(v),
        Fact::MaxMem => i.max_mem_clock_mhz = Some(v),
        Fact::PcieMaxGen => i.pcie_max_gen = Some(v as u32),
        Fact::PcieMaxWidth => i.pcie_max_width = Some(v as u32),
        Fact::PcieDeviceMaxGen => i.pcie_device_max_gen = Some(v as u32),
    }
}

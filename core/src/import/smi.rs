//! `nvidia-smi -q` dumps: the format most bug reports carry.
//!
//! A dump is a `==============NVSMI LOG==============` banner, a few global lines
//! (`Timestamp`, `Driver Version`, `Attached GPUs`) and one block per GPU opened by
//! `GPU 00000000:17:00.0`, whose lines are `Key : Value` pairs grouped into sections by
//! indentation (`Utilization` › `Gpu : 97 %`). `-d PERFORMANCE,CLOCK,POWER,PCI` prints only
//! those sections; `-l N` prints whole dumps again and again, each with its own timestamp.
//! Each GPU block becomes one sample of that GPU (so a single dump is a one-sample snapshot
//! per GPU, and a looped dump a short log). Wording differs between drivers
//! (`Clocks Throttle Reasons` before R535, `Clocks Event Reasons` since; `Power Readings`
//! with `Power Draw` before R535, `GPU Power Readings` with `Average`/`Instantaneous Power
//! Draw` since; `Gpu` or `GPU` under `Utilization`); both are read. `docs/importing.md`
//! lists what is read and from which section.
//!
//! The health sections (`ECC Mode`, `ECC Errors`, `Retired Pages`, `Remapped Rows`) become
//! the device's health, one reading per block (`health.rs`). Parts of a dump as posts quote
//! them — without the banner, the `GPU …` line or even the indentation, with `[...]` where
//! lines were cut — are told apart in `detect.rs` and read as one GPU without a bus id.
//!
//! `nvidia-smi -q -x` (XML) is written out as the text it stands for and read the same way
//! (`xml.rs`).
//!
//! Not for: the `nvidia-smi` summary table.

use super::table::{empty_row, merge_info, Table};
use super::{bad, ImportOptions, Imported};
use crate::metric::GpuMetric;
use crate::report::{DeviceInfo, Event};
use crate::Result;

mod detect;
mod health;
mod keys;
mod lines;
mod xml;

pub(crate) use detect::is_dump;
pub use detect::BANNER;
use detect::{is_elision, is_title};
use health::HealthBlock;
use keys::apply;
use lines::{gpu_block, indent, lost, position, reason_bit, timestamp};

/// One GPU block being read.
#[derive(Debug)]
struct Block {
    key: u32,
    t: f64,
    row: [f32; GpuMetric::COUNT],
    info: DeviceInfo,
    reasons: Option<u64>,
    health: HealthBlock,
}

/// What the global lines said about the dump being read.
#[derive(Debug, Default)]
struct Dump {
    time: Option<f64>,
    count: u64,
}

/// The state of reading a dump, line by line.
#[derive(Debug, Default)]
struct Reader {
    table: Table,
    /// Bus ids in the order first seen: a GPU's key is its place here.
    buses: Vec<String>,
    dump: Dump,
    any_time: bool,
    /// The open sections: (indentation, lower-case name).
    sections: Vec<(usize, String)>,
    block: Option<Block>,
    events: Vec<Event>,
    interval: f64,
    /// Lines where a post left lines out (`[...]`), read past.
    elided: usize,
}

impl Reader {
    fn line(&mut self, line: &str) {
        if line.trim().is_empty() {
            return;
        }
        if is_elision(line) {
            self.elided += 1;
            return;
        }
        if line.contains(BANNER) {
            self.close_block();
            self.dump = Dump {
                time: None,
                count: self.dump.count + 1,
            };
        } else if let Some(bus) = gpu_block(line) {
            self.open_block(bus);
        } else if let Some(bus) = lost(line) {
            self.lost_gpu(bus, line);
        } else {
            self.key_value(line);
        }
    }

    fn close_block(&mut self) {
        finish(self.block.take(), &mut self.table, &mut self.events);
    }

    fn open_block(&mut self, bus: &str) {
        self.close_block();
        let key = position(&mut self.buses, bus);
        let t = match self.dump.time {
            Some(t) => t,
            None => self.dump.count.saturating_sub(1) as f64 * self.interval,
        };
        self.block = Some(Block {
            key,
            t,
            row: empty_row(),
            info: DeviceInfo {
                pci_bus_id: (!bus.is_empty()).then(|| bus.to_string()),
                ..Default::default()
            },
            reasons: None,
            health: HealthBlock::default(),
        });
        self.sections.clear();
    }

    /// nvidia-smi prints `line` in place of the GPU's block when the driver lost it.
    fn lost_gpu(&mut self, bus: &str, line: &str) {
        self.close_block();
        let key = position(&mut self.buses, bus);
        self.table.device(key).info.pci_bus_id = Some(bus.to_string());
        let known = self
            .events
            .iter()
            .any(|e| e.device == Some(key) && e.kind == "gpu_lost");
        if !known {
            self.events.push(Event {
                t_s: 0.0,
                device: Some(key),
                kind: "gpu_lost".into(),
                code: None,
                detail: format!(
                    "nvidia-smi could not open the GPU at {bus}: {}",
                    line.trim()
                ),
            });
        }
    }

    /// A section line (no colon) or a `Key : Value` line.
    fn key_value(&mut self, line: &str) {
        let depth = indent(line);
        if self.block.is_none() && (depth > 0 || is_title(line)) {
            // An indented line, or a section title of a GPU block at the margin, outside any
            // block: a part of one GPU's block, quoted without its `GPU …` line (and perhaps
            // without its indentation). It opens a block of its own, with no bus id.
            self.open_block("");
        }
        while self.sections.last().is_some_and(|(d, _)| *d >= depth) {
            self.sections.pop();
        }
        let Some((k, v)) = line.split_once(':') else {
            self.sections
                .push((depth, line.trim().to_ascii_lowercase()));
            return;
        };
        let (k, v) = (k.trim().to_ascii_lowercase(), v.trim());
        match &mut self.block {
            None if depth == 0 && k == "timestamp" => {
                self.dump.time = timestamp(v);
                self.any_time |= self.dump.time.is_some();
            }
            None => {}
            Some(b) => {
                let path: Vec<&str> = self.sections.iter().map(|s| s.1.as_str()).collect();
                if b.health.line(&path, &k, v) {
                    return;
                }
                let section = path.last().copied().unwrap_or("");
                if let Some(slot) = keys::slot(section, &k) {
                    apply(slot, v, b);
                }
            }
        }
    }

    /// The recording, with notes on what a dump cannot say.
    fn into_imported(mut self, opts: &ImportOptions) -> Result<Imported> {
        self.close_block();
        let mut table = self.table;
        if table.devices.is_empty() {
            return Err(bad(
                opts,
                None,
                "an nvidia-smi -q dump without a GPU block (`GPU 00000000:17:00.0` followed by its indented sections): \
                 was the dump cut before the first GPU?",
            ));
        }
        let mut notes = Vec::new();
        for (key, d) in &table.devices {
            if !d.rows.is_empty() && d.seen.iter().all(|s| !s) {
                let bus = d.info.pci_bus_id.as_deref().unwrap_or("no bus id");
                notes.push(if d.info.health.is_some() {
                    format!("GPU {key} ({bus}): only its health counters were in the dump (no utilization, clocks or power)")
                } else {
                    format!("GPU {key} ({bus}): no metric gpuwhy reads was in its block")
                });
            }
        }
        if self.elided > 0 {
            notes.push(format!(
                "{} elided line{} (`[...]` or `...`) read past: what {} stood for is missing, not zero",
                self.elided,
                if self.elided == 1 { " was" } else { "s were" },
                if self.elided == 1 { "it" } else { "they" },
            ));
        }
        if self.any_time {
            table.epoch_ms = Some(0);
        }
        let rows = table.max_rows();
        if rows == 1 {
            notes.push(
                "an nvidia-smi -q dump is one snapshot per GPU: patterns over time (dips, periods) cannot be seen; \
                 record `nvidia-smi dmon -s pucvmet -o DT` or `gpuwhy record` for those"
                    .into(),
            );
        }
        for e in &self.events {
            notes.push(format!("GPU {}: {}", e.device.unwrap_or(0), e.detail));
        }
        let interval_s = table.median_delta().unwrap_or(self.interval);
        let mut rec = table.into_recording(
            "smi",
            interval_s,
            "not in the nvidia-smi -q dump (its section was not printed, or the driver does not show it)",
        );
        for e in self.events {
            rec.push_event(e);
        }
        Ok(Imported {
            recording: rec,
            notes,
            samples: rows,
        })
    }
}

/// Reads an `nvidia-smi -q` dump (one or several, as `-l` prints them), as text or XML
/// (`-x`).
pub fn parse(text: &str, opts: &ImportOptions) -> Result<Imported> {
    let (text, note) = if xml::is_xml(text) {
        let (t, note) = xml::to_text(text).map_err(|e| {
            bad(
                opts,
                None,
                &format!("an nvidia-smi -q -x dump that is not well-formed XML ({e}): was the file cut or edited?"),
            )
        })?;
        (std::borrow::Cow::Owned(t), note)
    } else {
        (std::borrow::Cow::Borrowed(text), None)
    };
    let mut r = Reader {
        interval: opts.interval_s.unwrap_or(1.0),
        ..Reader::default()
    };
    for line in text.lines() {
        r.line(line);
    }
    let mut imported = r.into_imported(opts)?;
    imported.notes.extend(note);
    Ok(imported)
}

/// Puts a finished GPU block into the table as one sample, its health as one reading.
fn finish(block: Option<Block>, table: &mut Table, events: &mut Vec<Event>) {
    let Some(mut b) = block else { return };
    if let Some(mask) = b.reasons {
        b.row[GpuMetric::ClockReasons.index()] = mask as f32;
    }
    for (i, v) in b.row.iter().enumerate() {
        if !v.is_nan() {
            table.columns[i] = true;
        }
    }
    let health = std::mem::take(&mut b.health).finish(b.t);
    let uncorrected = health
        .as_ref()
        .and_then(|h| h.last())
        .and_then(|r| r.ecc.volatile_uncorrected)
        .filter(|n| *n > 0);
    if let Some(n) = uncorrected {
        if !events
            .iter()
            .any(|e| e.device == Some(b.key) && e.kind == "ecc")
        {
            events.push(Event {
                t_s: 0.0,
                device: Some(b.key),
                kind: "ecc".into(),
                code: Some(n),
                detail: format!(
                    "{n} uncorrectable ECC error{} since the driver loaded (volatile count in nvidia-smi -q)",
                    if n == 1 { "" } else { "s" }
                ),
            });
        }
    }
    table.push(b.key, b.t, b.row);
    let d = table.device(b.key);
    merge_info(&mut d.info, &b.info);
    if let Some(h) = health {
        match &mut d.info.health {
            // A later dump of the same GPU (`-l`): one more reading.
            Some(known) => known.readings.extend(h.readings),
            None => d.info.health = Some(h),
        }
    }
}

#[cfg(test)]
mod tests;

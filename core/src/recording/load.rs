//! Reading report files, crash journals included: a journal (`run.json.partial`) is replayed
//! into a [`Recording`] and built into a report. This is the journal-aware part of reading;
//! it lives here, above the report model, which parses reports alone
//! (`docs/architecture.md`, "Layers").

use std::path::Path;

use super::journal::replay;
use super::Recording;
use crate::report::journal::looks_like_journal;
use crate::report::{parse_json, read_capped, unpack, Report};
use crate::Result;

impl Report {
    /// Reads a report file. Gives a clear error for a missing, empty, truncated, non-JSON or
    /// non-report file, and for a report of a newer major schema.
    /// A file larger than any report can be (1 GiB, `MAX_REPORT_BYTES`) is refused before it
    /// is read. A crash journal (`.partial`) is replayed into a report with no findings.
    pub fn load(path: &Path) -> Result<Report> {
        let bytes = read_capped(path)?;
        Self::from_slice(&bytes, path)
    }

    /// Parses report bytes (gzip-compressed ones decompressed first; samples in the plain or
    /// the compact form; a crash journal replayed); `path` is only used in messages. More
    /// than 1 GiB (`MAX_REPORT_BYTES`) is refused, and so is JSON nested deeper than
    /// serde_json reads.
    pub fn from_slice(bytes: &[u8], path: &Path) -> Result<Report> {
        let bytes = unpack(bytes, path)?;
        if looks_like_journal(&bytes) {
            let rec: Recording = replay(&bytes, path)?;
            return Ok(Report::from_recording(&rec));
        }
        parse_json(&bytes, path)
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;
    use crate::metric::GpuMetric;
    use crate::report::journal::{JournalHeader, JournalLine};
    use crate::report::{Column, DeviceInfo, RunInfo};

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(bytes).expect("gzip into memory");
        enc.finish().expect("gzip into memory")
    }

    /// A journal's header and two lines of GPU rows, as a recorder killed after them leaves it.
    fn journal() -> Vec<u8> {
        let header = JournalHeader::bare(RunInfo::default(), vec![DeviceInfo::default()]);
        let mut row = vec![f32::NAN; GpuMetric::COUNT];
        row[GpuMetric::UtilGpu.index()] = 42.0;
        let line = |t: Vec<f64>| JournalLine::Gpu {
            dev: 0,
            rows: vec![Column(row.clone()); t.len()],
            t,
        };
        let mut out = serde_json::to_string(&header).expect("header");
        for l in [line(vec![0.0, 0.1]), line(vec![0.2])] {
            out.push('\n');
            out.push_str(&serde_json::to_string(&l).expect("line"));
        }
        out.push('\n');
        out.into_bytes()
    }

    #[test]
    fn a_journal_reads_as_a_partial_report_plain_compressed_or_cut() {
        let path = Path::new("run.json.partial");
        let bytes = journal();
        let r = Report::from_slice(&bytes, path).expect("a journal reads");
        assert!(!r.run.complete);
        assert_eq!(r.series[0].data.t, vec![0.0, 0.1, 0.2]);
        assert_eq!(r.series[0].data.metrics["util_gpu"].0, vec![42.0; 3]);
        for packed in [gzip(&bytes), gzip(&gzip(&bytes))] {
            let back = Report::from_slice(&packed, path).expect("a compressed journal reads");
            assert_eq!(back.to_json(), r.to_json());
        }
        // Killed in the middle of the last line: the lines before it replay.
        let cut = Report::from_slice(&bytes[..bytes.len() - 5], path).expect("a cut journal");
        assert_eq!(cut.series[0].data.t, vec![0.0, 0.1]);
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("run.json.partial");
        std::fs::write(&file, &bytes).expect("writes");
        assert_eq!(Report::load(&file).expect("loads").to_json(), r.to_json());
    }

    /// A killed run's journal keeps the health readings up to its last flush: each
    /// `health` line replaces the device's health, so the last one read is the one kept.
    #[test]
    fn a_journal_keeps_the_last_health_line_of_each_gpu() {
        use crate::report::{DeviceHealth, EccCounts, HealthReading, RemappedRows};
        let reading = |t_s: f64, corrected: u64| HealthReading {
            t_s,
            ecc: EccCounts {
                volatile_corrected: Some(corrected),
                ..Default::default()
            },
            remapped_rows: Some(RemappedRows {
                pending: Some(true),
                ..Default::default()
            }),
            ..Default::default()
        };
        let mut health = DeviceHealth {
            ecc_enabled: Some(true),
            readings: vec![reading(0.0, 3)],
            ..Default::default()
        };
        let mut bytes = journal();
        for r in [None, Some(reading(60.0, 9))] {
            health.readings.extend(r);
            let line = JournalLine::Health {
                dev: 0,
                health: health.clone(),
            };
            bytes.extend(serde_json::to_vec(&line).expect("line"));
            bytes.push(b'\n');
        }
        let r = Report::from_slice(&bytes, Path::new("run.json.partial")).expect("reads");
        let got = r.devices[0].health.as_ref().expect("health replayed");
        assert_eq!(got, &health);
        assert_eq!(got.last().and_then(|h| h.ecc.volatile_corrected), Some(9));
    }
}

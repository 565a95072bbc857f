//! Long reports in the page's reader: read through a small window, and buckets that count
//! values per band.

use gpuwhy::report::{Column, Report};
use gpuwhy_viewer::read::Source;
use gpuwhy_viewer::View;

use crate::read::{rich, unshown};

/// Bytes handed out as the page hands them to the module: counted as they are copied.
struct Counted {
    bytes: Vec<u8>,
    copied: std::cell::Cell<usize>,
}

impl Source for Counted {
    fn len(&self) -> usize {
        self.bytes.len()
    }

    fn copy(&self, at: usize, dst: &mut [u8]) {
        self.copied.set(self.copied.get() + dst.len());
        dst.copy_from_slice(&self.bytes[at..at + dst.len()]);
    }
}

#[test]
fn a_long_report_reads_through_a_small_window_copying_each_byte_once() {
    let mut r = rich();
    // Text longer than the window, and columns of every length around it.
    r.findings[0].summary = "a long summary. ".repeat(20_000);
    let s = &mut r.series[0].data;
    let n = 20_000;
    s.t = (0..n).map(|i| i as f64 * 0.1).collect();
    for (k, m) in ["util_gpu", "power", "pstate", "nvlink_rx", "nvlink_tx"]
        .iter()
        .enumerate()
    {
        let col = (0..n).map(|i| ((i * (k + 3)) % 977) as f32 / 7.0).collect();
        s.metrics.insert(m.to_string(), Column(col));
    }
    for m in ["temp", "gpm_sm_util", "clock_reasons", "mem_clock"] {
        s.metrics.insert(m.into(), Column(vec![f32::NAN; n]));
    }
    let json = r.to_json();
    let src = Counted {
        bytes: json.clone().into_bytes(),
        copied: Default::default(),
    };
    let windowed = View::load_from(&src, "r.json")
        .map_err(|e| e.message)
        .expect("opens")
        .report;
    let mut serde: Report = serde_json::from_str(&json).expect("serde reads it");
    let s = &mut serde.series[0].data;
    for m in [
        "pstate",
        "nvlink_rx",
        "nvlink_tx",
        "clock_reasons",
        "mem_clock",
    ] {
        s.metrics.remove(m);
    }
    s.coarse.as_mut().expect("coarse").metrics.remove("pstate");
    unshown(&mut serde);
    assert_eq!(windowed.to_json(), serde.to_json());
    assert_eq!(windowed.findings[0].summary.len(), 320_000);
    assert_eq!(windowed.series[0].data.metrics["power"].len(), n);
    // Every byte is copied once, a window at a time (a window kept while it grows is not
    // copied again), give or take the last window's overreach.
    assert!(
        src.copied.get() <= json.len() + 4 * 65_536,
        "copied {} of {} bytes",
        src.copied.get(),
        json.len()
    );
}

/// A long recording's buckets count values per band (`bands`, a list of lists) on every
/// percentage column, drawn or not: the page reads past them.
#[test]
fn buckets_with_band_counts_read_on_every_column() {
    use gpuwhy::metric::GpuMetric;
    use gpuwhy::recording::Recording;
    let mut rec = Recording::with_capacity(Default::default(), 26, 8);
    let dev = rec.add_device(gpuwhy::report::DeviceInfo::default());
    for i in 0..600u32 {
        let mut row = [f32::NAN; GpuMetric::COUNT];
        for m in GpuMetric::ALL {
            row[m.index()] = (i % 100) as f32;
        }
        rec.push_gpu(dev, f64::from(i) * 0.1, &row);
    }
    let report = Report::from_recording(&rec);
    let coarse = report.series[0].data.coarse.as_ref().expect("buckets");
    assert!(coarse.metrics.values().any(|c| !c.bands.is_empty()));
    for json in [report.to_json(), report.to_json_plain()] {
        let got = View::load(json.as_bytes(), "r.json")
            .map_err(|e| e.message)
            .expect("opens")
            .report;
        let c = got.series[0].data.coarse.as_ref().expect("buckets read");
        assert_eq!(c.t_start, coarse.t_start);
        assert_eq!(c.metrics["util_gpu"].max, coarse.metrics["util_gpu"].max);
    }
}

//! The `nvidia-smi dmon` importer, fed through content detection as `gpuwhy import` does,
//! then as a dmon log whatever it looks like, with and without an interval.

#![no_main]

use gpuwhy::import::{detect, import, ImportOptions, Kind};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = detect(data);
    let mut opts = ImportOptions::default();
    let _ = import(Kind::Dmon, data, &opts);
    opts.interval_s = Some(0.5);
    let _ = import(Kind::Dmon, data, &opts);
});

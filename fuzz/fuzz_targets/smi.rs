//! The `nvidia-smi -q` importer, text and XML (`-q -x`): fed through content detection as
//! `gpuwhy import` does, then as a dump whatever it looks like, with and without an interval.

#![no_main]

use gpuwhy::import::{detect, import, ImportOptions, Kind};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = detect(data);
    let mut opts = ImportOptions::default();
    let _ = import(Kind::Smi, data, &opts);
    opts.interval_s = Some(5.0);
    let _ = import(Kind::Smi, data, &opts);
});

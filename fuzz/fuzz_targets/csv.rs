//! The `nvidia-smi --query-gpu --format=csv` importer: with its header, and as a `noheader`
//! log whose field list is given (the first line of the input, split on commas).

#![no_main]

use gpuwhy::import::{import, ImportOptions, Kind};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut opts = ImportOptions::default();
    let _ = import(Kind::Csv, data, &opts);
    let text = String::from_utf8_lossy(data);
    if let Some((first, rest)) = text.split_once('\n') {
        opts.fields = Some(first.split(',').map(|f| f.trim().to_string()).collect());
        opts.interval_s = Some(1.0);
        let _ = import(Kind::Csv, rest.as_bytes(), &opts);
    }
});

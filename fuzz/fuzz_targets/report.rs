//! The report reader: any bytes given to `gpuwhy diagnose`/`view`/`compare` or dropped on the
//! viewer must give a report or an error, never a panic, a hang or an out-of-memory abort.
//! A report that reads must also write back out.

#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(report) = gpuwhy::report::Report::from_slice(data, Path::new("fuzz.json")) {
        let _ = report.to_json();
    }
});

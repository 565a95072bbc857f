//! The streaming Kineto trace reader (`.json` and `.json.gz`) and the summary built from
//! what it keeps, as `gpuwhy import trace.json` runs them.

#![no_main]

use gpuwhy::trace::{read_slice, Choices, ReadOptions, TraceSummary};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let opts = ReadOptions {
        label: "fuzz.json".into(),
        ..Default::default()
    };
    if let Ok(rank) = read_slice(data, &opts) {
        let summary = TraceSummary::from_ranks(vec![rank], Choices::default());
        let _ = summary.busy_share();
    }
});

//! The trace reader on hostile input: files past its memory limits are refused with a
//! message instead of exhausting memory, and inputs the fuzz target (`fuzz/`, target
//! `trace`) once crashed on read as errors or summaries.

use super::events::{Limits, Store};
use super::*;

fn opts() -> ReadOptions {
    ReadOptions {
        label: "hostile.json".into(),
        ..Default::default()
    }
}

fn kernel(name: &str, ts: u32) -> String {
    format!(
        r#"{{"ph":"X","cat":"kernel","name":"{name}","ts":{ts},"dur":1,"args":{{"stream":7}}}}"#
    )
}

/// Reads `trace` into a store with `limits`, as [`read_rank`] does with the default ones.
fn read_limited(trace: &str, limits: Limits) -> Result<u64> {
    let mut store = Store::default();
    store.names.limits = limits;
    parse(trace.as_bytes(), &mut store).map_err(|e| split_error(e, &opts()))
}

#[test]
fn one_value_larger_than_any_event_is_refused_not_buffered() {
    let big = "a".repeat(MAX_VALUE_BYTES + 1);
    let trace = format!(r#"{{"traceEvents":[{{"ph":"X","name":"{big}"}}]}}"#);
    let msg = read_slice(trace.as_bytes(), &opts())
        .expect_err("refused")
        .to_string();
    assert!(msg.contains("too large to read"), "{msg}");
    assert!(msg.contains("larger than 16 MiB"), "{msg}");
    // A top-level value gpuwhy does not read is skipped without being held, whatever its size.
    let trace = format!(
        r#"{{"stackFrames":"{big}","traceEvents":[{}]}}"#,
        kernel("k", 0)
    );
    let r = read_slice(trace.as_bytes(), &opts()).expect("skipped");
    assert_eq!(r.kernels.count, 1);
}

#[test]
fn too_many_kept_events_or_names_are_refused_with_what_to_do() {
    let events: Vec<String> = (0..10).map(|i| kernel(&format!("k{i}"), i)).collect();
    let trace = format!(r#"{{"traceEvents":[{}]}}"#, events.join(","));
    let roomy = Limits {
        kept: 10,
        names: 10,
        name_bytes: 100,
    };
    assert!(read_limited(&trace, roomy).is_ok());
    for (limits, says) in [
        (Limits { kept: 9, ..roomy }, "more than 9 GPU operations"),
        (
            Limits { names: 9, ..roomy },
            "more than 9 distinct event names",
        ),
        (
            Limits {
                name_bytes: 19,
                ..roomy
            },
            "distinct event names or 0 MiB",
        ),
    ] {
        let msg = read_limited(&trace, limits).expect_err(says).to_string();
        assert!(
            msg.contains("too large to read") && msg.contains(says),
            "{msg}"
        );
        assert!(msg.contains("profile fewer steps"), "{msg}");
    }
}

#[test]
fn deep_nesting_is_skipped_or_refused_never_a_stack_overflow() {
    let deep = "[".repeat(100_000) + &"]".repeat(100_000);
    // Values the reader does not look at are skipped without recursion (serde_json's
    // `IgnoredAny` and the splitter's bracket count), so depth costs nothing there.
    let ev =
        format!(r#"{{"ph":"X","cat":"kernel","name":"k","ts":0,"dur":1,"args":{{"x":{deep}}}}}"#);
    let trace = format!(r#"{{"junk":{deep},"traceEvents":[{ev}]}}"#);
    let r = read_slice(trace.as_bytes(), &opts()).expect("skipped");
    assert_eq!(r.kernels.count, 1);
    // Values it parses whole stop at serde_json's recursion limit, with a message.
    let trace = format!(r#"{{"deviceProperties":{deep},"traceEvents":[{ev}]}}"#);
    let msg = read_slice(trace.as_bytes(), &opts())
        .expect_err("deep")
        .to_string();
    assert!(msg.contains("nested more than 128 levels deep"), "{msg}");
}

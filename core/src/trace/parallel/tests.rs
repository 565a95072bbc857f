//! A trace read in parts gives what one reader of the whole gives: the summary, the error.

use std::io::Write;

use super::*;
use crate::trace::tests::path as fixture;

fn opts(label: &str) -> ReadOptions {
    ReadOptions {
        choices: Choices::default(),
        label: label.into(),
        position: 0,
    }
}

fn whole(path: &Path) -> Result<RankSummary> {
    read_rank(File::open(path).expect("file"), &opts("t"))
}

fn parts(path: &Path, n: usize) -> Result<(RankSummary, usize)> {
    read_path(path, &opts("t"), n, 0)
}

/// A trace of `steps` steps whose events carry arrays of objects in their args (`}, {"`
/// inside an event, which a guessed cut may land on) and whose `distributedInfo` comes
/// after the events, in the object or the bare-array form.
fn written(steps: usize, object: bool) -> tempfile::NamedTempFile {
    let mut f = tempfile::NamedTempFile::new().expect("temp file");
    let mut events = Vec::new();
    for s in 0..steps {
        let t = s as f64 * 1000.0;
        events.push(format!(r#"{{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#{s}", "pid": 1, "tid": 1, "ts": {t}, "dur": 1000}}"#));
        for k in 0..4 {
            let ts = t + 10.0 + k as f64 * 200.0;
            let corr = s * 4 + k;
            events.push(format!(r#"{{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": {ts}, "dur": 5, "args": {{"correlation": {corr}}}}}"#));
            events.push(format!(r#"{{"ph": "X", "cat": "kernel", "name": "kernel_{}", "pid": 0, "tid": 7, "ts": {}, "dur": 150, "args": {{"correlation": {corr}, "stream": 7, "device": 0, "shapes": [{{"a": 1}}, {{"b": [2, 3]}}]}}}}"#, (s + k) % 5, ts + 20.0));
            events.push(format!(r#"{{"ph": "X", "cat": "python_function", "name": "f{k}", "pid": 1, "tid": 1, "ts": {ts}, "dur": 1}}"#));
        }
    }
    let list = events.join(",\n  ");
    let text = if object {
        format!("{{\"schemaVersion\": 1, \"traceEvents\": [\n  {list}\n], \"distributedInfo\": {{\"rank\": 3, \"world_size\": 8}}}}\n")
    } else {
        format!("[{list}]")
    };
    f.write_all(text.as_bytes()).expect("write");
    f
}

#[test]
fn parts_give_the_whole_readers_summary() {
    for object in [true, false] {
        let f = written(400, object);
        let one = whole(f.path()).expect("reads");
        for n in [2, 3, 7, 16] {
            let (many, joined) = parts(f.path(), n).expect("reads in parts");
            assert_eq!(many, one, "{n} parts, object form {object}");
            assert!(joined >= 2, "{n} parts: only {joined} joined");
        }
        if object {
            assert_eq!(
                (one.rank, one.world_size),
                (3, Some(8)),
                "read after the events"
            );
        }
    }
}

#[test]
fn a_fixture_read_in_parts_is_the_same() {
    let p = PathBuf::from(fixture("launch_bound.json"));
    let one = whole(&p).expect("reads");
    let (many, joined) = parts(&p, 5).expect("reads in parts");
    assert_eq!(many, one);
    assert!(joined >= 2);
}

#[test]
fn gzip_inflated_on_another_thread_reads_the_same() {
    let p = PathBuf::from(fixture("small.json.gz"));
    let one = whole(&p).expect("reads");
    let (two, threads) = parts(&p, 2).expect("reads");
    assert_eq!(two, one);
    assert_eq!(threads, 2, "inflated on another thread");
    // Damaged in the middle: the same error as on one thread.
    let bytes = std::fs::read(&p).expect("read");
    let mut bad = bytes.clone();
    let mid = bad.len() / 2;
    bad[mid..mid + 8].fill(0xff);
    let mut f = tempfile::NamedTempFile::new().expect("temp file");
    f.write_all(&bad).expect("write");
    let one = whole(f.path()).expect_err("damaged");
    let two = parts(f.path(), 2).expect_err("damaged");
    assert_eq!(one.to_string(), two.to_string());
}

#[test]
fn a_cut_short_trace_gives_the_same_error_in_parts() {
    let f = written(300, true);
    let text = std::fs::read(f.path()).expect("read");
    let mut cut = tempfile::NamedTempFile::new().expect("temp file");
    cut.write_all(&text[..text.len() * 2 / 3]).expect("write");
    let one = whole(cut.path()).expect_err("cut short");
    let many = parts(cut.path(), 4).expect_err("cut short");
    assert_eq!(one.to_string(), many.to_string());
}

#[test]
fn guesses_that_are_not_event_starts_fall_back_to_reading_on() {
    // One event holding most of the bytes, its args a list of objects that look like
    // events: every guessed cut lands inside it, on one of them.
    let mut f = tempfile::NamedTempFile::new().expect("temp file");
    let inner: Vec<String> = (0..5000)
        .map(|i| format!(r#"{{"ph": "i", "k": {i}}}"#))
        .collect();
    let text = format!(
        r#"{{"traceEvents": [{{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 2, "args": {{"list": [{}]}}}}, {{"ph": "X", "cat": "kernel", "name": "k2", "pid": 0, "tid": 7, "ts": 5, "dur": 2}}]}}"#,
        inner.join(", ")
    );
    f.write_all(text.as_bytes()).expect("write");
    let one = whole(f.path()).expect("reads");
    let (many, joined) = parts(f.path(), 4).expect("reads");
    assert_eq!(many, one);
    assert_eq!(joined, 1, "no guess was an event start");
    assert_eq!(many.kernels.count, 2);
}

#[test]
fn many_rank_files_come_back_in_order() {
    let files: Vec<_> = (0..5).map(|i| written(20 + i * 10, true)).collect();
    let paths: Vec<PathBuf> = files.iter().map(|f| f.path().to_path_buf()).collect();
    let got = read_files(&paths, Choices::default()).expect("reads");
    assert_eq!(got.len(), 5);
    for (i, (r, p)) in got.iter().zip(&paths).enumerate() {
        let mut want = read_rank(
            File::open(p).expect("file"),
            &ReadOptions {
                choices: Choices::default(),
                label: p.display().to_string(),
                position: i as u32,
            },
        )
        .expect("reads");
        want.source.clone_from(&r.source);
        assert_eq!(r, &want, "file {i}");
    }
}

#[test]
fn an_event_start_is_found_after_a_comma() {
    assert_eq!(event_start(br#"1}, {"ph": "X"}"#), Some(4));
    assert_eq!(event_start(br#"1},{"ph": "X""#), None, "cut by the end");
    assert_eq!(
        event_start(br#"[{"a": 1}, {"b": 2}]}}, {"ph": "i", "name": "n"}"#),
        Some(24),
        "objects nested in args have no ph"
    );
    assert_eq!(event_start(br#""a"}}, [1]"#), None);
}

//! Files gpuwhy does not read, and damaged ones: one message naming the file and the line
//! or byte where it went wrong, never a panic.

use gpuwhy_analyze::analyze;

use crate::fixtures::{core_fixture, dmon_log};

fn refused(bytes: &[u8], name: &str) -> String {
    match analyze(bytes, name) {
        Ok(a) => panic!("{name} was read as a {}", a.kind.as_str()),
        Err(e) => {
            assert!(e.contains(name), "the message names the file: {e}");
            e
        }
    }
}

#[test]
fn a_binary_file_says_where_it_stops_being_text() {
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.extend_from_slice(&[0u8, 0, 0, 13, b'I', b'H', b'D', b'R']);
    let e = refused(&png, "cat.png");
    assert!(e.contains("byte 0 is not UTF-8 text"), "{e}");
    assert!(e.contains("nvidia-smi dmon"), "says what it reads: {e}");
}

#[test]
fn text_of_no_known_kind_names_its_first_line() {
    let e = refused(b"\n\nhello world\nthis is a note\n", "notes.txt");
    assert!(
        e.contains("line 3 is not the start of a file gpuwhy reads"),
        "{e}"
    );
    assert!(e.contains("--query-gpu"), "{e}");
}

#[test]
fn an_empty_file_is_said_to_be_empty() {
    let e = refused(b"  \n", "empty.log");
    assert!(e.contains("empty.log is empty"), "{e}");
}

#[test]
fn a_mostly_damaged_dmon_log_is_named_by_its_first_bad_line() {
    // One damaged row is read past with a note (see core's importer tests); three of five
    // mean the file is not a log gpuwhy can read, and the first of them is named.
    let mut log = dmon_log(5, 1);
    let mut lines: Vec<String> = log.lines().map(str::to_string).collect();
    for l in &mut lines[4..=6] {
        *l = "    0    abc    51      -     97".into();
    }
    log = lines.join("\n") + "\n";
    let e = refused(log.as_bytes(), "bad.log");
    assert!(e.contains("line 5"), "{e}");
}

#[test]
fn a_cut_trace_names_the_byte_offset() {
    let json = core_fixture("trace/small.json");
    let cut = &json[..json.len() / 2];
    let e = refused(cut, "cut.json");
    assert!(e.contains("byte "), "{e}");
    assert!(e.contains("cut short"), "{e}");
}

#[test]
fn gzip_that_is_not_a_trace_is_refused() {
    let e = refused(&[0x1f, 0x8b, 8, 0, 1, 2, 3, 4, 5, 6], "junk.json.gz");
    assert!(!e.is_empty());
}

#[test]
fn a_cut_report_says_where_it_ends() {
    let log = dmon_log(10, 1);
    let json = analyze(log.as_bytes(), "run.log")
        .expect("reads")
        .report
        .to_json();
    let e = refused(&json.as_bytes()[..json.len() / 3], "cut-report.json");
    assert!(e.contains("line "), "{e}");
}

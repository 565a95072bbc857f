//! Reading and writing report files: atomic writes, and clear errors for bad input.

use std::borrow::Cow;
use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use super::gz::{gunzip, gzip, GZIP_MAGIC};
use super::{Report, SCHEMA, SCHEMA_MAJOR, SCHEMA_PREFIX};
use crate::{Error, Result};

/// Writes `bytes` to `path` atomically: a temporary file in the same directory, flushed to
/// disk, then renamed over `path`. A reader sees either the old file or the new one, never
/// half of one; on error the old file (if any) is untouched and the temporary is removed.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "report".into());
    let tmp = dir.join(format!(".{name}.tmp.{}", std::process::id()));
    let io_err = |action: &'static str, p: &Path| {
        let p = p.to_path_buf();
        move |source| Error::Io {
            action,
            path: p,
            source,
        }
    };
    let result = (|| {
        let mut f = fs::File::create(&tmp).map_err(io_err("cannot create temporary file", &tmp))?;
        f.write_all(bytes).map_err(io_err("cannot write", &tmp))?;
        f.sync_all().map_err(io_err("cannot flush to disk", &tmp))?;
        drop(f);
        fs::rename(&tmp, path).map_err(io_err("cannot move the finished file to", path))?;
        // Make the rename itself durable; a failure here is not worth failing the write for.
        if let Ok(d) = fs::File::open(&dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// The largest report file read (after decompression, for a `.json.gz`). A report keeps at
/// most 36,000 full-resolution rows and 4,096 coarse buckets per GPU
/// ([`crate::recording::FULL_ROWS_DEFAULT`]), about 20 MB per GPU in the plain form written
/// one number a line (the compact form is far smaller), so a 16-GPU host writes under
/// 400 MB; a larger file is damaged or is not a report, and reading it would only risk
/// running out of memory.
pub const MAX_REPORT_BYTES: u64 = 1 << 30;

/// JSON nesting serde_json accepts (its recursion limit); a report nests under ten levels.
const MAX_DEPTH: usize = 128;

#[derive(serde::Deserialize)]
struct SchemaProbe {
    schema: Option<serde_json::Value>,
}

impl Report {
    /// Serialises the report as JSON: objects one member a line, the samples in the compact
    /// series form (docs/report-format.md, "The compact series form").
    pub fn to_json(&self) -> String {
        // Serialising plain data with string keys cannot fail, and the layout writes UTF-8.
        let bytes = super::layout::to_vec(self).expect("a report always serialises");
        String::from_utf8(bytes).expect("serde_json writes UTF-8")
    }

    /// Serialises the report as JSON with its samples in the plain form (`t` and `metrics` as
    /// arrays of numbers), as gpuwhy wrote them before the compact form: for tools that read
    /// reports themselves and do not know the compact form yet.
    pub fn to_json_plain(&self) -> String {
        super::packed::plain(|| self.to_json())
    }

    /// Writes the report to `path` atomically; gzip-compressed when the name ends in `.gz`.
    pub fn save(&self, path: &Path) -> Result<()> {
        let json = self.to_json();
        if path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("gz"))
        {
            write_atomic(path, &gzip(json.as_bytes()))
        } else {
            write_atomic(path, json.as_bytes())
        }
    }
}

/// Reads a file as `Report::load` does: refused when larger than any report can be
/// ([`MAX_REPORT_BYTES`]) before it is read, and never more than one byte past that read.
pub(crate) fn read_capped(path: &Path) -> Result<Vec<u8>> {
    let io = |source| Error::Io {
        action: "cannot read report",
        path: path.to_path_buf(),
        source,
    };
    let file = fs::File::open(path).map_err(io)?;
    if let Ok(meta) = file.metadata() {
        if meta.len() > MAX_REPORT_BYTES {
            return Err(too_large(path, meta.len()));
        }
    }
    // The size can change after the check (or mean nothing, for a pipe): read one byte
    // past the limit at most.
    let mut bytes = Vec::new();
    file.take(MAX_REPORT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    Ok(bytes)
}

/// The bytes of a report file as its reader parses them: gzip-compressed ones decompressed
/// (again, if they held another gzip stream), more than [`MAX_REPORT_BYTES`] before or
/// after decompression refused; `path` is only used in messages.
pub(crate) fn unpack<'a>(bytes: &'a [u8], path: &Path) -> Result<Cow<'a, [u8]>> {
    if bytes.len() as u64 > MAX_REPORT_BYTES {
        return Err(too_large(path, bytes.len() as u64));
    }
    if !bytes.starts_with(&GZIP_MAGIC) {
        return Ok(Cow::Borrowed(bytes));
    }
    let plain = gunzip(bytes, MAX_REPORT_BYTES + 1).map_err(|e| Error::BadReport {
        path: path.to_path_buf(),
        reason: format!(
            "the file is gzip-compressed but does not decompress ({e}): it was cut short or damaged"
        ),
    })?;
    if plain.starts_with(&GZIP_MAGIC) {
        // Compressed twice: what it holds comes back owned, so this copies nothing.
        return Ok(Cow::Owned(unpack(&plain, path)?.into_owned()));
    }
    if plain.len() as u64 > MAX_REPORT_BYTES {
        return Err(too_large(path, plain.len() as u64));
    }
    Ok(Cow::Owned(plain))
}

/// Parses the JSON of a report (samples in the plain or the compact form), after
/// [`unpack`]. An empty file, JSON nested deeper than serde_json reads, a file that is not
/// a report and one of a newer major schema are refused, each with a message that says why.
/// A crash journal is not read here: `Report::from_slice` (in `crate::recording`, which
/// replays journals) tells it apart first.
pub(crate) fn parse_json(bytes: &[u8], path: &Path) -> Result<Report> {
    let bad = |reason: String| Error::BadReport {
        path: path.to_path_buf(),
        reason,
    };
    if bytes.iter().all(|b| b.is_ascii_whitespace()) {
        return Err(bad(
            "the file is empty; was the recording interrupted before it wrote anything? \
             Look for a `.partial` journal next to it"
                .into(),
        ));
    }
    // One pass over the bytes for a readable report (most of the time of reading a long
    // one); the schema is checked on what it read. Only a report that does not read is
    // looked at again, for the message that says why.
    match serde_json::from_slice::<Report>(bytes) {
        Ok(r) => {
            check_schema(Some(serde_json::Value::String(r.schema.clone())), path)?;
            Ok(r)
        }
        Err(e) => {
            let probe: SchemaProbe =
                serde_json::from_slice(bytes).map_err(|e| bad(json_error_reason(&e, bytes)))?;
            check_schema(probe.schema, path)?;
            Err(bad(too_deep(&e).unwrap_or_else(|| {
                format!("not a valid {SCHEMA} report: {e}")
            })))
        }
    }
}

/// Refuses a `schema` that is missing, not gpuwhy's, unreadable or of a newer major version.
pub(crate) fn check_schema(schema: Option<serde_json::Value>, path: &Path) -> Result<()> {
    let bad = |reason: String| Error::BadReport {
        path: path.to_path_buf(),
        reason,
    };
    let schema = match schema {
        Some(serde_json::Value::String(s)) => s,
        Some(_) | None => {
            return Err(bad(
                "this JSON is not a gpuwhy report (no \"schema\": \"gpuwhy.report/…\" field); \
                 `gpuwhy diagnose` reads reports written by `gpuwhy record` or `gpuwhy demo`"
                    .into(),
            ))
        }
    };
    let Some(version) = schema.strip_prefix(SCHEMA_PREFIX) else {
        return Err(bad(format!(
            "this JSON has schema \"{schema}\", not a gpuwhy report ({SCHEMA})"
        )));
    };
    let major: u32 = version
        .split('.')
        .next()
        .and_then(|m| m.parse().ok())
        .ok_or_else(|| bad(format!("unreadable schema version \"{schema}\"")))?;
    if major > SCHEMA_MAJOR {
        return Err(Error::NewerSchema {
            path: path.to_path_buf(),
            found: schema,
            supported: SCHEMA,
        });
    }
    Ok(())
}

/// True when the error's position is the last non-blank byte of the input: a document cut
/// in the middle of a token (`nu`, `0.`) is reported by serde_json as a syntax error there.
fn at_end(e: &serde_json::Error, bytes: &[u8]) -> bool {
    let end = bytes
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(0, |i| i + 1);
    let mut line = 1;
    let mut line_start = 0;
    for (i, b) in bytes[..end].iter().enumerate() {
        if *b == b'\n' {
            line += 1;
            line_start = i + 1;
        }
    }
    e.line() == line && e.column() + 1 >= end - line_start
}

fn too_large(path: &Path, len: u64) -> Error {
    Error::BadReport {
        path: path.to_path_buf(),
        reason: format!(
            "the file is {} MiB, larger than any gpuwhy report ({} MiB at most; a report \
             holds at most 36,000 samples per GPU, a few hundred MB for a whole host): it is \
             damaged or not a report; check that this is the file `gpuwhy record` wrote",
            len.div_ceil(1 << 20),
            MAX_REPORT_BYTES >> 20
        ),
    }
}

/// serde_json stops at its recursion limit rather than overflowing the stack; says so.
fn too_deep(e: &serde_json::Error) -> Option<String> {
    e.to_string()
        .starts_with("recursion limit exceeded")
        .then(|| {
            format!(
                "the JSON is nested more than {MAX_DEPTH} levels deep (line {}, column {}), where a \
                 gpuwhy report nests under ten: it is damaged or not a report",
                e.line(),
                e.column()
            )
        })
}

fn json_error_reason(e: &serde_json::Error, bytes: &[u8]) -> String {
    use serde_json::error::Category;
    let len = bytes.len();
    if let Some(reason) = too_deep(e) {
        return reason;
    }
    match e.classify() {
        Category::Eof => format!(
            "the file ends in the middle of the JSON document (line {}, column {}, {len} bytes): it was cut short. \
             If a recording was interrupted, diagnose its `.partial` journal instead",
            e.line(),
            e.column()
        ),
        Category::Syntax if at_end(e, bytes) => format!(
            "the file ends in the middle of a value (line {}, column {}, {len} bytes): it was cut short. \
             If a recording was interrupted, diagnose its `.partial` journal instead",
            e.line(),
            e.column()
        ),
        Category::Syntax => format!("not JSON (syntax error at line {}, column {}): is this a gpuwhy report?", e.line(), e.column()),
        Category::Data => format!("unexpected JSON shape: {e}"),
        Category::Io => format!("read error: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::super::gz::gunzip_head;
    use super::*;

    #[test]
    fn a_document_cut_anywhere_reads_as_cut_short() {
        let doc = br#"{"schema": "gpuwhy.report/1", "series": [{"t": [0.0, 0.125], "metrics": {"util_gpu": [null, 97.5]}}], "run": {"label": "x"}}"#;
        for cut in 1..doc.len() - 1 {
            let msg = Report::from_slice(&doc[..cut], Path::new("r.json"))
                .expect_err("cut")
                .to_string();
            assert!(msg.contains("cut short"), "cut at {cut}: {msg}");
        }
        let garbage = Report::from_slice(b"{\"schema\": x, \"more\": 1}", Path::new("g.json"))
            .expect_err("bad")
            .to_string();
        assert!(garbage.contains("not JSON"), "{garbage}");
    }

    #[test]
    fn a_gzip_report_reads_like_the_plain_file_and_a_cut_one_says_so() {
        let doc = br#"{"schema": "gpuwhy.report/1", "series": [{"device": 0, "times": {"div": 10, "runs": [0, [1, 2]]}, "columns": {"util_gpu": {"div": 1, "runs": [97, null, -2]}}}]}"#;
        let r = Report::from_slice(doc, Path::new("r.json")).expect("compact form");
        assert_eq!(r.series[0].data.t, vec![0.0, 0.1, 0.2]);
        let dir = tempfile::tempdir().expect("tempdir");
        let gz = dir.path().join("r.json.gz");
        r.save(&gz).expect("saves");
        let bytes = fs::read(&gz).expect("reads");
        assert!(bytes.starts_with(&GZIP_MAGIC), "written compressed");
        // (NaN is not equal to itself: the reports are compared as text.)
        assert_eq!(Report::load(&gz).expect("loads").to_json(), r.to_json());
        assert!(gunzip_head(&bytes[..bytes.len() / 2], 20).starts_with(b"{"));
        let msg = Report::from_slice(&bytes[..bytes.len() - 9], &gz)
            .expect_err("cut")
            .to_string();
        assert!(
            msg.contains("gzip-compressed") && msg.contains("cut short"),
            "{msg}"
        );
        let plain = r.to_json_plain();
        assert!(plain.contains("\"t\": [0.0,0.1,0.2]"), "{plain}");
        let back = Report::from_slice(plain.as_bytes(), &gz).expect("plain");
        assert_eq!(back.to_json(), r.to_json());
    }

    #[test]
    fn a_file_larger_than_any_report_is_refused_before_it_is_read() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("huge.json");
        // Sparse: no disk space is used, and nothing is read.
        let f = fs::File::create(&path).expect("create");
        f.set_len(MAX_REPORT_BYTES + 1).expect("set_len");
        let msg = Report::load(&path).expect_err("too large").to_string();
        assert!(msg.contains("larger than any gpuwhy report"), "{msg}");
        assert!(
            msg.contains("1025 MiB") && msg.contains("1024 MiB at most"),
            "{msg}"
        );
    }

    #[test]
    fn json_nested_deeper_than_the_parser_reads_is_refused_with_a_message() {
        let deep = "[".repeat(100_000) + &"]".repeat(100_000);
        // A value buffered whole (the unknown fields next to a flattened struct) stops at
        // serde_json's recursion limit, with a message.
        let doc = format!("{{\"schema\": \"gpuwhy.report/1\", \"series\": [{{\"x\": {deep}}}]}}");
        let msg = Report::from_slice(doc.as_bytes(), Path::new("deep.json"))
            .expect_err("deep")
            .to_string();
        assert!(msg.contains("nested more than 128 levels deep"), "{msg}");
        // Ignored fields are skipped without recursion: whatever the answer, no stack overflow.
        let doc = format!("{{\"schema\": \"gpuwhy.report/1\", \"junk\": {deep}}}");
        let _ = Report::from_slice(doc.as_bytes(), Path::new("deep.json"));
    }
}

//! Gzip-compressed reports (`run.json.gz`): written when the name ends in `.gz`, recognised
//! by their first two bytes whatever the name.

use std::io::{Read, Write};

/// The first bytes of a gzip stream (RFC 1952).
pub(super) const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// `bytes` gzip-compressed (a report written as `.json.gz`).
pub(super) fn gzip(bytes: &[u8]) -> Vec<u8> {
    use flate2::write::GzEncoder;
    let mut enc = GzEncoder::new(Vec::new(), flate2::Compression::default());
    // Writing into memory cannot fail.
    enc.write_all(bytes).expect("gzip into memory");
    enc.finish().expect("gzip into memory")
}

/// Decompresses gzip `bytes`, at most `limit` bytes of them.
pub(super) fn gunzip(bytes: &[u8], limit: u64) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(bytes)
        .take(limit)
        .read_to_end(&mut out)?;
    Ok(out)
}

/// The first `limit` decompressed bytes of `head`, the start of a gzip file (what
/// decompresses before the data runs out), or `head` itself when it is not gzip: to tell
/// what a `.json.gz` file holds from its first bytes.
pub fn gunzip_head(head: &[u8], limit: usize) -> std::borrow::Cow<'_, [u8]> {
    if !head.starts_with(&GZIP_MAGIC) {
        return std::borrow::Cow::Borrowed(head);
    }
    let mut out = Vec::new();
    // A cut stream ends in an error after what it could decompress, which `read_to_end`
    // has appended by then: keep that much.
    let _ = flate2::read::MultiGzDecoder::new(head)
        .take(limit as u64)
        .read_to_end(&mut out);
    std::borrow::Cow::Owned(out)
}

//! A gzip trace on two cores: one thread decompresses, the reader parses what it has
//! decompressed so far. A gzip stream cannot be entered in the middle, so this is the most
//! a compressed trace can be split; inflating is about a third of the work.
//!
//! Memory: at most [`CHUNKS_IN_FLIGHT`] chunks of [`CHUNK_BYTES`] wait between the two.

use std::fs::File;
use std::io::{BufReader, Read};
use std::sync::mpsc::{sync_channel, Receiver};

use crate::trace::events::Store;
use crate::trace::{finish, parse, split_error, RankSummary, ReadOptions};
use crate::Result;

/// Bytes of decompressed JSON handed over at a time.
const CHUNK_BYTES: usize = 1 << 20;
/// Chunks decompressed ahead of the parser, at most (4 MiB).
const CHUNKS_IN_FLIGHT: usize = 4;

/// Reads the gzip trace `file` (positioned at its start), decompressing on another thread:
/// what [`read_rank`](crate::trace::read_rank) does with a gzip file, byte for byte and
/// error for error.
pub(super) fn read(file: File, opts: &ReadOptions) -> Result<RankSummary> {
    let (tx, rx) = sync_channel::<std::io::Result<Vec<u8>>>(CHUNKS_IN_FLIGHT);
    std::thread::scope(|s| {
        s.spawn(move || {
            let raw = BufReader::with_capacity(1 << 16, file);
            let mut dec = flate2::read::MultiGzDecoder::new(raw);
            loop {
                let mut chunk = vec![0u8; CHUNK_BYTES];
                let (n, err) = fill(&mut dec, &mut chunk);
                chunk.truncate(n);
                let end = n < CHUNK_BYTES;
                // The bytes before an error first, as a reader of the decoder gets them. A
                // send fails once the reader has stopped (an error in the JSON): so do we.
                if (n > 0 || err.is_none()) && tx.send(Ok(chunk)).is_err() {
                    return;
                }
                if let Some(e) = err {
                    let _ = tx.send(Err(e));
                    return;
                }
                if end {
                    return;
                }
            }
        });
        let pipe = Pipe {
            rx,
            buf: Vec::new(),
            pos: 0,
        };
        let mut store = Store::default();
        let consumed = parse(BufReader::with_capacity(1 << 16, pipe), &mut store)
            .map_err(|e| split_error(e, opts))?;
        finish(store, consumed, opts)
    })
}

/// Fills `buf` from `r` as far as it goes: the bytes read, and the error that stopped it.
fn fill(r: &mut impl Read, buf: &mut [u8]) -> (usize, Option<std::io::Error>) {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return (n, Some(e)),
        }
    }
    (n, None)
}

/// The decompressed bytes, as the other thread hands them over.
struct Pipe {
    rx: Receiver<std::io::Result<Vec<u8>>>,
    buf: Vec<u8>,
    pos: usize,
}

impl Read for Pipe {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        while self.pos == self.buf.len() {
            match self.rx.recv() {
                Ok(Ok(chunk)) if chunk.is_empty() => return Ok(0),
                Ok(Ok(chunk)) => (self.buf, self.pos) = (chunk, 0),
                Ok(Err(e)) => return Err(e),
                // The decompressor has finished and everything it sent was read.
                Err(_) => return Ok(0),
            }
        }
        let n = out.len().min(self.buf.len() - self.pos);
        out[..n].copy_from_slice(&self.buf[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

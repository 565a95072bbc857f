//! Where a report's bytes are: all in this module's memory (natively, in tests), or in the
//! page's memory (in the browser), from which the walk copies only the parts it reads.
//!
//! A day of eight GPUs is 51 MB of JSON, three quarters of it columns no chart draws.
//! Copying all of it into fresh WebAssembly memory cost the page about as much as reading
//! the columns it draws (the memory is new: every page of it is touched for the first
//! time); now it is copied a window at a time into memory used over and over.

/// Report bytes the walk can copy from and search.
pub trait Source {
    /// Number of bytes.
    fn len(&self) -> usize;

    /// True when there are none.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Copies the bytes from `at` into all of `dst` (`at + dst.len() <= len()`).
    fn copy(&self, at: usize, dst: &mut [u8]);

    /// All the bytes (to say what is wrong with a file that is not a report).
    fn to_vec(&self) -> Vec<u8> {
        let mut v = vec![0; self.len()];
        self.copy(0, &mut v);
        v
    }
}

/// Bytes already in this module's memory.
pub struct InMemory<'a>(pub &'a [u8]);

impl Source for InMemory<'_> {
    fn len(&self) -> usize {
        self.0.len()
    }

    fn copy(&self, at: usize, dst: &mut [u8]) {
        dst.copy_from_slice(&self.0[at..at + dst.len()]);
    }
}

/// The first `c` in `b` from `from` on, eight bytes at a time.
pub fn find(b: &[u8], from: usize, c: u8) -> Option<usize> {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let pattern = LO * c as u64;
    let mut i = from.min(b.len());
    for w in b[i..].chunks_exact(8) {
        let x = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]) ^ pattern;
        // A zero byte in `x` (the classic test) is a `c` in this word.
        if x.wrapping_sub(LO) & !x & HI != 0 {
            break;
        }
        i += 8;
    }
    b[i..].iter().position(|&x| x == c).map(|p| i + p)
}

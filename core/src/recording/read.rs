//! What a stream holds at full resolution, read without decoding more than needed: the rows
//! past an instant (a provisional pass's) and how small the frozen blocks are.

use super::retired::Piece;
use super::series::SeriesBuf;

/// What a stream holds at full resolution now ([`SeriesBuf::kept`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Kept {
    /// Rows of the first minutes.
    pub head_rows: usize,
    /// Rows of the recent ring (at most [`super::Retention::recent_rows`]).
    pub recent_rows: usize,
    /// Rows in windows older than the ring.
    pub window_rows: usize,
    /// Of all these, the rows in frozen blocks...
    pub frozen_rows: usize,
    /// ...and the bytes those blocks take.
    pub frozen_bytes: usize,
}

impl SeriesBuf {
    /// What the stream holds at full resolution now, and how small its frozen blocks are.
    pub fn kept(&self) -> Kept {
        let (ring_rows, ring_bytes) = self.ring.frozen();
        let (window_rows, win_frozen_rows, win_bytes) = self.retired.window_rows();
        Kept {
            head_rows: self.head.len(),
            recent_rows: self.ring.len(),
            window_rows,
            frozen_rows: self.head.frozen_rows() + ring_rows + win_frozen_rows,
            frozen_bytes: self.head.frozen_bytes() + ring_bytes + win_bytes,
        }
    }

    /// The rows of [`Self::times`] taken after `after` seconds (all for `None`): their times
    /// and each column's values. Decodes only the blocks that hold such rows, so that a pass
    /// over the last minutes costs what those minutes hold.
    pub fn rows_after(&self, after: Option<f64>) -> (Vec<f64>, Vec<Vec<f32>>) {
        let a = after.unwrap_or(f64::NEG_INFINITY);
        let windows = self.retired.pieces.iter().flat_map(|p| match p {
            Piece::Window { rows, .. } => Some(rows.chunks()),
            Piece::Bucket(_) => None,
        });
        let chunks = self
            .head
            .chunks()
            .chain(windows.flatten())
            .chain(self.ring.chunks())
            .filter(|(c, from)| *from < c.len() && c.last_time() > a);
        let (mut t, mut cols) = (Vec::new(), vec![Vec::new(); self.columns]);
        let mut scratch = Vec::new();
        for (c, from) in chunks {
            scratch.clear();
            c.times_into(from, &mut scratch);
            let skip = scratch.partition_point(|x| *x <= a);
            t.extend_from_slice(&scratch[skip..]);
            for (i, col) in cols.iter_mut().enumerate() {
                c.column_into(i, from + skip, &self.divs, col);
            }
        }
        (t, cols)
    }
}

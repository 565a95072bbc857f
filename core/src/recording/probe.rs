//! One block of rows frozen and decoded as a stream does it, for `cargo xtask bench week` to
//! time apart from the rest of a push (`core/examples/week_bench.rs`).

use super::block::{Block, CHUNK};
use super::frozen::Frozen;

/// A block of up to 1,024 rows, ready to be frozen and decoded again and again.
#[derive(Debug, Clone)]
pub struct BlockProbe {
    block: Block,
    frozen: Frozen,
    columns: usize,
    divs: Vec<u32>,
}

impl BlockProbe {
    /// The first 1,024 of `rows` (with their times `t`) in the dense form, each of `columns`
    /// columns narrow where `divs` allows ([`super::narrow_gpu_divs`]).
    pub fn new(columns: usize, divs: &[u32], t: &[f64], rows: &[Vec<f32>]) -> BlockProbe {
        let divs: Vec<u32> = (0..columns)
            .map(|i| divs.get(i).copied().unwrap_or(0))
            .collect();
        let mut block = Block::new(columns, &divs, CHUNK);
        for (t, r) in t.iter().zip(rows).take(CHUNK) {
            block.push(*t, r, &divs);
        }
        BlockProbe {
            frozen: Frozen::encode(&block, columns, &divs),
            block,
            columns,
            divs,
        }
    }

    /// Rows in the block.
    pub fn rows(&self) -> usize {
        self.block.len()
    }

    /// Freezes the block as a full block is frozen; the frozen block's heap bytes.
    pub fn freeze(&self) -> usize {
        Frozen::encode(&self.block, self.columns, &self.divs).heap_bytes()
    }

    /// Decodes the frozen block's times and every column as the report writers read them;
    /// the values decoded.
    pub fn decode(&self) -> usize {
        let (mut t, mut col) = (Vec::new(), Vec::new());
        self.frozen.times_into(0, &mut t);
        for c in 0..self.columns {
            self.frozen.column_into(c, 0, &mut col);
        }
        t.len() + col.len()
    }
}

//! Sorting in the page's module, which has a size goal: each instance of the standard
//! library's sorts is kilobytes of its WebAssembly, so the module keeps one (plotters'
//! sort of `i32`) and sorts through it, or by insertion where the list is short.

/// Sorts in the order of `f32::total_cmp`, by sorting `i32` keys with that order: the
/// module already holds the standard library's sort of `i32` (plotters sorts its grid
/// breaks with it), and a sort of `f32` by a comparator would be kilobytes more of it.
pub fn total(v: &mut [f32]) {
    // As `f32::total_cmp` orders: the bits as a signed integer, the magnitude bits of
    // negative values flipped. The map is its own inverse.
    fn key(bits: i32) -> i32 {
        bits ^ (((bits >> 31) as u32) >> 1) as i32
    }
    let mut keys: Vec<i32> = Vec::with_capacity(v.len());
    for x in v.iter() {
        keys.push(key(x.to_bits() as i32));
    }
    keys.sort_unstable();
    for (x, k) in v.iter_mut().zip(keys) {
        *x = f32::from_bits(key(k) as u32);
    }
}

/// Sorts `v` by `key`, keeping the order of equal keys: an insertion sort, for the short
/// lists of a report that are nearly always in order already (GPUs by device index, host
/// cores by number).
pub fn short_by_key<T, K: PartialOrd>(v: &mut [T], key: impl Fn(&T) -> K) {
    for i in 1..v.len() {
        let mut j = i;
        while j > 0 && key(&v[j - 1]) > key(&v[j]) {
            v.swap(j - 1, j);
            j -= 1;
        }
    }
}

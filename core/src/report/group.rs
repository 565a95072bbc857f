//! Collapsing identical per-GPU lines: "GPUs 0–7: …" once instead of the same line eight
//! times. Pure functions over plain values, so the command line and the viewer group alike.
//!
//! Not for: deciding what is identical (the caller builds the value compared, e.g. the
//! rendered line without its GPU number).

/// Groups `(device, value)` items whose values are equal, in order of first appearance;
/// each group lists its devices in the order met. Items without a device are never merged:
/// each is a group of its own with no devices.
pub fn group_by_device<T: PartialEq>(
    items: impl IntoIterator<Item = (Option<u32>, T)>,
) -> Vec<(Vec<u32>, T)> {
    let mut out: Vec<(Vec<u32>, T)> = Vec::new();
    for (device, value) in items {
        let same = device.and_then(|_| {
            out.iter()
                .position(|(devs, v)| !devs.is_empty() && *v == value)
        });
        match (device, same) {
            (Some(d), Some(k)) => out[k].0.push(d),
            (d, _) => out.push((d.into_iter().collect(), value)),
        }
    }
    out
}

/// A set of GPUs for people: `GPU 3`, `GPUs 0–7`, `GPUs 0–2, 5, 7` (sorted, runs of three or
/// more consecutive indices as ranges); empty for no GPUs.
pub fn device_set(devices: &[u32]) -> String {
    let d = sorted_unique(devices);
    match d.len() {
        0 => String::new(),
        1 => format!("GPU {}", d[0]),
        _ => format!("GPUs {}", device_ranges(&d)),
    }
}

/// The indices of [`device_set`] without the word: `3`, `0–7`, `0–2, 5, 7` (for a column
/// already headed "GPU").
pub fn device_ranges(devices: &[u32]) -> String {
    let d = sorted_unique(devices);
    let mut parts = Vec::new();
    let mut i = 0;
    while i < d.len() {
        let mut j = i;
        while j + 1 < d.len() && d[j + 1] == d[j] + 1 {
            j += 1;
        }
        match j - i {
            0 => parts.push(d[i].to_string()),
            1 => parts.extend([d[i].to_string(), d[j].to_string()]),
            _ => parts.push(format!("{}–{}", d[i], d[j])),
        }
        i = j + 1;
    }
    parts.join(", ")
}

/// The indices sorted, each once. By insertion: a GPU list is short and nearly always in
/// order already, and a library sort of `u32` would be kilobytes of the viewer's
/// WebAssembly module, which has a size goal (docs/viewer.md).
fn sorted_unique(devices: &[u32]) -> Vec<u32> {
    let mut d: Vec<u32> = Vec::with_capacity(devices.len());
    for &x in devices {
        let at = d.iter().rposition(|y| *y <= x).map_or(0, |p| p + 1);
        if at == 0 || d[at - 1] != x {
            d.insert(at, x);
        }
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_lines_collapse_in_order_and_deviceless_ones_stay_apart() {
        let g = group_by_device([
            (Some(0), "a"),
            (Some(1), "b"),
            (None, "a"),
            (Some(2), "a"),
            (None, "a"),
        ]);
        assert_eq!(
            g,
            vec![
                (vec![0, 2], "a"),
                (vec![1], "b"),
                (vec![], "a"),
                (vec![], "a")
            ]
        );
    }

    #[test]
    fn device_sets_read_as_ranges() {
        assert_eq!(device_set(&[3]), "GPU 3");
        assert_eq!(device_set(&[7, 6, 5, 4, 3, 2, 1, 0]), "GPUs 0–7");
        assert_eq!(device_set(&[0, 1, 2, 5, 7]), "GPUs 0–2, 5, 7");
        assert_eq!(device_set(&[1, 2]), "GPUs 1, 2");
        assert_eq!(device_set(&[]), "");
        assert_eq!(device_ranges(&[7, 0, 1, 2]), "0–2, 7");
        assert_eq!(device_ranges(&[4, 4]), "4");
    }
}

//! Reading GPU lists: `--gpus` (NVML indices or UUIDs) and `CUDA_VISIBLE_DEVICES` (CUDA
//! ordinals or UUIDs), and CUDA's device order (`docs/job-gpus.md`).

use super::Gpu;

/// One GPU named by the user or by `CUDA_VISIBLE_DEVICES`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selector {
    /// An index: NVML's for `--gpus`, CUDA's ordinal in `CUDA_VISIBLE_DEVICES`.
    Index(u32),
    /// A `GPU-…` UUID or a unique prefix of one.
    Uuid(String),
    /// A `MIG-…` UUID: a MIG instance, not a whole GPU.
    Mig(String),
}

impl std::fmt::Display for Selector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Selector::Index(i) => write!(f, "{i}"),
            Selector::Uuid(u) | Selector::Mig(u) => f.write_str(u),
        }
    }
}

fn entry(text: &str) -> Option<Selector> {
    let t = text.trim();
    if t.len() > 4 && t[..4].eq_ignore_ascii_case("GPU-") {
        return Some(Selector::Uuid(t.to_string()));
    }
    if t.len() > 4 && t[..4].eq_ignore_ascii_case("MIG-") {
        return Some(Selector::Mig(t.to_string()));
    }
    t.parse::<u32>().ok().map(Selector::Index)
}

/// Parses `--gpus`: comma-separated NVML indices (as `nvidia-smi` numbers GPUs), `GPU-`
/// UUIDs or `MIG-` UUIDs. Every entry must be valid.
///
/// # Errors
///
/// The first entry that is neither, with what is accepted.
pub fn parse_gpus(text: &str) -> Result<Vec<Selector>, String> {
    let mut out = Vec::new();
    for part in text.split(',').filter(|p| !p.trim().is_empty()) {
        match entry(part) {
            Some(s) if !out.contains(&s) => out.push(s),
            Some(_) => {}
            None => {
                return Err(format!(
                    "`{}` in the GPU list `{text}` is neither an NVML index (0, 1, …) nor a GPU UUID (GPU-…) nor a MIG device UUID (MIG-…)",
                    part.trim()
                ))
            }
        }
    }
    if out.is_empty() {
        return Err(format!("the GPU list `{text}` names no GPU"));
    }
    Ok(out)
}

/// Parses `CUDA_VISIBLE_DEVICES` as the CUDA runtime does: entries up to the first one that
/// is not an ordinal or a UUID; that entry and all after it are ignored
/// (`docs/job-gpus.md`, from the CUDA Programming Guide).
pub fn parse_cuda_visible_devices(text: &str) -> Vec<Selector> {
    let mut out = Vec::new();
    for part in text.split(',') {
        match entry(part) {
            Some(s) => {
                if !out.contains(&s) {
                    out.push(s);
                }
            }
            None => break,
        }
    }
    out
}

/// NVML indices in CUDA's enumeration order, or why that order cannot be known.
///
/// NVML numbers GPUs by PCI bus id. CUDA does so with `CUDA_DEVICE_ORDER=PCI_BUS_ID`; its
/// default, `FASTEST_FIRST`, puts the fastest GPU first by a heuristic it does not publish.
/// On a node of one model every GPU is as fast as the others, and the order is taken to be the
/// PCI one; on a node of several models it cannot be known (`docs/job-gpus.md`).
pub fn cuda_order(gpus: &[Gpu], device_order: Option<&str>) -> Result<Vec<u32>, String> {
    // Ordinals number GPUs; MIG devices are named by their UUIDs (docs/job-gpus.md).
    let gpus: Vec<Gpu> = gpus
        .iter()
        .filter(|g| g.parent.is_none())
        .cloned()
        .collect();
    let gpus = gpus.as_slice();
    let mut by_pci: Vec<&Gpu> = gpus.iter().collect();
    by_pci.sort_by(|a, b| {
        let key = |g: &Gpu| g.pci_bus_id.as_ref().map(|p| p.to_ascii_lowercase());
        key(a).cmp(&key(b)).then(a.index.cmp(&b.index))
    });
    let pci: Vec<u32> = by_pci.iter().map(|g| g.index).collect();
    if device_order.is_some_and(|o| o.trim() == "PCI_BUS_ID") {
        return Ok(pci);
    }
    let first = gpus.first().and_then(|g| g.name.as_deref());
    if first.is_some() && gpus.iter().all(|g| g.name.as_deref() == first) {
        return Ok(pci);
    }
    Err("CUDA_DEVICE_ORDER is not PCI_BUS_ID and the GPUs are of different models, so CUDA's fastest-first numbering is not known".into())
}

/// The GPUs `s` names: by NVML index when `order` is `None`, by CUDA ordinal through
/// `order` otherwise; `GPU-` and `MIG-` UUIDs by case-insensitive prefix (a `MIG-` UUID
/// names a MIG device, recorded as a device of its own).
pub fn resolve(s: &Selector, gpus: &[Gpu], order: Option<&[u32]>) -> Vec<u32> {
    match s {
        Selector::Index(i) => match order {
            Some(o) => o.get(*i as usize).copied().into_iter().collect(),
            None => gpus
                .iter()
                .filter(|g| g.index == *i)
                .map(|g| g.index)
                .collect(),
        },
        Selector::Uuid(u) | Selector::Mig(u) => {
            let u = u.to_ascii_lowercase();
            gpus.iter()
                .filter(|g| {
                    g.uuid
                        .as_ref()
                        .is_some_and(|id| id.to_ascii_lowercase().starts_with(&u))
                })
                .map(|g| g.index)
                .collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gpu(index: u32, name: &str, bus: &str) -> Gpu {
        Gpu {
            index,
            uuid: Some(format!("GPU-{index}aaa-{name}")),
            pci_bus_id: Some(bus.into()),
            name: Some(name.into()),
            memory_total_mib: Some(80.0 * 1024.0),
            parent: None,
        }
    }

    #[test]
    fn cuda_visible_devices_stops_at_the_first_invalid_entry() {
        assert_eq!(
            parse_cuda_visible_devices("2,0,x,1"),
            [Selector::Index(2), Selector::Index(0)]
        );
        assert_eq!(parse_cuda_visible_devices("-1"), []);
        assert_eq!(parse_cuda_visible_devices(""), []);
        assert_eq!(
            parse_cuda_visible_devices("GPU-abc, MIG-def"),
            [
                Selector::Uuid("GPU-abc".into()),
                Selector::Mig("MIG-def".into())
            ]
        );
    }

    #[test]
    fn gpus_flag_refuses_what_it_cannot_read() {
        assert_eq!(
            parse_gpus("1,GPU-ab").expect("valid"),
            [Selector::Index(1), Selector::Uuid("GPU-ab".into())]
        );
        let e = parse_gpus("1,x").expect_err("x is not a GPU");
        assert!(e.contains("`x`"), "{e}");
        assert!(parse_gpus(" , ").is_err());
    }

    #[test]
    fn cuda_order_is_pci_for_one_model_and_unknown_for_mixed_fastest_first() {
        // NVML indices need not follow the bus ids given here: the order comes from the ids.
        let same = [
            gpu(0, "H100", "0000:B0:00.0"),
            gpu(1, "H100", "0000:18:00.0"),
        ];
        assert_eq!(cuda_order(&same, None), Ok(vec![1, 0]));
        let mixed = [gpu(0, "A100", "0000:18:00.0"), gpu(1, "T4", "0000:3B:00.0")];
        assert!(cuda_order(&mixed, None).is_err());
        assert!(cuda_order(&mixed, Some("FASTEST_FIRST")).is_err());
        assert_eq!(cuda_order(&mixed, Some("PCI_BUS_ID")), Ok(vec![0, 1]));
    }

    #[test]
    fn selectors_resolve_by_index_ordinal_or_uuid_prefix() {
        let gpus = [
            gpu(0, "H100", "0000:18:00.0"),
            gpu(1, "H100", "0000:2A:00.0"),
        ];
        assert_eq!(resolve(&Selector::Index(1), &gpus, None), [1]);
        assert_eq!(resolve(&Selector::Index(5), &gpus, None), Vec::<u32>::new());
        assert_eq!(resolve(&Selector::Index(0), &gpus, Some(&[1, 0])), [1]);
        assert_eq!(
            resolve(&Selector::Uuid("gpu-1AAA".into()), &gpus, None),
            [1]
        );
        assert_eq!(
            resolve(&Selector::Mig("MIG-1".into()), &gpus, None),
            Vec::<u32>::new(),
            "no MIG device has that UUID"
        );
        let mut sliced = gpus.to_vec();
        sliced.push(Gpu {
            index: 2,
            uuid: Some("MIG-5e1f-aaaa".into()),
            parent: Some(0),
            ..Gpu::default()
        });
        assert_eq!(
            resolve(&Selector::Mig("mig-5E1F".into()), &sliced, None),
            [2]
        );
        assert_eq!(
            cuda_order(&sliced, Some("PCI_BUS_ID")),
            Ok(vec![0, 1]),
            "ordinals number whole GPUs"
        );
    }
}

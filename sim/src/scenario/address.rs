//! Device addresses and ids: PCI bus ids, generated UUIDs, hex numbers in JSON.

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;

use crate::pattern::splitmix;

/// A PCI address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PciAddress {
    /// Domain.
    pub domain: u32,
    /// Bus.
    pub bus: u32,
    /// Device.
    pub device: u32,
}

/// Parses `"00000000:18:00.0"` or `"0000:18:00.0"` (hex fields).
pub fn parse_bus_id(text: &str) -> Result<PciAddress, String> {
    let bad = || format!("`pci_bus_id` \"{text}\" is not like \"00000000:18:00.0\"");
    let parts: Vec<&str> = text.split(':').collect();
    let [domain, bus, dev_fn] = parts.as_slice() else {
        return Err(bad());
    };
    let device = dev_fn.split('.').next().unwrap_or_default();
    let hex = |s: &str| u32::from_str_radix(s, 16).map_err(|_| bad());
    let addr = PciAddress {
        domain: hex(domain)?,
        bus: hex(bus)?,
        device: hex(device)?,
    };
    if addr.bus > 0xFF || addr.device > 0x1F {
        return Err(bad());
    }
    Ok(addr)
}

/// Bus numbers of the eight GPUs in an HGX H100 board, reused for every eight devices.
const HGX_BUSES: [u32; 8] = [0x18, 0x2A, 0x3A, 0x5D, 0x9A, 0xAB, 0xBA, 0xDB];

/// The address of device `index` when the scenario gives none.
pub fn default_pci(index: u32) -> PciAddress {
    PciAddress {
        domain: index / 8,
        bus: HGX_BUSES[(index % 8) as usize],
        device: 0,
    }
}

/// A UUID in NVML's `GPU-8-4-4-4-12` hex form, stable for a (seed, scenario, index).
pub fn generated_uuid(seed: u64, scenario_name: &str, index: u32) -> String {
    // FNV-1a of the name keeps UUIDs distinct across scenarios and stable across runs.
    let name_hash = scenario_name
        .bytes()
        .fold(0xCBF2_9CE4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01B3)
        });
    let a = splitmix(seed ^ name_hash ^ u64::from(index));
    let b = splitmix(a);
    format!(
        "GPU-{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xFFFF,
        a & 0xFFFF,
        b >> 48,
        b & 0xFFFF_FFFF_FFFF
    )
}

/// A `u32` written as a JSON number or a string such as `"0x233010DE"`.
#[derive(Debug, Clone, Copy)]
pub struct Hex(pub u32);

impl<'de> Deserialize<'de> for Hex {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct HexVisitor;
        impl Visitor<'_> for HexVisitor {
            type Value = Hex;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a 32-bit number or a hex string such as \"0x233010DE\"")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Hex, E> {
                u32::try_from(v)
                    .map(Hex)
                    .map_err(|_| E::custom("does not fit in 32 bits"))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Hex, E> {
                let digits = v.strip_prefix("0x").or_else(|| v.strip_prefix("0X"));
                let parsed = match digits {
                    Some(h) => u32::from_str_radix(h, 16),
                    None => v.parse(),
                };
                parsed
                    .map(Hex)
                    .map_err(|_| E::custom(format_args!("`{v}` is not a 32-bit number")))
            }
        }
        deserializer.deserialize_any(HexVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_uuids_look_real_and_differ_per_device() {
        let a = generated_uuid(0, "x", 0);
        let b = generated_uuid(0, "x", 1);
        assert_ne!(a, b);
        assert_eq!(a.len(), 40, "{a}");
        let groups: Vec<usize> = a
            .trim_start_matches("GPU-")
            .split('-')
            .map(str::len)
            .collect();
        assert_eq!(groups, [8, 4, 4, 4, 12], "{a}");
    }

    #[test]
    fn bus_ids_parse_with_either_domain_width() {
        let long = parse_bus_id("00000001:AB:1F.0").expect("valid");
        assert_eq!(
            long,
            PciAddress {
                domain: 1,
                bus: 0xAB,
                device: 0x1F
            }
        );
        assert_eq!(parse_bus_id("0000:18:00.0"), Ok(default_pci(0)));
        assert!(parse_bus_id("0000:18:20.0").is_err(), "device > 31");
    }
}

//! The loader against NVIDIA's own `nvml.h` (the version pinned in `docs/nvml-loading.md`):
//! the loader's own constants and enum values, the return codes by the names of its error
//! table, and the prototype of every symbol gpuwhy binds, compiled as C assertions by
//! `nvml-header-check`. A difference fails this test with the compiler's message naming it.
//! The struct layouts are checked once, in the binding crate (`nvml-sys/src/header.rs`).

use nvml_header_check::Check;

use super::readings::{ClockType, PcieCounter, TemperatureThreshold};
use super::symbols;
use super::sys::codes;
use crate::metric::reasons;

fn constants(c: &mut Check) {
    codes(c);
    enums(c);
    ids_and_bits(c);
}

/// Return codes, by the names of the error table.
fn codes(c: &mut Check) {
    for (name, v) in super::error::CODES {
        let c_name = match *v {
            codes::SUCCESS => "NVML_SUCCESS".to_string(),
            _ => format!("NVML_ERROR_{name}"),
        };
        c.constant(&c_name, *v);
    }
}

/// Clock types, temperature thresholds and PCIe counters.
fn enums(c: &mut Check) {
    for (name, v) in [
        ("GRAPHICS", ClockType::Graphics),
        ("SM", ClockType::Sm),
        ("MEM", ClockType::Mem),
        ("VIDEO", ClockType::Video),
    ] {
        c.constant(&format!("NVML_CLOCK_{name}"), v as u32);
    }
    for (name, v) in [
        ("SHUTDOWN", TemperatureThreshold::Shutdown),
        ("SLOWDOWN", TemperatureThreshold::Slowdown),
        ("MEM_MAX", TemperatureThreshold::MemMax),
        ("GPU_MAX", TemperatureThreshold::GpuMax),
    ] {
        c.constant(&format!("NVML_TEMPERATURE_THRESHOLD_{name}"), v as u32);
    }
    c.constant("NVML_PCIE_UTIL_TX_BYTES", PcieCounter::Tx as u32);
    c.constant("NVML_PCIE_UTIL_RX_BYTES", PcieCounter::Rx as u32);
}

/// Event types, clock-event reason bits and architecture ids (GPM metric and field ids are
/// the binding crate's, checked there).
fn ids_and_bits(c: &mut Check) {
    c.constant("nvmlEventTypeXidCriticalError", super::EVENT_XID_CRITICAL);
    for (bit, _, c_name) in reasons::NAMED {
        c.constant(c_name, bit);
    }
    c.constant("nvmlClocksEventReasonAll", reasons::ALL);
    for (id, name) in super::ARCHITECTURES {
        c.constant(
            &format!("NVML_DEVICE_ARCH_{}", name.to_ascii_uppercase()),
            id,
        );
    }
}

#[test]
fn bindings_match_nvidias_header() {
    let mut c = Check::new("core");
    constants(&mut c);
    super::mig::header::facts(&mut c);
    super::samples::header::facts(&mut c);
    for (symbol, prototypes) in symbols::prototypes() {
        c.function(symbol, prototypes);
    }
    match c.run() {
        Ok(n) => assert!(n > 120, "only {n} facts were checked"),
        Err(e) => panic!("{e}"),
    }
}

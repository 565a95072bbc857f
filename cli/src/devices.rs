//! `gpuwhy devices`: GPUs and their capabilities.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use gpuwhy::collect::probe;

/// Arguments of `gpuwhy devices`.
#[derive(clap::Args)]
pub struct Args {
    /// Path of libnvidia-ml.so.1 (default: GPUWHY_NVML_PATH, then the system's)
    #[arg(long)]
    nvml: Option<PathBuf>,
    /// Print JSON
    #[arg(long)]
    json: bool,
    /// Without a driver, also list every place searched for NVML
    #[arg(short, long)]
    verbose: bool,
}

/// Says in one line what to do without a driver; the places searched follow only with
/// `verbose` (one place the user named is no list: it is said).
fn no_driver(why: &str, verbose: bool) -> ExitCode {
    eprintln!("gpuwhy: {}", gpuwhy::headline(why));
    match why.split_once(gpuwhy::TRIED).map(|p| p.1) {
        Some(places) if verbose => {
            eprintln!("gpuwhy: places searched for NVML:");
            for place in places.split("; ") {
                eprintln!("gpuwhy:   {place}");
            }
        }
        Some(place) if !place.contains("; ") => eprintln!("gpuwhy: tried {place}"),
        Some(_) => eprintln!("gpuwhy: (`gpuwhy devices -v` lists the places searched)"),
        None => {}
    }
    ExitCode::from(2)
}

fn opt<T: std::fmt::Display>(v: &Option<T>) -> String {
    v.as_ref()
        .map_or_else(|| "-".to_string(), |x| x.to_string())
}

pub fn run(a: Args) -> Result<ExitCode> {
    let found = match probe(a.nvml.as_deref(), true) {
        Ok(f) => f,
        Err(e) => return Ok(no_driver(&e.to_string(), a.verbose)),
    };
    let (nvml, devices) = (&found.nvml, &found.devices);
    // Calls that failed while a GPU was opened, as a recording's `faults` lists them.
    let failed = |index: u32| {
        found
            .open_errors
            .iter()
            .filter(move |(i, _)| *i == index)
            .map(|(_, e)| e)
    };
    if a.json {
        let open_errors: Vec<_> = (found.open_errors.iter())
            .map(|(i, e)| {
                serde_json::json!({"device": i, "function": e.function, "code": e.code, "name": e.code_name()})
            })
            .collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "nvml": nvml,
                "devices": devices,
                "open_errors": open_errors,
            }))?
        );
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "NVML {} (driver {}, CUDA {}) from {}",
        opt(&nvml.nvml_version),
        opt(&nvml.driver_version),
        opt(&nvml.cuda_driver_version),
        nvml.path
    );
    if devices.is_empty() {
        println!("No GPU found.");
    }
    for d in devices {
        println!(
            "\nGPU {}: {} ({}, compute {}), {} MiB, power limit {} W, max SM clock {} MHz, PCIe gen {} x{}",
            d.index,
            opt(&d.name),
            opt(&d.architecture),
            opt(&d.compute_capability),
            d.memory_total_mib.map_or("-".into(), |m| format!("{m:.0}")),
            d.power_limit_w.map_or("-".into(), |m| format!("{m:.0}")),
            opt(&d.max_sm_clock_mhz),
            opt(&d.pcie_max_gen),
            opt(&d.pcie_max_width)
        );
        println!("  uuid {}  bus {}", opt(&d.uuid), opt(&d.pci_bus_id));
        let on: Vec<&str> = d
            .capabilities
            .iter()
            .filter(|(_, c)| c.available)
            .map(|(k, _)| k.as_str())
            .collect();
        println!("  metrics: {}", on.join(", "));
        for (k, c) in d.capabilities.iter().filter(|(_, c)| !c.available) {
            println!(
                "  not available: {k}: {}",
                c.reason.as_deref().unwrap_or("unknown")
            );
        }
        for e in failed(d.index) {
            println!(
                "  failed while opening the GPU: {} returned {}",
                e.function,
                e.code_name()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

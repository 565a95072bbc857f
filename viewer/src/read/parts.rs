//! Readers of the report's small parts (the run, the devices, the host's facts, events,
//! faults, the recorder's cost, step statistics), field by field as core's types declare
//! them. serde's code for these types, inlined into serde_json's parser once per type, was
//! a sixth of the page's WebAssembly; these are a few instructions a field.
//!
//! Each reader ends by naming every field of core's type in a pattern, so a field core adds
//! does not compile here until it is read.

use gpuwhy::report::{
    Capability, DeviceInfo, Event, Fault, HostFacts, JobGpus, NvmlInfo, Overhead, PhaseStats,
    RunInfo, Tool,
};

use super::scan::{ReadError, Scan};

type R<T> = Result<T, ReadError>;

/// `tool`.
pub fn tool(s: &mut Scan) -> R<Tool> {
    let (mut name, mut version) = (String::new(), String::new());
    s.fields(&["name", "version"], &mut |s, k| {
        match k {
            "name" => name = s.string()?,
            "version" => version = s.string()?,
            _ => s.skip()?,
        }
        Ok(())
    })?;
    Ok(Tool { name, version })
}

/// `run`.
pub fn run(s: &mut Scan) -> R<RunInfo> {
    let mut r = RunInfo::default();
    s.fields(&[], &mut |s, k| {
        match k {
            "start_unix_ms" => r.start_unix_ms = s.int()?,
            "start" => r.start = s.string()?,
            "duration_s" => r.duration_s = s.f64()?,
            "host" => r.host = s.string()?,
            "command" => r.command = s.nullable(|s| s.list(&mut Scan::string))?,
            "exit_code" => r.exit_code = s.opt_int()?,
            "label" => r.label = s.opt_string()?,
            "rank" => r.rank = s.opt_int()?,
            "world_size" => r.world_size = s.opt_int()?,
            "local_rank" => r.local_rank = s.opt_int()?,
            "source" => r.source = s.string()?,
            "complete" => r.complete = s.bool()?,
            "ended_by" => r.ended_by = s.opt_string()?,
            "interval_s" => r.interval_s = s.f64()?,
            "job_gpus" => r.job_gpus = s.nullable(job_gpus)?,
            _ => s.skip()?,
        }
        Ok(())
    })?;
    let RunInfo {
        start_unix_ms: _,
        start: _,
        duration_s: _,
        host: _,
        command: _,
        exit_code: _,
        label: _,
        rank: _,
        world_size: _,
        local_rank: _,
        data_loader: _,
        traces: _,
        source: _,
        complete: _,
        ended_by: _,
        interval_s: _,
        job_gpus: _,
    } = &r;
    Ok(r)
}

/// `run.job_gpus`.
fn job_gpus(s: &mut Scan) -> R<JobGpus> {
    let mut j = JobGpus::default();
    s.fields(&[], &mut |s, k| {
        match k {
            "indices" => j.indices = s.list(&mut Scan::int)?,
            "others" => j.others = s.list(&mut Scan::int)?,
            "reason" => j.reason = s.string()?,
            // `method` and `shared` (other users' processes) are skipped: the page shows
            // which GPUs and why, nothing else.
            _ => s.skip()?,
        }
        Ok(())
    })?;
    let JobGpus {
        indices: _,
        others: _,
        method: _skipped,
        reason: _,
        shared: _skipped_too,
    } = &j;
    Ok(j)
}

/// `nvml`.
pub fn nvml(s: &mut Scan) -> R<NvmlInfo> {
    let mut n = NvmlInfo::default();
    s.fields(&[], &mut |s, k| {
        match k {
            "path" => n.path = s.string()?,
            "driver_version" => n.driver_version = s.opt_string()?,
            "nvml_version" => n.nvml_version = s.opt_string()?,
            "cuda_driver_version" => n.cuda_driver_version = s.opt_string()?,
            // Which NVML functions resolved: for `gpuwhy diagnose --json` and the rules'
            // "could not be seen", never drawn, and a map type of its own in the page's
            // WebAssembly. Skipped, as the columns no chart draws are.
            _ => s.skip()?,
        }
        Ok(())
    })?;
    let NvmlInfo {
        path: _,
        driver_version: _,
        nvml_version: _,
        cuda_driver_version: _,
        symbols: _skipped,
    } = &n;
    Ok(n)
}

fn capability(s: &mut Scan) -> R<Capability> {
    let (mut available, mut reason) = (false, None);
    // `via` (the NVML function that answered) is skipped: the page does not show it.
    s.fields(&["available"], &mut |s, k| {
        match k {
            "available" => available = s.bool()?,
            "reason" => reason = s.opt_string()?,
            _ => s.skip()?,
        }
        Ok(())
    })?;
    Ok(Capability {
        available,
        reason,
        via: None,
    })
}

/// One of `devices`.
pub fn device(s: &mut Scan) -> R<DeviceInfo> {
    let mut d = DeviceInfo::default();
    s.fields(&[], &mut |s, k| {
        match k {
            "index" => d.index = s.int()?,
            "name" => d.name = s.opt_string()?,
            "uuid" => d.uuid = s.opt_string()?,
            "pci_bus_id" => d.pci_bus_id = s.opt_string()?,
            "pci_device_id" => d.pci_device_id = s.opt_int()?,
            "architecture" => d.architecture = s.opt_string()?,
            "compute_capability" => d.compute_capability = s.opt_string()?,
            "memory_total_mib" => d.memory_total_mib = s.opt_f64()?,
            "power_limit_w" => d.power_limit_w = s.opt_f64()?,
            "max_sm_clock_mhz" => d.max_sm_clock_mhz = s.opt_f64()?,
            "max_mem_clock_mhz" => d.max_mem_clock_mhz = s.opt_f64()?,
            "max_graphics_clock_mhz" => d.max_graphics_clock_mhz = s.opt_f64()?,
            "pcie_max_gen" => d.pcie_max_gen = s.opt_int()?,
            "pcie_max_width" => d.pcie_max_width = s.opt_int()?,
            "temp_slowdown_c" => d.temp_slowdown_c = s.opt_f64()?,
            "nvlink_links" => d.nvlink_links = s.opt_int()?,
            "gpm" => d.gpm = s.bool()?,
            "capabilities" => d.capabilities = s.map(&mut capability)?,
            "lost_at_s" => d.lost_at_s = s.opt_f64()?,
            _ => s.skip()?,
        }
        Ok(())
    })?;
    let DeviceInfo {
        index: _,
        name: _,
        uuid: _,
        pci_bus_id: _,
        pci_device_id: _,
        architecture: _,
        compute_capability: _,
        memory_total_mib: _,
        memory_reserved_mib: _skipped,
        power_limit_w: _,
        max_sm_clock_mhz: _,
        max_mem_clock_mhz: _,
        max_graphics_clock_mhz: _,
        pcie_max_gen: _,
        pcie_max_width: _,
        temp_slowdown_c: _,
        // Not shown on the page: skipped, to keep the module within its size goal.
        temp_shutdown_c: _skipped_shutdown,
        pcie_device_max_gen: _skipped_device_gen,
        pcie_device_max_width: _skipped_device_width,
        nvlink_links: _,
        gpm: _,
        capabilities: _,
        lost_at_s: _,
        // A MIG device's GPU and instance: its name already says "MIG <profile>".
        mig: _skipped_mig,
        // Health counters are not read by the page yet.
        health: _skipped_health,
    } = &d;
    Ok(d)
}

/// `host.facts`.
pub fn host_facts(s: &mut Scan) -> R<HostFacts> {
    let mut h = HostFacts::default();
    s.fields(&[], &mut |s, k| {
        match k {
            "hostname" => h.hostname = s.string()?,
            "kernel" => h.kernel = s.string()?,
            "cpu_model" => h.cpu_model = s.string()?,
            "logical_cpus" => h.logical_cpus = s.int()?,
            "physical_cores" => h.physical_cores = s.opt_int()?,
            "mem_total_bytes" => h.mem_total_bytes = s.int()?,
            _ => s.skip()?,
        }
        Ok(())
    })?;
    let HostFacts {
        hostname: _,
        kernel: _,
        cpu_model: _,
        logical_cpus: _,
        physical_cores: _,
        mem_total_bytes: _,
    } = &h;
    Ok(h)
}

/// One of `events`.
pub fn event(s: &mut Scan) -> R<Event> {
    let mut e = Event {
        t_s: 0.0,
        device: None,
        kind: String::new(),
        code: None,
        detail: String::new(),
    };
    s.fields(&["t_s", "kind"], &mut |s, k| {
        match k {
            "t_s" => e.t_s = s.f64()?,
            "device" => e.device = s.opt_int()?,
            "kind" => e.kind = s.string()?,
            "code" => e.code = s.opt_int()?,
            "detail" => e.detail = s.string()?,
            _ => s.skip()?,
        }
        Ok(())
    })?;
    Ok(e)
}

/// One of `faults`.
pub fn fault(s: &mut Scan) -> R<Fault> {
    let mut f = Fault {
        device: None,
        function: String::new(),
        code: 0,
        name: String::new(),
        count: 0,
        first_s: 0.0,
        last_s: 0.0,
    };
    let required = ["function", "code", "name", "count", "first_s", "last_s"];
    s.fields(&required, &mut |s, k| {
        match k {
            "device" => f.device = s.opt_int()?,
            "function" => f.function = s.string()?,
            "code" => f.code = s.int()?,
            "name" => f.name = s.string()?,
            "count" => f.count = s.int()?,
            "first_s" => f.first_s = s.f64()?,
            "last_s" => f.last_s = s.f64()?,
            _ => s.skip()?,
        }
        Ok(())
    })?;
    Ok(f)
}

/// `overhead`.
pub fn overhead(s: &mut Scan) -> R<Overhead> {
    let mut o = Overhead::default();
    s.fields(&[], &mut |s, k| {
        match k {
            "ticks" => o.ticks = s.int()?,
            "late_ticks" => o.late_ticks = s.int()?,
            "skipped_ticks" => o.skipped_ticks = s.int()?,
            "wakeups" => o.wakeups = s.opt_int()?,
            "sampler_cpu_s" => o.sampler_cpu_s = s.opt_f64()?,
            "cpu_per_tick_us" => o.cpu_per_tick_us = s.opt_f64()?,
            "cpu_per_gpu_tick_us" => o.cpu_per_gpu_tick_us = s.opt_f64()?,
            "nvml_calls" => o.nvml_calls = s.int()?,
            "nvml_call_mean_us" => o.nvml_call_mean_us = s.f64()?,
            "nvml_call_max_us" => o.nvml_call_max_us = s.f64()?,
            "nvml_call_max_function" => o.nvml_call_max_function = s.opt_string()?,
            "memory_bytes" => o.memory_bytes = s.int()?,
            "memory_bound_bytes" => o.memory_bound_bytes = s.int()?,
            "events_dropped" => o.events_dropped = s.int()?,
            _ => s.skip()?,
        }
        Ok(())
    })?;
    let Overhead {
        ticks: _,
        late_ticks: _,
        skipped_ticks: _,
        wakeups: _,
        sampler_cpu_s: _,
        cpu_per_tick_us: _,
        cpu_per_gpu_tick_us: _,
        nvml_calls: _,
        nvml_call_mean_us: _,
        nvml_call_max_us: _,
        nvml_call_max_function: _,
        memory_bytes: _,
        memory_bound_bytes: _,
        events_dropped: _,
    } = &o;
    Ok(o)
}

/// One of `steps.stats`.
pub fn phase_stats(s: &mut Scan) -> R<PhaseStats> {
    let mut p = PhaseStats::default();
    s.fields(&[], &mut |s, k| {
        match k {
            "count" => p.count = s.int()?,
            "sum_s" => p.sum_s = s.f64()?,
            "min_s" => p.min_s = s.f64()?,
            "max_s" => p.max_s = s.f64()?,
            "p50_s" => p.p50_s = s.f64()?,
            "p95_s" => p.p95_s = s.f64()?,
            "p99_s" => p.p99_s = s.f64()?,
            _ => s.skip()?,
        }
        Ok(())
    })?;
    let PhaseStats {
        count: _,
        sum_s: _,
        min_s: _,
        max_s: _,
        p50_s: _,
        p95_s: _,
        p99_s: _,
    } = &p;
    Ok(p)
}

//! Each rule's inputs and thresholds for `docs/rules.md`, read from the rule's own source
//! text, so the catalogue lists what the code reads and compares with and cannot drift from
//! it. Only the catalogue test uses this (the sources are embedded with `include_str!`).

/// The trace thresholds several rules share (`rules/traced.rs`), listed once.
pub(super) const SHARED_TRACE: &str = include_str!("../traced.rs");

/// A rule's source files: its own file or folder (and a merged job's signals for
/// `rank_imbalance`, whose thresholds only it uses).
pub(super) fn files(id: &str) -> &'static [&'static str] {
    match id {
        "data_starvation" => &[include_str!("../data_starvation.rs")],
        "launch_bound" => &[
            include_str!("../launch_bound/mod.rs"),
            include_str!("../launch_bound/traced.rs"),
        ],
        "busy_not_working" => &[include_str!("../busy_not_working.rs")],
        "memory_bound" => &[include_str!("../memory_bound.rs")],
        "memory_headroom" => &[include_str!("../memory_headroom.rs")],
        "small_batch" => &[include_str!("../small_batch.rs")],
        "recompute_overhead" => &[include_str!("../recompute_overhead.rs")],
        "comm_sync" => &[include_str!("../comm_sync.rs")],
        "rank_imbalance" => &[
            include_str!("../rank_imbalance/mod.rs"),
            include_str!("../rank_imbalance/ways.rs"),
            include_str!("../rank_imbalance/traced.rs"),
            include_str!("../rank_imbalance/ranks.rs"),
            include_str!("../../signals/ranks/stragglers.rs"),
            include_str!("../../signals/ranks/imbalance.rs"),
        ],
        "host_transfer" => &[include_str!("../host_transfer.rs")],
        "host_sync" => &[include_str!("../host_sync.rs")],
        "throttling" => &[include_str!("../throttling.rs")],
        "pcie_degraded" => &[include_str!("../pcie_degraded.rs")],
        "periodic_stall" => &[include_str!("../periodic_stall.rs")],
        "dynamic_shapes" => &[include_str!("../dynamic_shapes.rs")],
        "gpu_fault" => &[
            include_str!("../gpu_fault/mod.rs"),
            include_str!("../gpu_fault/health.rs"),
        ],
        "idle_gpu" => &[include_str!("../idle_gpu.rs")],
        "allocator_stall" => &[include_str!("../allocator_stall.rs")],
        "cpu_optimizer" => &[include_str!("../cpu_optimizer.rs")],
        "shared_gpu" => &[include_str!("../shared_gpu.rs")],
        "pipeline_bubble" => &[
            include_str!("../pipeline_bubble.rs"),
            include_str!("../../signals/stagger.rs"),
        ],
        "unexplained_idle" => &[include_str!("../unexplained_idle.rs")],
        _ => &[],
    }
}

/// What a rule reads, told from its code: samples (per-GPU, cross-GPU or host signals),
/// step phases, a profiler trace, a merged job's ranks.
pub(super) fn inputs(files: &[&str]) -> Vec<&'static str> {
    let own = files.first().copied().unwrap_or_default();
    let all = files.concat();
    let mut out = Vec::new();
    if [
        "sampled_devices",
        "job_devices",
        "state_devices",
        "s.devices",
        "s.cross",
        "s.host",
        "s.job_gpus",
        ".util",
    ]
    .iter()
    .any(|k| own.contains(k) || all.contains(&format!("fn {k}")))
    {
        out.push("samples");
    }
    if all.contains("s.steps") || all.contains(".steps") && all.contains("RankSummary") {
        out.push("steps");
    }
    if all.contains("fn traced(") || all.contains("traced::traced(") {
        out.push("trace");
    }
    if all.contains("evaluate_job") {
        out.push("ranks");
    }
    out
}

/// One threshold: its name, its value as written, and its doc comment (the source of the
/// number).
pub(super) struct Threshold {
    pub name: String,
    pub value: String,
    pub doc: String,
}

/// The numeric `pub const`s of `files` whose value is a number, in order, once each.
pub(super) fn thresholds(files: &[&str]) -> Vec<Threshold> {
    let mut out: Vec<Threshold> = Vec::new();
    for src in files {
        let mut doc: Vec<&str> = Vec::new();
        for line in src.lines() {
            let t = line.trim_start();
            if let Some(d) = t.strip_prefix("///") {
                doc.push(d.trim());
                continue;
            }
            if let Some(th) = parse_const(t, &doc) {
                if !out.iter().any(|o| o.name == th.name) {
                    out.push(th);
                }
            }
            if !t.starts_with("#[") {
                doc.clear();
            }
        }
    }
    out
}

fn parse_const(line: &str, doc: &[&str]) -> Option<Threshold> {
    let rest = line
        .strip_prefix("pub const ")
        .or_else(|| line.strip_prefix("pub(crate) const "))?;
    let (name, rest) = rest.split_once(':')?;
    let (ty, value) = rest.split_once('=')?;
    let value = value.trim().strip_suffix(';')?.replace('_', "");
    let numeric = matches!(ty.trim(), "f64" | "f32" | "usize" | "u32" | "u64" | "i64");
    (numeric && value.parse::<f64>().is_ok()).then(|| Threshold {
        name: name.trim().to_string(),
        value,
        doc: doc.join(" "),
    })
}

//! Each GPU's own thresholds where the input does not carry them: documented per-model
//! fallbacks (docs/rules.md, "Each GPU's own thresholds").

/// Slowdown temperatures by model, for inputs that name the model but not its thresholds
/// (`nvidia-smi dmon` and `--query-gpu` logs): only models whose threshold a public dump
/// shows (docs/rules.md, "Each GPU's own thresholds"). A100 (SXM4 and PCIe, 40 and 80 GB):
/// "GPU Slowdown Temp : 89 C" in the `nvidia-smi -q` dumps of tests/corpus/real
/// (a100x4_remap_pending_a) and core/tests/fixtures/import (smi_q_r470_two_gpus), and in
/// stas00/ml-engineering's `nvidia-smi -q -d temperature` of an A100 node.
pub const MODEL_SLOWDOWN_C: &[(&str, f64)] = &[("A100", 89.0)];

/// The slowdown temperature of a model named `name`, from [`MODEL_SLOWDOWN_C`].
pub fn model_slowdown_c(name: Option<&str>) -> Option<f64> {
    let name = name?;
    MODEL_SLOWDOWN_C
        .iter()
        .find(|(m, _)| name.contains(m))
        .map(|(_, t)| *t)
}

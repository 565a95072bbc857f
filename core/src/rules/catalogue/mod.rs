//! `docs/rules.md`, generated from the rule registry so the documentation cannot drift.

mod sources;

use super::RULES;

/// How the rules' findings are weighed into one answer (the part of `docs/rules.md` that is
/// not one rule's).
const REASONING: &str = r#"## How the answer is reached

### Shares of time

NVML's GPU utilization is the percent of time, over the past sample period, during which one
or more kernels was executing (NVIDIA, NVML API reference, `nvmlUtilization_t`:
<https://docs.nvidia.com/deploy/nvml-api/structnvmlUtilization__t.html>; `nvidia-smi dmon`'s
`sm` column and `--query-gpu=utilization.gpu` report the same number). So the time-weighted
mean of the samples is the share of time a GPU worked, and one minus it the share it idled.
gpuwhy weighs each sample by the time it stands for (the gap to the next sample, at most
twice the usual gap, so a hole in a log is not one sample's worth; a coarse bucket of a long
recording by its length) and leaves out the idle stretches before the first and after the
last working sample (start-up and shutdown).

Two quantities, not one. Medians and p95s describe the typical step; what a cause costs is a
time-weighted share of the run, because a few long waits can be most of the loss while the
median step never sees them. Each finding's `lost_share` is such a share and its
`lost_share_basis` says how it was estimated, or why there is none:

- `data_starvation`: the data phase's total time over the total step time (from samples
  alone: the time-weighted share near zero utilization);
- `periodic_stall`: the time the stall steps spent above the median step cycle, over the
  total step-cycle time (evaluation and checkpoints between steps included);
- `launch_bound`: (1 − GPU-measured over CPU forward+backward time) × the forward and
  backward share of the step time, capped at the GPUs' measured idle share outside the data
  phase (a contended CPU stretches the phases, not the GPU's idle time);
- `host_transfer` with an optimizer offloaded to the CPU: the optimizer phase's share of the
  step time;
- `small_batch`, `host_transfer` and `launch_bound` read from samples: an upper bound, the
  time-weighted idle share of the GPUs concerned;
- `unexplained_idle`: the idle share the other findings leave unexplained.

### Ordering by cost

A failing GPU (`gpu_fault` at `high` or above: an XID, a lost GPU, uncorrected ECC errors, a
pending or failed row remap, pages pending retirement) comes first: nothing else can be
judged on it; health counters that only need watching (corrected errors rising) are ordered
by cost like everything else. Every other
finding is ordered by its expected lost share — the estimate times the finding's confidence,
so a cost that is less certain counts for less — largest first (to the percent; findings
without an estimate after those with one), then by severity × confidence. When two causes hold — a
data-starved job on a power-capped GPU — both are reported with their shares and the one
that costs more is the verdict; `throttling` has no precedence, and its advice still says
to fix power and cooling before touching code.

### Causes and consequences

Findings do not compete as if they were independent. A rule declares the findings its
mechanism can produce and on which GPUs (the table below, from each rule's `produces`).
When a cause and its consequence hold on those GPUs, the consequence gets `caused_by` (the
cause's id) and is listed right after its cause; the cause carries the consequence's
measured lost share when it is larger than its own (the time the other GPUs wait for a
slowed one, the time the slow copies take), with `lost_share_basis` saying so, and its
summary says what it causes. Independent causes are still ordered by cost: a data wait that
costs more than a lower clock on another GPU is still the verdict.

Relations: *others wait for* — the consequence's first-named GPU (the straggler) is one of
the cause's GPUs; *same GPUs* — the two name a GPU in common; *job* — over the whole job;
*both measure* — both carry an agreeing evidence item of that kind (the host waits at the
very copies from pageable memory that the transfer finding measures).

{CAUSES}
### The evidence each claim needs

A pattern over time needs samples over time, and a loss needs something measured to lose
against. Each rule says what its finding needs when it is decided from the GPU samples
(step markers, a profiler trace and a merged job's ranks are series of their own):

- *state* — a reading of the GPU's state is enough (clock-event reasons, link generation and
  width, errors, memory, processes, how idle the GPUs read), so a one-sample snapshot
  (`nvidia-smi -q`) supports it;
- *series* — a pattern over time: at least `MIN_SERIES_SAMPLES` (10) samples per GPU.

Below what a rule needs, its finding is left out, and the verdict says what the samples do
show and the exact recording that would settle it. From a one-sample snapshot no finding
has a lost share: its `lost_share_basis` says "not estimated" and what it needs.

{NEEDS}
Severity follows confidence: no finding is `high` below a confidence of 0.6
(`HIGH_CONFIDENCE`), nor `medium` below 0.35 (`MEDIUM_CONFIDENCE`), whatever its rule's
default; a failing GPU stays `critical`.

### No work is not waiting

A GPU whose utilization stays below 5 % (`NO_WORK_UTIL`) in every sample did no work: it is
not the job's, the job was given more GPUs than it uses, or a framework allocated on every
visible GPU. `idle_gpu` names it with what it holds (memory, processes) and what to change;
it is left out of every comparison between GPUs (stragglers, dips together, wait shares)
and judged by no performance rule. A recording where no GPU works gets `idle_gpu` alone
(and `gpu_fault`, when a GPU's health is failing).

### Always an answer

When the job's GPUs are busy less than 80 % of the time (time-weighted) and the other
findings leave at least 20 % of the time unexplained, the answer is `unexplained_idle`:
how much time is idle, what was seen, what could not be seen, and the next measurement on
the guides' ladder with the command that takes it — step markers with a data phase, then
the host view (`gpuwhy record`), then a profiler trace of a few steps
(`gpuwhy diagnose run.json --trace trace.json`), then the one-variable experiment compared
with `gpuwhy compare`. A finding explains idle time up to its lost share (the largest
counts, since causes overlap; one without an estimate explains it all). Causes that slow a
working GPU rather than idle it — `throttling`, `busy_not_working`, `memory_bound`,
`recompute_overhead`, `pcie_degraded` — do not explain idle time, and `memory_headroom`
does not explain a sawtooth. When utilization swings between low (< 50 %) and high
(≥ 80 %) stretches, an input wait is the best-supported reading and the finding says so
with modest confidence. "No bottleneck found" is said only of busy GPUs.

### Near a threshold

A rule that narrowly misses its threshold still leaves its evidence: each measurement within
a third of its rule's threshold is listed under `unexplained_idle`, named
`<rule> (not met): …`, with `agrees: false`. `launch_bound` reports a GPU/CPU forward+backward
ratio between 0.5 and 0.7 itself, at half its confidence.

### Short logs

With 1 to 10 GPU samples and neither step markers nor a profiler trace, the findings the
samples can carry (above: state findings, and series findings from ten samples) keep their
reading but not `gpu_fault`'s certainty: their confidence is capped at 0.3 + 0.04 × samples
(0.34 from one sample, 0.7 from ten), so their severity falls with it, and their `unseen`
says to record at least 120 s to settle it.
"#;

/// The rule catalogue as Markdown (the content of `docs/rules.md`).
pub fn catalogue_markdown() -> String {
    let mut out = String::from(
        "# Rule catalogue\n\n\
         Generated from the rule registry (`core/src/rules/`); do not edit by hand. \
         A test fails when this file is stale; regenerate it with \
         `GPUWHY_BLESS=1 cargo test -p gpuwhy --lib rules::catalogue`.\n\n",
    );
    out.push_str(
        &REASONING
            .replace("{CAUSES}", &causes_table())
            .replace("{NEEDS}", &needs_table()),
    );
    out.push_str("\n## The rules\n\n| id | title | default severity |\n|---|---|---|\n");
    for r in RULES {
        let m = r.meta();
        out.push_str(&format!(
            "| `{}` | {} | {} |\n",
            m.id,
            m.title,
            m.severity.as_str()
        ));
    }
    for r in RULES {
        let m = r.meta();
        out.push_str(&format!(
            "\n## `{}` — {}\n\n**What it detects.** {}\n\n**Why it matters.** {}\n\n**Evidence.** {}\n\n**What to try first.** {}\n",
            m.id, m.title, m.doc.detects, m.doc.why, m.doc.evidence, m.doc.first
        ));
        out.push_str(&inputs_and_thresholds(m.id));
    }
    out.push_str(
        "\n## Trace thresholds the rules share\n\nWhat several rules read alike from a profiler trace (`core/src/rules/traced.rs`).\n",
    );
    out.push_str(&thresholds_table(&sources::thresholds(&[
        sources::SHARED_TRACE,
    ])));
    // Hand-written sections, each its own file next to the rules it explains.
    out.push_str(include_str!("../cross_gpu.md"));
    out
}

/// Every cause → consequence relation the rules declare.
fn causes_table() -> String {
    let mut out = String::from("| cause | consequence | on | how |\n|---|---|---|---|\n");
    for r in RULES {
        for p in r.produces() {
            let on = match p.on {
                super::Relation::SameGpus => "same GPUs".to_string(),
                super::Relation::OthersWaitFor => "others wait for".to_string(),
                super::Relation::Job => "job".to_string(),
                super::Relation::SharedEvidence(w) => format!("both measure `{w}`"),
            };
            out.push_str(&format!(
                "| `{}` | `{}` | {on} | {} |\n",
                r.meta().id,
                p.id,
                p.how
            ));
        }
    }
    out
}

/// What each rule's finding needs of the samples.
fn needs_table() -> String {
    let (state, series): (Vec<_>, Vec<_>) =
        RULES.iter().partition(|r| r.needs() == super::Needs::State);
    let ids = |v: Vec<&&dyn super::Rule>| {
        v.iter()
            .map(|r| format!("`{}`", r.meta().id))
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "| needs | rules |\n|---|---|\n| state | {} |\n| series | {} |\n",
        ids(state),
        ids(series)
    )
}

/// A rule's inputs and thresholds, read from its source files.
fn inputs_and_thresholds(id: &str) -> String {
    let files = sources::files(id);
    let mut out = format!("\n**Inputs.** {}.\n", sources::inputs(files).join(", "));
    let th = sources::thresholds(files);
    if !th.is_empty() {
        out.push_str("\n**Thresholds.**\n");
        out.push_str(&thresholds_table(&th));
    }
    out
}

fn thresholds_table(th: &[sources::Threshold]) -> String {
    let mut out =
        String::from("\n| constant | value | where the number comes from |\n|---|---|---|\n");
    for t in th {
        out.push_str(&format!(
            "| `{}` | {} | {} |\n",
            t.name,
            t.value,
            t.doc.replace('|', "\\|")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docs_rules_md_matches_the_registry() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/rules.md");
        let fresh = catalogue_markdown();
        if std::env::var_os("GPUWHY_BLESS").is_some() {
            std::fs::write(path, &fresh).expect("write docs/rules.md");
        }
        let committed = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            committed == fresh,
            "docs/rules.md is stale; regenerate it with `GPUWHY_BLESS=1 cargo test -p gpuwhy --lib rules::catalogue`"
        );
    }

    #[test]
    fn every_rule_has_its_sources_inputs_and_documented_thresholds() {
        for r in RULES {
            let id = r.meta().id;
            let files = sources::files(id);
            assert!(
                !files.is_empty(),
                "{id}: no source files in catalogue/sources.rs"
            );
            assert!(!sources::inputs(files).is_empty(), "{id}: no inputs seen");
            for t in sources::thresholds(files) {
                assert!(!t.doc.is_empty(), "{id}: threshold {} has no doc", t.name);
            }
        }
        let th = sources::thresholds(sources::files("data_starvation"));
        let idle = th
            .iter()
            .find(|t| t.name == "MIN_IDLE_SHARE")
            .expect("listed");
        assert_eq!(idle.value, "0.10");
    }
}

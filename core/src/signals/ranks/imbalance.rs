//! Nodes, and how evenly the job's GPUs and nodes were used.
//!
//! Every rank on a node may have recorded every GPU of the node (`gpuwhy record` wrapping
//! each rank sees them all), so a GPU is counted once: by its UUID, or by its NVML index on
//! its host when the report has no UUID.

use std::collections::BTreeMap;

use super::stragglers::median;
use crate::report::{GpuSpot, Imbalance, NodeSummary, RankSummary};

/// A GPU (or node) whose utilization median is more than this many points from the job's
/// median is out of balance. The field guides: SM utilization differing by more than 10
/// points (docs/references.md#field-guides).
pub const MAX_UTIL_DISTANCE: f64 = 10.0;

/// Outlying GPUs listed in the report; the count of all of them is in the finding.
pub const MAX_LISTED: usize = 32;

fn sorted(mut v: Vec<f64>) -> Vec<f64> {
    v.retain(|x| x.is_finite());
    v.sort_by(f64::total_cmp);
    v
}

/// One distinct GPU of the job.
struct Gpu<'a> {
    host: &'a str,
    index: u32,
    util_p50: Option<f64>,
    /// The rank whose own GPU it is.
    owner: Option<u32>,
}

/// The job's distinct GPUs, by host: a GPU is its UUID where the report has one (the same
/// physical GPU whichever rank recorded it), else its NVML index on its host.
fn gpus(ranks: &[RankSummary]) -> Vec<Gpu<'_>> {
    let mut out: BTreeMap<(&str, String), Gpu> = BTreeMap::new();
    for r in ranks {
        for g in &r.gpus {
            let id = g
                .uuid
                .clone()
                .unwrap_or_else(|| format!("index {}", g.index));
            let e = out.entry((r.host.as_str(), id)).or_insert(Gpu {
                host: &r.host,
                index: g.index,
                util_p50: None,
                owner: None,
            });
            e.util_p50 = e.util_p50.or(g.util_p50);
            if r.gpu == Some(g.index) {
                e.owner = Some(r.rank);
            }
        }
    }
    out.into_values().collect()
}

/// One row per node, by host name.
pub fn nodes(ranks: &[RankSummary]) -> Vec<NodeSummary> {
    let all = gpus(ranks);
    let mut by_host: BTreeMap<&str, (Vec<&RankSummary>, Vec<&Gpu>)> = BTreeMap::new();
    for r in ranks {
        by_host.entry(r.host.as_str()).or_default().0.push(r);
    }
    for g in &all {
        by_host.entry(g.host).or_default().1.push(g);
    }
    by_host
        .into_iter()
        .map(|(host, (rs, gs))| {
            let steps: Vec<f64> = rs
                .iter()
                .filter_map(|r| r.steps.as_ref().map(|s| s.step.p50_s))
                .collect();
            NodeSummary {
                host: host.to_string(),
                ranks: rs.iter().map(|r| r.rank).collect(),
                gpus: gs.len(),
                util_p50: median(&sorted(gs.iter().filter_map(|g| g.util_p50).collect())),
                step_p50_s: median(&sorted(steps)),
            }
        })
        .collect()
}

/// Utilization imbalance across the job's GPUs and nodes; `None` without utilization.
pub fn imbalance(ranks: &[RankSummary], nodes: &[NodeSummary]) -> Option<Imbalance> {
    let all = gpus(ranks);
    let utils = sorted(all.iter().filter_map(|g| g.util_p50).collect());
    let med = median(&utils)?;
    let mut outliers: Vec<GpuSpot> = all
        .iter()
        .filter_map(|g| {
            let u = g.util_p50?;
            ((u - med).abs() > MAX_UTIL_DISTANCE).then(|| GpuSpot {
                host: g.host.to_string(),
                index: g.index,
                rank: g.owner,
                util_p50: u,
                distance: u - med,
            })
        })
        .collect();
    outliers.sort_by(|a, b| b.distance.abs().total_cmp(&a.distance.abs()));
    let outlier_count = outliers.len();
    outliers.truncate(MAX_LISTED);
    let node_utils = sorted(nodes.iter().filter_map(|n| n.util_p50).collect());
    let node_med = median(&node_utils);
    let node_outliers = match node_med {
        Some(m) if node_utils.len() >= 2 => nodes
            .iter()
            .filter(|n| {
                n.util_p50
                    .is_some_and(|u| (u - m).abs() > MAX_UTIL_DISTANCE)
            })
            .map(|n| n.host.clone())
            .collect(),
        _ => Vec::new(),
    };
    Some(Imbalance {
        gpus: utils.len(),
        util_p50_median: med,
        util_p50_spread: utils[utils.len() - 1] - utils[0],
        outliers,
        outlier_count,
        node_spread: (node_utils.len() >= 2)
            .then(|| node_utils[node_utils.len() - 1] - node_utils[0]),
        node_outliers,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::RankGpu;

    /// Every rank of a node recorded all of its `per_node` GPUs.
    fn job(nodes: u32, per_node: u32, util: impl Fn(u32, u32) -> f64) -> Vec<RankSummary> {
        (0..nodes * per_node)
            .map(|rank| {
                let node = rank / per_node;
                RankSummary {
                    rank,
                    host: format!("node-{node}"),
                    gpu: Some(rank % per_node),
                    gpus: (0..per_node)
                        .map(|i| RankGpu {
                            index: i,
                            util_p50: Some(util(node, i)),
                            ..RankGpu::default()
                        })
                        .collect(),
                    ..RankSummary::default()
                }
            })
            .collect()
    }

    #[test]
    fn a_gpu_seen_by_every_rank_of_its_node_counts_once() {
        let ranks = job(2, 4, |n, i| if (n, i) == (1, 2) { 40.0 } else { 97.0 });
        let nodes = nodes(&ranks);
        assert_eq!(nodes.len(), 2);
        assert_eq!(
            (nodes[1].gpus, nodes[1].ranks.clone()),
            (4, vec![4, 5, 6, 7])
        );
        let im = imbalance(&ranks, &nodes).expect("utilization");
        assert_eq!(im.gpus, 8);
        assert_eq!(im.outliers.len(), 1);
        let o = &im.outliers[0];
        assert_eq!((o.host.as_str(), o.index, o.rank), ("node-1", 2, Some(6)));
        assert_eq!((im.util_p50_spread, o.distance), (57.0, -57.0));
        assert!(
            im.node_outliers.is_empty(),
            "one GPU does not move a node's median"
        );
    }

    #[test]
    fn a_slow_node_stands_out() {
        let ranks = job(4, 2, |n, _| if n == 3 { 60.0 } else { 95.0 });
        let nodes = nodes(&ranks);
        let im = imbalance(&ranks, &nodes).expect("utilization");
        assert_eq!(im.node_outliers, vec!["node-3".to_string()]);
        assert_eq!(im.node_spread, Some(35.0));
    }
}

//! Host samples as report rows and columns.

use crate::host::HostSample;

/// The report column a host sample field is stored in.
pub(super) fn host_column_name(field: &str) -> &str {
    match field {
        "cpu_total_util" => "cpu_total",
        "proc_tree_cpu" => "proc_cpu",
        "proc_tree_count" => "proc_count",
        "disk_read_bps" => "disk_read",
        "disk_write_bps" => "disk_write",
        "mem_available_bytes" => "mem_available",
        "cpu_core_util" => "cpu_cores",
        other => other,
    }
}

/// A host sample as a report row: the fixed columns, then one per core.
pub(super) fn host_row(s: &HostSample) -> Vec<f32> {
    let mut r = vec![
        s.cpu_total_util,
        s.cpu_iowait,
        s.proc_tree_cpu,
        s.proc_tree_count,
        s.disk_read_bps,
        s.disk_write_bps,
        s.mem_available_bytes,
        s.psi_cpu_some,
        s.psi_io_some,
        s.psi_io_full,
        s.psi_mem_some,
        s.psi_mem_full,
    ];
    r.extend_from_slice(&s.cpu_core_util);
    r
}

//! `nvidia-smi -q -x` dumps: the same report as `nvidia-smi -q`, as XML.
//!
//! Each `<nvidia_smi_log>` document (one, or one per loop with `-l N`) holds the global
//! elements (`timestamp`, `driver_version`, `attached_gpus`) and one `<gpu id="…">` element
//! per GPU, whose children are the text dump's sections with snake_case names
//! (`utilization` › `gpu_util`). The document is read with `roxmltree` and written out as the
//! text dump it stands for, section titles and `Key : Value` lines indented by depth, so the
//! one reader of `nvidia-smi -q` ([`super::parse`]) reads both, with the same key table.
//! Element names whose words differ from the text dump's keys are renamed here
//! ([`key`]); docs/importing.md lists them.

/// The root element of an `nvidia-smi -q -x` document, its start tag opened and its end tag.
const OPEN: &str = "<nvidia_smi_log";
const CLOSE: &str = "</nvidia_smi_log>";

/// True when `head` (the start of a file) is an `nvidia-smi -q -x` dump: XML (an XML
/// declaration, a document type or the root itself first) whose root is `nvidia_smi_log`.
pub(crate) fn is_xml(head: &str) -> bool {
    let t = head.trim_start();
    t.starts_with('<') && t.contains(OPEN)
}

/// The text dump's key for element `name`: where the words differ, the text dump's; else
/// the name's words (the text reader compares keys in lower case).
fn key(name: &str) -> String {
    let renamed = match name {
        "gpu_util" => "gpu",
        "memory_util" => "memory",
        "tx_util" => "tx throughput",
        "rx_util" => "rx throughput",
        "pci_bus_id" => "bus id",
        "pci_gpu_link_info" => "gpu link info",
        "pcie_gen" => "pcie generation",
        "link_widths" => "link width",
        "max_link_gen" | "max_link_width" => "max",
        "current_link_gen" | "current_link_width" => "current",
        "gpu_temp" => "gpu current temp",
        "gpu_temp_slow_threshold" => "gpu slowdown temp",
        "gpu_temp_max_threshold" => "gpu shutdown temp",
        "gpu_temp_max_gpu_threshold" => "gpu max operating temp",
        "device_current_link_gen" => "device current",
        "max_device_link_gen" => "device max",
        "max_host_link_gen" => "host max",
        "current_ecc" => "current",
        "pending_ecc" => "pending",
        "instant_power_draw" => "instantaneous power draw",
        "uuid" => "gpu uuid",
        "graphics_clock" => "graphics",
        "sm_clock" => "sm",
        "mem_clock" => "memory",
        "sram_uncorrectable_secded" => "sram uncorrectable sec-ded",
        _ => {
            // `clocks_event_reason_sw_power_cap` (`clocks_throttle_reason_…` before R535)
            // under `clocks_event_reasons` is the text dump's `SW Power Cap`.
            let reason = ["clocks_event_reason_", "clocks_throttle_reason_"]
                .iter()
                .find_map(|p| name.strip_prefix(p));
            return reason.unwrap_or(name).replace('_', " ");
        }
    };
    renamed.to_string()
}

/// Writes the children of `node` as text-dump lines at `depth` (four spaces a level).
fn lines(node: roxmltree::Node<'_, '_>, depth: usize, out: &mut String) {
    for child in node.children().filter(roxmltree::Node::is_element) {
        let name = child.tag_name().name();
        if depth == 0 && name == "gpu" {
            out.push_str("GPU ");
            out.push_str(child.attribute("id").unwrap_or_default().trim());
            out.push('\n');
            lines(child, 1, out);
            continue;
        }
        for _ in 0..depth {
            out.push_str("    ");
        }
        out.push_str(&key(name));
        if child.children().any(|c| c.is_element()) {
            out.push('\n');
            lines(child, depth + 1, out);
        } else {
            // A value may be spread over lines (`<mig_devices>` with `None` inside).
            let text = child.text().unwrap_or_default();
            let words: Vec<&str> = text.split_whitespace().collect();
            out.push_str(" : ");
            out.push_str(&words.join(" "));
            out.push('\n');
        }
    }
}

/// The text dump that `xml` (one or several `nvidia_smi_log` documents) stands for, and a
/// note when a document after the first could not be read (a log cut mid-write): the ones
/// before it are kept. `Err` with the parser's message when the first cannot be read.
pub(super) fn to_text(xml: &str) -> Result<(String, Option<String>), String> {
    let (open, close) = (OPEN, CLOSE);
    let mut out = String::new();
    let mut rest = xml;
    let mut read = 0;
    while let Some(start) = rest.find(open) {
        let doc = &rest[start..];
        let end = doc.find(close).map_or(doc.len(), |e| e + close.len());
        match roxmltree::Document::parse(&doc[..end]) {
            Ok(d) => {
                out.push_str("==============NVSMI LOG==============\n");
                lines(d.root_element(), 0, &mut out);
                read += 1;
            }
            Err(e) if read == 0 => return Err(e.to_string()),
            Err(e) => {
                let note = format!(
                    "nvidia-smi -q -x: document {} could not be read ({e}); the {read} before it were",
                    read + 1
                );
                return Ok((out, Some(note)));
            }
        }
        rest = &doc[end..];
    }
    if read == 0 {
        return Err(format!("no {OPEN}> element"));
    }
    Ok((out, None))
}

#[cfg(test)]
#[path = "xml_tests.rs"]
mod tests;

//! Telling an `nvidia-smi -q` dump, or a part of one as posts quote it, from other text:
//! the banner, a `GPU 00000000:17:00.0` line, or lines of a GPU block with at least two of
//! its section titles or keys, with or without their indentation, around `[...]` elisions.

use super::lines::{gpu_block, indent};
use super::xml;

/// The banner nvidia-smi prints at the top of every `-q` dump.
pub const BANNER: &str = "NVSMI LOG";

/// Section titles only an `nvidia-smi -q` GPU block prints (a line of its own). One of them
/// at the margin, outside any block, opens a block: a fragment pasted without indentation.
const TITLES: [&str; 18] = [
    "Clocks Throttle Reasons",
    "Clocks Event Reasons",
    "FB Memory Usage",
    "Power Readings",
    "GPU Power Readings",
    "Max Clocks",
    "Clocks",
    "GPU Link Info",
    "PCIe Generation",
    "Link Width",
    "Utilization",
    "Temperature",
    "ECC Mode",
    "ECC Errors",
    "Retired Pages",
    "Remapped Rows",
    "Volatile",
    "Aggregate",
];

/// Keys of a GPU block (before the colon) that other text is unlikely to have.
const KEYS: [&str; 19] = [
    "Performance State",
    "Product Name",
    "GPU Current Temp",
    "GPU Shutdown Temp",
    "GPU Slowdown Temp",
    "Applications Clocks Setting",
    "SW Power Cap",
    "HW Slowdown",
    "SW Thermal Slowdown",
    "SRAM Correctable",
    "SRAM Uncorrectable",
    "DRAM Correctable",
    "DRAM Uncorrectable",
    "Single Bit ECC",
    "Double Bit ECC",
    "Pending Page Blacklist",
    "Correctable Error",
    "Uncorrectable Error",
    "Remapping Failure Occurred",
];

/// True when the trimmed `line` is a section title of a GPU block (any case: posts retype
/// `Retired pages`).
pub(super) fn is_title(line: &str) -> bool {
    let t = line.trim();
    TITLES.iter().any(|k| k.eq_ignore_ascii_case(t))
}

/// True when `line` is a title or one of the block's distinctive keys.
fn is_known(line: &str) -> bool {
    let t = line.trim();
    is_title(t)
        || KEYS.iter().any(|k| {
            t.get(..k.len()).is_some_and(|p| p.eq_ignore_ascii_case(k))
                && t[k.len()..].trim_start().starts_with(':')
        })
}

/// True when `line` is where a post left lines out: `...`, `[...]`, `…`, `[…]`.
pub(super) fn is_elision(line: &str) -> bool {
    let t = line.trim();
    (t.contains("...") || t.contains('…'))
        && t.chars().count() <= 12
        && t.chars()
            .all(|c| matches!(c, '.' | '…' | '[' | ']' | '(' | ')' | ' '))
}

/// True when `line` has the shape of a dump line: a title (words, no punctuation that logs
/// and prose carry) or `Key : Value`.
fn dump_shaped(line: &str) -> bool {
    let t = line.trim();
    if t.contains(" : ") || t.ends_with(" :") {
        return true;
    }
    !t.contains([',', ';', '#', '|', '=', '(', '"']) && t.split_whitespace().count() <= 6
}

/// True when `head` (the start of a file) is an `nvidia-smi -q` dump: its banner (after a
/// command line, as posts show it), a `GPU 0000…:…` block line with an indented
/// `Key : Value` line after it (a dump pasted without its banner), or lines of one GPU
/// block — indented or not — with at least two of its section titles or keys, nearly all of
/// them shaped like dump lines (a part of a block, as posts quote them).
pub(crate) fn is_dump(head: &str) -> bool {
    if xml::is_xml(head) {
        return true;
    }
    let lines: Vec<&str> = head
        .lines()
        .filter(|l| !l.trim().is_empty() && !is_elision(l))
        .collect();
    if lines.iter().take(3).any(|l| l.contains(BANNER)) {
        return true;
    }
    let Some(first) = lines.first() else {
        return false;
    };
    if gpu_line_first(&lines) {
        return true;
    }
    let known = lines.iter().filter(|l| is_known(l)).count();
    let shaped = lines.iter().filter(|l| dump_shaped(l)).count();
    // A fragment: its first line is indented or a block title, two or more lines only a
    // block has, and nine in ten lines shaped like a dump's.
    (indent(first) > 0 || is_title(first)) && known >= 2 && shaped * 10 >= lines.len() * 9
}

/// A `GPU 0000…` line, after only global `Key : Value` lines at the margin, followed by an
/// indented `Key : Value` line.
fn gpu_line_first(lines: &[&str]) -> bool {
    let mut it = lines.iter().peekable();
    while let Some(l) = it.next() {
        if gpu_block(l).is_some() {
            return it
                .peek()
                .is_some_and(|n| indent(n) > 0 && n.contains(" : "));
        }
        if indent(l) > 0 || !l.contains(':') {
            return false;
        }
    }
    false
}

//! `docs/rules.md`, generated from the rule registry so the documentation cannot drift.

use super::RULES;

/// The rule catalogue as Markdown (the content of `docs/rules.md`).
pub fn catalogue_markdown() -> String {
    let mut out = String::from(
        "# Rule catalogue\n\n\
         Generated from the rule registry (`core/src/rules/`); do not edit by hand. \
         A test fails when this file is stale; regenerate it with \
         `GPUWHY_BLESS=1 cargo test -p gpuwhy --lib rules::catalogue`.\n\n\
         | id | title | default severity |\n|---|---|---|\n",
    );
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
    }
    // Hand-written sections, each its own file next to the rules it explains.
    out.push_str(include_str!("cross_gpu.md"));
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
}

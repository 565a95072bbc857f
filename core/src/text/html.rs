//! Escaping report text for HTML. Everything a report says is data: device names, labels,
//! rule text, file names and error messages go through [`escape`] before they reach a page
//! (the viewer's, and the attributes of the page `gpuwhy view` writes).

use std::fmt::Write;

/// Escapes `s` for HTML text and for double- or single-quoted attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    push_escaped(&mut out, s);
    out
}

/// Appends `s` to `out`, escaped as by [`escape`].
pub fn push_escaped(out: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Control characters have no business in a page; show them as code points.
            c if c.is_control() && c != '\n' && c != '\t' => {
                let _ = write!(out, "&#x{:x};", c as u32);
            }
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_becomes_text() {
        assert_eq!(
            escape(r#"<img src=x onerror="a('b')">&"#),
            "&lt;img src=x onerror=&quot;a(&#39;b&#39;)&quot;&gt;&amp;"
        );
        assert_eq!(escape("</script><script>"), "&lt;/script&gt;&lt;script&gt;");
        assert_eq!(escape("a\u{0}b"), "a&#x0;b");
    }
}

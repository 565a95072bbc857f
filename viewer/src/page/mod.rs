//! HTML fragments of the page: the verdict and finding cards, tables, and the text
//! alternatives of the charts. Every string from the report is escaped here.

pub mod baseline;
pub mod numbers;
pub mod overview;
pub mod ranks;
pub mod tables;

use gpuwhy::text::html::push_escaped;

/// A small HTML builder that escapes text by default.
#[derive(Default)]
pub struct Html(String);

impl Html {
    /// An empty fragment.
    pub fn new() -> Self {
        Html(String::new())
    }

    /// Appends markup written in this crate (never report text).
    pub fn raw(&mut self, markup: &str) -> &mut Self {
        self.0.push_str(markup);
        self
    }

    /// Appends text, escaped.
    pub fn text(&mut self, s: &str) -> &mut Self {
        push_escaped(&mut self.0, s);
        self
    }

    /// Appends `<tag>text</tag>` with `tag` written in this crate and `text` escaped.
    pub fn elem(&mut self, tag: &str, text: &str) -> &mut Self {
        let name = tag.split_whitespace().next().unwrap_or(tag);
        self.0.push('<');
        self.0.push_str(tag);
        self.0.push('>');
        push_escaped(&mut self.0, text);
        self.0.push_str("</");
        self.0.push_str(name);
        self.0.push('>');
        self
    }

    /// The fragment.
    pub fn finish(self) -> String {
        self.0
    }
}

/// A table row of cells, each escaped; the first one as a row header.
pub(crate) fn row(h: &mut Html, cells: &[&str]) {
    h.raw("<tr>");
    for (i, c) in cells.iter().enumerate() {
        h.elem(if i == 0 { "th scope=\"row\"" } else { "td" }, c);
    }
    h.raw("</tr>");
}

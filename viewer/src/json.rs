//! The little JSON the page's JavaScript receives (layout facts, read-outs, why a file did
//! not open), written by hand: a serializer for three small types would cost the module
//! more than this.

use std::fmt::Write;

/// A JSON object being written.
pub struct Obj(String);

impl Default for Obj {
    fn default() -> Self {
        Self::new()
    }
}

impl Obj {
    /// `{`.
    pub fn new() -> Self {
        Obj(String::from("{"))
    }

    fn key(&mut self, k: &str) -> &mut String {
        if self.0.len() > 1 {
            self.0.push(',');
        }
        push_str(&mut self.0, k);
        self.0.push(':');
        &mut self.0
    }

    /// A string member.
    pub fn str(mut self, k: &str, v: &str) -> Self {
        push_str(self.key(k), v);
        self
    }

    /// A number member (`null` when not finite).
    pub fn num(mut self, k: &str, v: f64) -> Self {
        let out = self.key(k);
        if v.is_finite() {
            let _ = write!(out, "{v}");
        } else {
            out.push_str("null");
        }
        self
    }

    /// A `true`/`false` member.
    pub fn bool(mut self, k: &str, v: bool) -> Self {
        self.key(k).push_str(if v { "true" } else { "false" });
        self
    }

    /// A member already written as JSON.
    pub fn raw(mut self, k: &str, json: &str) -> Self {
        self.key(k).push_str(json);
        self
    }

    /// `}`: the object.
    pub fn end(mut self) -> String {
        self.0.push('}');
        self.0
    }
}

/// `[a,b,…]` of values already written as JSON.
pub fn array(items: impl IntoIterator<Item = String>) -> String {
    let mut out = String::from("[");
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&item);
    }
    out.push(']');
    out
}

/// Appends `s` as a JSON string: quoted, with quotes, backslashes and control characters
/// escaped.
pub fn push_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

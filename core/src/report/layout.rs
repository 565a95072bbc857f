//! How a report's JSON text is laid out: objects indented one member a line, as serde_json's
//! pretty printer does, but an array of numbers (a column, a packed column's runs) on one
//! line. The columns are nearly all of a report's bytes, and one number a line with its
//! indentation was most of each number's cost.

use std::io::{self, Write};

use serde_json::ser::Formatter;

/// What the formatter is inside of.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Frame {
    /// An object laid out one member a line; `true` once it has a member.
    Object(bool),
    /// An object inside a one-line array, itself on that line.
    InlineObject,
    /// An array before its first value: its layout is chosen by that value.
    Pending,
    /// An array of objects, one a line.
    Lines,
    /// An array of anything else, on one line.
    Inline,
}

/// serde_json formatter for the layout above.
#[derive(Debug, Default)]
pub(super) struct Layout {
    stack: Vec<Frame>,
}

impl Layout {
    fn depth(&self) -> usize {
        self.stack
            .iter()
            .filter(|f| matches!(f, Frame::Object(_) | Frame::Lines))
            .count()
    }

    fn newline<W: ?Sized + Write>(&self, w: &mut W) -> io::Result<()> {
        w.write_all(b"\n")?;
        for _ in 0..self.depth() {
            w.write_all(b"  ")?;
        }
        Ok(())
    }

    fn inline(&self) -> bool {
        self.stack
            .iter()
            .any(|f| matches!(f, Frame::Inline | Frame::InlineObject))
    }

    /// At the start of any value: an array waiting for its first value takes its layout.
    fn value<W: ?Sized + Write>(&mut self, w: &mut W, object: bool) -> io::Result<()> {
        if let Some(top @ Frame::Pending) = self.stack.last_mut() {
            if object {
                *top = Frame::Lines;
                return self.newline(w);
            }
            *top = Frame::Inline;
        }
        Ok(())
    }
}

macro_rules! scalars {
    ($($name:ident: $t:ty),*) => {$(
        fn $name<W: ?Sized + Write>(&mut self, w: &mut W, v: $t) -> io::Result<()> {
            self.value(w, false)?;
            serde_json::ser::CompactFormatter.$name(w, v)
        }
    )*};
}

impl Formatter for Layout {
    scalars!(write_bool: bool, write_i8: i8, write_i16: i16, write_i32: i32, write_i64: i64,
        write_i128: i128, write_u8: u8, write_u16: u16, write_u32: u32, write_u64: u64,
        write_u128: u128, write_f32: f32, write_f64: f64, write_number_str: &str);

    fn write_null<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.value(w, false)?;
        w.write_all(b"null")
    }

    fn begin_string<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.value(w, false)?;
        w.write_all(b"\"")
    }

    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.value(w, false)?;
        let frame = if self.inline() {
            Frame::Inline
        } else {
            Frame::Pending
        };
        self.stack.push(frame);
        w.write_all(b"[")
    }

    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        if self.stack.pop() == Some(Frame::Lines) {
            self.newline(w)?;
        }
        w.write_all(b"]")
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        match self.stack.last() {
            Some(Frame::Lines) if !first => {
                w.write_all(b",")?;
                self.newline(w)
            }
            _ if !first => w.write_all(b","),
            _ => Ok(()),
        }
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
        Ok(())
    }

    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.value(w, true)?;
        let frame = if self.inline() {
            Frame::InlineObject
        } else {
            Frame::Object(false)
        };
        self.stack.push(frame);
        w.write_all(b"{")
    }

    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        if self.stack.pop() == Some(Frame::Object(true)) {
            self.newline(w)?;
        }
        w.write_all(b"}")
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if !first {
            w.write_all(b",")?;
        }
        match self.stack.last_mut() {
            Some(Frame::Object(has)) => {
                *has = true;
                self.newline(w)
            }
            _ => Ok(()),
        }
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        match self.stack.last() {
            Some(Frame::Object(_)) => w.write_all(b": "),
            _ => w.write_all(b":"),
        }
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
        Ok(())
    }
}

/// `value` as JSON text in this layout.
pub(super) fn to_vec<T: serde::Serialize + ?Sized>(value: &T) -> serde_json::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(1 << 16);
    let mut ser = serde_json::Serializer::with_formatter(&mut out, Layout::default());
    value.serialize(&mut ser)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn objects_one_member_a_line_and_arrays_of_numbers_on_one() {
        let v = json!({"a": [1, null, [0, 5]], "b": [{"c": "x", "d": []}, {}], "e": {}});
        let text = String::from_utf8(super::to_vec(&v).expect("writes")).expect("utf-8");
        assert_eq!(
            text,
            "{\n  \"a\": [1,null,[0,5]],\n  \"b\": [\n    {\n      \"c\": \"x\",\n      \"d\": []\n    },\n    {}\n  ],\n  \"e\": {}\n}"
        );
        let back: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        assert_eq!(back, v);
    }
}

//! Names and event kinds of the marker state.

use super::*;

#[test]
fn names_are_cut_on_a_character_boundary() {
    assert_eq!(truncate("ééé", 3), "é");
    assert_eq!(truncate("eval", 64), "eval");
}

#[test]
fn event_kinds_are_interned_and_bounded() {
    let m = Arc::new_cyclic(|me| {
        Markers::new(
            me.clone(),
            &Clock::real(1.0),
            Folder::new(10, MAX_LANES + 1, 1.0),
            Vec::new(),
        )
    });
    assert_eq!(m.kind("eval"), 0);
    assert_eq!(m.kind("checkpoint"), 1);
    assert_eq!(m.kind("eval"), 0);
    assert_eq!(m.kind(""), 2);
    for i in 0..100 {
        m.kind(&format!("k{i}"));
    }
    assert_eq!(m.kind("one too many"), MAX_EVENT_KINDS as u16);
    assert_eq!(m.kind_name(MAX_EVENT_KINDS as u16), "other");
    assert_eq!(m.kind_name(2), "event");
}

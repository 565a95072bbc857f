//! Work another part of gpuwhy hands to the sampler thread, so it needs no thread of its own.

use crate::report::journal::JournalLine;
use crate::report::Event;

/// Called by the sampler thread once per tick and before each journal flush.
///
/// The step markers ([`crate::session`]) use it to fold the records that training threads
/// publish into their step log off the training thread, and to journal steps with the
/// samples. Implementations must be quick and must not block on the threads they serve.
pub trait SamplerHook: Send + Sync {
    /// Once per tick, on the sampler thread: append events for the recording (they go to
    /// the journal too).
    fn tick(&self, events: &mut Vec<Event>);
    /// Just before each journal flush (and at the last one, when the recorder stops):
    /// append lines for the journal.
    fn journal(&self, lines: &mut Vec<JournalLine>);
    /// Once per tick, after [`SamplerHook::tick`]: append times around which the recording
    /// should keep every stream's samples at full resolution (slow steps); none by default.
    fn windows(&self, _times: &mut Vec<f64>) {}
    /// Whether the last [`SamplerHook::tick`] had nothing to do, so the sampler may sleep
    /// through ticks on which nothing else is due, up to a second of them, before the next
    /// call. False by default: called every tick.
    fn quiet(&self) -> bool {
        false
    }
}

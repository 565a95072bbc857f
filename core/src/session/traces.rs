//! Profiler traces a session was given ([`super::Session::add_trace`]), read at finish.

use std::path::PathBuf;

use crate::recording::Recording;
use crate::report::Event;
use crate::trace::{read_rank, Choices, ReadOptions, TraceSummary};

/// Reads every trace in `paths` (each one a rank's file, in order), lists them in
/// `rec.run.traces` and returns their summary; one that cannot be read becomes a
/// `trace_unreadable` event saying why. None when no trace could be read.
pub(super) fn read(paths: &[PathBuf], rec: &mut Recording) -> Option<TraceSummary> {
    let mut ranks = Vec::new();
    for (i, path) in paths.iter().enumerate() {
        let shown = path.display().to_string();
        rec.run.traces.push(shown.clone());
        let opts = ReadOptions {
            choices: Choices::default(),
            label: shown.clone(),
            position: u32::try_from(i).unwrap_or(u32::MAX),
        };
        let read = std::fs::File::open(path)
            .map_err(|e| e.to_string())
            .and_then(|f| read_rank(f, &opts).map_err(|e| e.to_string()));
        match read {
            Ok(rank) => ranks.push(rank),
            Err(why) => rec.push_event(Event {
                t_s: rec.run.duration_s,
                device: None,
                kind: "trace_unreadable".into(),
                code: None,
                detail: format!(
                    "{shown}: {why}; the diagnosis is from the samples and steps alone"
                ),
            }),
        }
    }
    (!ranks.is_empty()).then(|| TraceSummary::from_ranks(ranks, Choices::default()))
}

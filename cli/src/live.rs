//! The live status lines printed while recording (like `nvidia-smi dmon`), only on a terminal.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use gpuwhy::collect::Recorder;

/// Prints one line per GPU at most once a second when stderr is a terminal.
pub struct Live {
    enabled: bool,
    last: Option<Instant>,
    started: Instant,
}

impl Live {
    /// A status printer; quiet when stderr is not a terminal or `quiet` is set.
    pub fn new(quiet: bool) -> Self {
        Live {
            enabled: !quiet && std::io::stderr().is_terminal(),
            last: None,
            started: Instant::now(),
        }
    }

    /// Prints the latest values if a second has passed.
    pub fn tick(&mut self, rec: &Recorder) {
        if !self.enabled
            || self
                .last
                .is_some_and(|l| l.elapsed() < Duration::from_secs(1))
        {
            return;
        }
        self.last = Some(Instant::now());
        let t = self.started.elapsed().as_secs_f64();
        let f = |v: Option<f32>, unit: &str| {
            v.map_or_else(|| "-".to_string(), |x| format!("{x:.0}{unit}"))
        };
        let mut err = std::io::stderr().lock();
        for g in rec.live() {
            let line = if g.lost {
                format!("{t:7.1}s gpu{} LOST", g.index)
            } else {
                format!(
                    "{t:7.1}s gpu{} sm {:>4} pwr {:>5} temp {:>4} pclk {:>8} fb {:>9}",
                    g.index,
                    f(g.util, "%"),
                    f(g.power_w, "W"),
                    f(g.temp_c, "C"),
                    f(g.sm_clock_mhz, "MHz"),
                    f(g.mem_used_mib, "MiB")
                )
            };
            let _ = writeln!(err, "{line}");
        }
    }
}

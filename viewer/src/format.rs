//! Numbers and times as a person reads them on the page and on chart axes.

/// Seconds since the start as a clock-like label whose precision suits a visible `span`
/// (seconds): `1:02:03` for hours, `2:05` for minutes, `12.5 s` for seconds.
pub fn time_label(t: f64, span: f64) -> String {
    if !t.is_finite() {
        return "—".into();
    }
    let neg = if t < 0.0 { "-" } else { "" };
    let a = t.abs();
    if span >= 7200.0 || a >= 36_000.0 {
        let m = (a / 60.0).round() as u64;
        format!("{neg}{}:{:02}", m / 60, m % 60)
    } else if span >= 120.0 {
        let s = a.round() as u64;
        if s >= 3600 {
            format!("{neg}{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
        } else {
            format!("{neg}{}:{:02}", s / 60, s % 60)
        }
    } else if span >= 5.0 {
        format!("{neg}{} s", trim(format!("{a:.1}")))
    } else {
        format!("{neg}{} s", trim(format!("{a:.3}")))
    }
}

/// A duration for text: `850 ms`, `12.3 s`, `4 min 10 s`, `3 h 20 min`.
pub fn duration(s: f64) -> String {
    if !s.is_finite() {
        return "—".into();
    }
    if s < 1.0 {
        format!("{} ms", sig(s * 1e3, 3))
    } else if s < 120.0 {
        format!("{} s", sig(s, 3))
    } else if s < 7200.0 {
        let m = (s / 60.0).floor();
        format!("{m:.0} min {:.0} s", s - m * 60.0)
    } else {
        let h = (s / 3600.0).floor();
        format!("{h:.0} h {:.0} min", (s - h * 3600.0) / 60.0)
    }
}

/// A compact axis number: `0`, `2.5`, `850`, `12k`, `1.5M`.
pub fn axis_number(v: f64) -> String {
    let a = v.abs();
    if a >= 1e6 {
        format!("{}M", trim(format!("{:.1}", v / 1e6)))
    } else if a >= 1e4 {
        format!("{}k", trim(format!("{:.1}", v / 1e3)))
    } else if a >= 100.0 || a == 0.0 {
        format!("{v:.0}")
    } else {
        sig(v, 2)
    }
}

/// `v` with about `digits` significant digits, trailing zeros removed; `—` when not finite.
pub fn sig(v: f64, digits: usize) -> String {
    if !v.is_finite() {
        return "—".into();
    }
    if v == 0.0 {
        return "0".into();
    }
    let mag = v.abs().log10().floor() as i64;
    let decimals = (digits as i64 - 1 - mag).clamp(0, 6) as usize;
    trim(format!("{v:.decimals$}"))
}

/// A share 0–1 as a percentage: `40%`, `3.5%`.
pub fn percent(share: f64) -> String {
    if !share.is_finite() {
        return "—".into();
    }
    // A tiny negative share rounds to `-0`, which says nothing a `0` does not. (Only that:
    // `replace("-0", "0")` also turned `-0.5` into `0.5`.)
    let mut s = sig(share * 100.0, 2);
    if s == "-0" {
        s.remove(0);
    }
    s.push('%');
    s
}

/// A byte count: `3.2 MB`, `512 B`.
pub fn bytes(b: f64) -> String {
    if !b.is_finite() {
        return "—".into();
    }
    const UNITS: [&str; 5] = ["B", "kB", "MB", "GB", "TB"];
    let mut v = b;
    let mut u = 0;
    while v.abs() >= 1000.0 && u < UNITS.len() - 1 {
        v /= 1000.0;
        u += 1;
    }
    format!("{} {}", sig(v, 3), UNITS[u])
}

fn trim(s: String) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Where `needle` last occurs in `hay`. A byte loop, not `str::rfind`, whose backward
/// substring search the page's WebAssembly would hold for these two short searches only.
pub(crate) fn rfind_bytes(hay: &str, needle: &str) -> Option<usize> {
    let n = needle.as_bytes();
    hay.as_bytes().windows(n.len()).rposition(|w| w == n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels() {
        assert_eq!(time_label(3725.0, 86_400.0), "1:02");
        assert_eq!(time_label(125.0, 600.0), "2:05");
        assert_eq!(time_label(3725.0, 600.0), "1:02:05");
        assert_eq!(time_label(12.5, 60.0), "12.5 s");
        assert_eq!(axis_number(81_920.0), "81.9k");
        assert_eq!(axis_number(0.25), "0.25");
        assert_eq!(sig(0.8, 2), "0.8");
        assert_eq!(percent(0.4), "40%");
        assert_eq!(percent(-1e-9), "0%");
        assert_eq!(percent(-0.005), "-0.5%");
        assert_eq!(rfind_bytes("<svg></svg></svg>", "</svg>"), Some(11));
        assert_eq!(rfind_bytes("ab", "abc"), None);
        assert_eq!(duration(0.85), "850 ms");
        assert_eq!(bytes(3_182_432.0), "3.18 MB");
    }
}

//! Parsing durations such as `100ms`, `2s`, `1.5m`, `1h` (a bare number is seconds).

/// Seconds in `text`, or a message saying what is accepted.
pub fn parse_seconds(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let (num, mult) = if let Some(n) = t.strip_suffix("ms") {
        (n, 0.001)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 60.0)
    } else if let Some(n) = t.strip_suffix('h') {
        (n, 3600.0)
    } else {
        (t, 1.0)
    };
    match num.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v * mult),
        _ => Err(format!(
            "invalid duration '{text}': use a number with ms, s, m or h (e.g. 100ms, 30s, 5m)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        assert_eq!(parse_seconds("100ms"), Ok(0.1));
        assert_eq!(parse_seconds("2s"), Ok(2.0));
        assert_eq!(parse_seconds("1.5m"), Ok(90.0));
        assert_eq!(parse_seconds("1h"), Ok(3600.0));
        assert_eq!(parse_seconds("7"), Ok(7.0));
        assert!(parse_seconds("-1s").is_err());
        assert!(parse_seconds("soon").is_err());
    }
}

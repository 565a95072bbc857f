use super::*;

const KEY: NoiseKey = NoiseKey {
    seed: 7,
    device: 0,
    metric: Metric::UtilGpu,
};

fn parse(json: &str) -> Pattern {
    serde_json::from_str(json).expect("valid pattern")
}

fn eval(p: &Pattern, t: f64) -> f64 {
    p.eval(t, KEY, |_| 50.0)
}

#[test]
fn a_number_is_a_constant() {
    assert_eq!(parse("42"), Pattern::constant(42.0));
    assert_eq!(eval(&parse("-3.5"), 100.0), -3.5);
}

#[test]
fn square_spends_duty_of_each_period_high() {
    let p = parse(r#"{"square": {"period_s": 1.0, "duty": 0.55, "high": 98, "low": 2}}"#);
    let samples: Vec<f64> = (0..1000)
        .map(|i| eval(&p, (i as f64 + 0.5) * 0.01))
        .collect();
    let high = samples.iter().filter(|v| **v == 98.0).count();
    assert_eq!(high, 550, "55% of 10 periods sampled at 10 ms");
    assert_eq!(eval(&p, 0.0), 98.0);
    assert_eq!(eval(&p, 0.56), 2.0);
    assert_eq!(eval(&p, 3.2), 98.0);
}

#[test]
fn square_phase_shifts_the_start_of_the_high_part() {
    let p = parse(
        r#"{"square": {"period_s": 1.0, "duty": 0.45, "high": 1, "low": 0, "phase_s": 0.55}}"#,
    );
    assert_eq!(eval(&p, 0.5), 0.0);
    assert_eq!(eval(&p, 0.6), 1.0);
    assert_eq!(eval(&p, 0.99), 1.0);
    assert_eq!(eval(&p, 1.05), 0.0);
    assert_eq!(eval(&p, 1.7), 1.0, "it repeats every period");
    // Before the phase the wave continues backwards: [-0.45, 0) was high.
    assert_eq!(eval(&p, 0.1), 0.0);
    assert_eq!(eval(&p, -0.2), 1.0);
}

#[test]
fn ramp_moves_linearly_then_holds() {
    let p = parse(r#"{"ramp": {"from": 40, "to": 80, "over_s": 10, "start_s": 5}}"#);
    assert_eq!(eval(&p, 0.0), 40.0);
    assert_eq!(eval(&p, 10.0), 60.0);
    assert_eq!(eval(&p, 99.0), 80.0);
}

#[test]
fn steps_hold_the_last_value_reached() {
    let p = parse(r#"{"steps": [[2, 10], [5, 20], [5, 30]]}"#);
    assert_eq!(eval(&p, 0.0), 10.0, "before the first step its value holds");
    assert_eq!(eval(&p, 4.9), 10.0);
    assert_eq!(eval(&p, 5.0), 30.0, "the later of two equal times wins");
}

#[test]
fn follow_maps_the_source_range_linearly() {
    let p = parse(r#"{"follow": "util_gpu", "scale": [90, 650]}"#);
    assert_eq!(p.eval(0.0, KEY, |_| 0.0), 90.0);
    assert_eq!(p.eval(0.0, KEY, |_| 100.0), 650.0);
    assert_eq!(p.eval(0.0, KEY, |_| 50.0), 370.0);
    let copy = parse(r#"{"follow": "sm_clock_mhz"}"#);
    assert_eq!(
        copy.eval(0.0, KEY, |m| if m == Metric::SmClockMhz {
            1234.0
        } else {
            0.0
        }),
        1234.0
    );
    let kib = parse(r#"{"follow": "pcie_rx_kbs", "from": [0, 1024], "scale": [0, 1]}"#);
    assert_eq!(kib.eval(0.0, KEY, |_| 2048.0), 2.0);
}

#[test]
fn noise_stays_within_its_amplitude_and_repeats() {
    let p = parse(r#"{"constant": 50, "noise": 3}"#);
    let mut distinct = std::collections::BTreeSet::new();
    for i in 0..2000 {
        let t = i as f64 * 0.05;
        let v = eval(&p, t);
        assert!((47.0..=53.0).contains(&v), "{v} at {t}");
        assert_eq!(v, eval(&p, t), "deterministic");
        distinct.insert(v.to_bits());
    }
    assert!(
        distinct.len() > 500,
        "noise varies: {} distinct values",
        distinct.len()
    );
    let other_device = NoiseKey { device: 1, ..KEY };
    assert_ne!(
        p.eval(1.0, KEY, |_| 0.0),
        p.eval(1.0, other_device, |_| 0.0)
    );
}

#[test]
fn noise_period_holds_a_value() {
    let p = parse(r#"{"constant": 0, "noise": {"amplitude": 1, "period_s": 2}}"#);
    assert_eq!(eval(&p, 0.1), eval(&p, 1.9));
    assert_ne!(eval(&p, 1.9), eval(&p, 2.1));
}

#[test]
fn min_and_max_clamp_after_noise() {
    let p = parse(r#"{"constant": 99, "noise": 5, "max": 100, "min": 97}"#);
    for i in 0..500 {
        let v = eval(&p, i as f64 * 0.1);
        assert!((97.0..=100.0).contains(&v), "{v}");
    }
}

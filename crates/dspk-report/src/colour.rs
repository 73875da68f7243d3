//! The report's colours: the classes of channels, the heat maps' diverging scale.

/// A good channel's colour (green).
pub const GOOD: [u8; 3] = [0x2f, 0x9e, 0x44];
/// A dead channel's colour (near black).
pub const DEAD: [u8; 3] = [0x21, 0x21, 0x21];
/// A noisy channel's colour (orange).
pub const NOISY: [u8; 3] = [0xf0, 0x8c, 0x00];

/// The colour of a channel class (`good`, `dead`, `noisy`).
pub fn of_class(class: &str) -> [u8; 3] {
    match class {
        "dead" => DEAD,
        "noisy" => NOISY,
        _ => GOOD,
    }
}

/// `#rrggbb`.
pub fn hex(c: [u8; 3]) -> String {
    format!("#{:02x}{:02x}{:02x}", c[0], c[1], c[2])
}

/// The ends and middle of the heat maps' scale: blue (low), near white, red (high), as
/// ColorBrewer's RdBu runs.
const LOW: [f64; 3] = [33.0, 102.0, 172.0];
const MID: [f64; 3] = [247.0, 247.0, 247.0];
const HIGH: [f64; 3] = [178.0, 24.0, 43.0];

/// The heat maps' 256 colours, low to high.
pub fn diverging() -> Vec<[u8; 3]> {
    (0..256)
        .map(|i| {
            let t = f64::from(i) / 255.0;
            let (a, b, u) = if t < 0.5 {
                (LOW, MID, t * 2.0)
            } else {
                (MID, HIGH, (t - 0.5) * 2.0)
            };
            let mix = |k: usize| (a[k] + (b[k] - a[k]) * u).round() as u8;
            [mix(0), mix(1), mix(2)]
        })
        .collect()
}

/// Anchors of the scale a statistic is coloured by (dark blue, teal, green, yellow: as
/// matplotlib's viridis runs), evenly spaced.
const SEQUENTIAL: [[f64; 3]; 5] = [
    [68.0, 1.0, 84.0],
    [59.0, 82.0, 139.0],
    [33.0, 145.0, 140.0],
    [94.0, 201.0, 98.0],
    [253.0, 231.0, 37.0],
];

/// The colour of `t` (0 to 1, clamped; NaN: grey) on the sequential scale.
pub fn sequential(t: f64) -> [u8; 3] {
    if !t.is_finite() {
        return [0x99, 0x99, 0x99];
    }
    let x = t.clamp(0.0, 1.0) * (SEQUENTIAL.len() - 1) as f64;
    let i = (x.floor() as usize).min(SEQUENTIAL.len() - 2);
    let u = x - i as f64;
    let (a, b) = (SEQUENTIAL[i], SEQUENTIAL[i + 1]);
    let mix = |k: usize| (a[k] + (b[k] - a[k]) * u).round() as u8;
    [mix(0), mix(1), mix(2)]
}

/// The palette index of `value` on a scale from `low` (0) to `high` (255), clamped; NaN and an
/// empty range map to the middle.
pub fn index(value: f32, low: f64, high: f64) -> u8 {
    let span = high - low;
    let t = (f64::from(value) - low) / span;
    if !(t.is_finite()) {
        return 128;
    }
    (t.clamp(0.0, 1.0) * 255.0).round() as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scale_runs_from_blue_through_white_to_red() {
        let p = diverging();
        assert_eq!(p.len(), 256);
        assert_eq!(p[0], [33, 102, 172]);
        assert_eq!(p[255], [178, 24, 43]);
        assert!(p[127].iter().all(|&c| c > 240) && p[128].iter().all(|&c| c > 240));
        assert_eq!(index(-10.0, -10.0, 10.0), 0);
        assert_eq!(index(10.0, -10.0, 10.0), 255);
        assert_eq!(index(50.0, -10.0, 10.0), 255);
        assert_eq!(index(0.0, -10.0, 10.0), 128);
        assert_eq!(index(f32::NAN, -10.0, 10.0), 128);
        assert_eq!(index(1.0, 1.0, 1.0), 128);
        assert_eq!(hex(NOISY), "#f08c00");
        assert_eq!(sequential(0.0), [68, 1, 84]);
        assert_eq!(sequential(1.0), [253, 231, 37]);
        assert_eq!(sequential(0.5), [33, 145, 140]);
        assert_eq!(sequential(f64::NAN), [0x99, 0x99, 0x99]);
    }
}

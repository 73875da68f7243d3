//! Zeros, poles and gain: scipy's analog Butterworth prototype, its band transforms, the bilinear
//! transform and the conversion to second-order sections with scipy's `'nearest'` pairing.
//!
//! Each step follows the algorithm of `scipy/signal/_filter_design.py` (`buttap`, `lp2lp_zpk`,
//! `lp2hp_zpk`, `lp2bp_zpk`, `lp2bs_zpk`, `bilinear_zpk`, `_cplxreal`, `zpk2sos`) so that the
//! sections come out in scipy's order with scipy's pairing, not merely as an equivalent filter.

use super::complex::C64;

/// A filter as its zeros, poles and gain.
#[derive(Debug, Clone)]
pub(crate) struct Zpk {
    pub zeros: Vec<C64>,
    pub poles: Vec<C64>,
    pub gain: f64,
}

impl Zpk {
    /// `buttap(order)`: no zeros, the poles `-e^{iπm/(2N)}` for `m = -N+1, -N+3, …, N-1` (the
    /// middle one exactly -1 for an odd order), gain 1.
    pub fn butterworth_prototype(order: u32) -> Zpk {
        let n = f64::from(order);
        let poles = (0..order)
            .map(|i| {
                let m = -n + 1.0 + 2.0 * f64::from(i);
                -C64::cis(std::f64::consts::PI * m / (2.0 * n))
            })
            .collect();
        Zpk {
            zeros: Vec::new(),
            poles,
            gain: 1.0,
        }
    }

    /// Poles minus zeros: the zeros at infinity.
    fn degree(&self) -> usize {
        self.poles.len().saturating_sub(self.zeros.len())
    }

    /// `lp2lp_zpk`: scale every point by `wo`.
    pub fn to_lowpass(&self, wo: f64) -> Zpk {
        Zpk {
            zeros: self.zeros.iter().map(|z| z.scale(wo)).collect(),
            poles: self.poles.iter().map(|p| p.scale(wo)).collect(),
            gain: self.gain * wo.powf(self.degree() as f64),
        }
    }

    /// `lp2hp_zpk`: invert about the unit circle and scale by `wo`; zeros at infinity move to 0.
    pub fn to_highpass(&self, wo: f64) -> Zpk {
        let w = C64::real(wo);
        let mut zeros: Vec<C64> = self.zeros.iter().map(|&z| w / z).collect();
        zeros.extend(std::iter::repeat_n(C64::ZERO, self.degree()));
        Zpk {
            zeros,
            poles: self.poles.iter().map(|&p| w / p).collect(),
            gain: self.gain * self.inversion_gain(),
        }
    }

    /// `lp2bp_zpk`: each point split into two about `±wo`; `degree` zeros at the origin.
    pub fn to_bandpass(&self, wo: f64, bw: f64) -> Zpk {
        let split = |points: &[C64]| -> Vec<C64> {
            let scaled: Vec<C64> = points
                .iter()
                .map(|p| p.scale(bw) / C64::real(2.0))
                .collect();
            shift_pairs(&scaled, wo)
        };
        let mut zeros = split(&self.zeros);
        zeros.extend(std::iter::repeat_n(C64::ZERO, self.degree()));
        Zpk {
            zeros,
            poles: split(&self.poles),
            gain: self.gain * bw.powf(self.degree() as f64),
        }
    }

    /// `lp2bs_zpk`: invert to a high-pass of width `bw`, split about `±wo`; zeros at infinity
    /// move to `±i·wo`, the centre of the stop band.
    pub fn to_bandstop(&self, wo: f64, bw: f64) -> Zpk {
        let half = C64::real(bw / 2.0);
        let split = |points: &[C64]| -> Vec<C64> {
            let inverted: Vec<C64> = points.iter().map(|&p| half / p).collect();
            shift_pairs(&inverted, wo)
        };
        let mut zeros = split(&self.zeros);
        zeros.extend(std::iter::repeat_n(C64::new(0.0, wo), self.degree()));
        zeros.extend(std::iter::repeat_n(C64::new(0.0, -wo), self.degree()));
        Zpk {
            zeros,
            poles: split(&self.poles),
            gain: self.gain * self.inversion_gain(),
        }
    }

    /// `real(prod(-z) / prod(-p))`: the gain that keeps the pass band's level when every point
    /// is inverted.
    fn inversion_gain(&self) -> f64 {
        let neg = |points: &[C64]| points.iter().map(|&p| -p).collect::<Vec<_>>();
        (C64::product(&neg(&self.zeros)) / C64::product(&neg(&self.poles))).re
    }

    /// `bilinear_zpk` at `fs`: `z = (2fs + s) / (2fs - s)`; zeros at infinity move to -1
    /// (Nyquist).
    pub fn bilinear(&self, fs: f64) -> Zpk {
        let fs2 = C64::real(2.0 * fs);
        let map = |s: &C64| (fs2 + *s) / (fs2 - *s);
        let mut zeros: Vec<C64> = self.zeros.iter().map(map).collect();
        zeros.extend(std::iter::repeat_n(C64::real(-1.0), self.degree()));
        let num: Vec<C64> = self.zeros.iter().map(|&z| fs2 - z).collect();
        let den: Vec<C64> = self.poles.iter().map(|&p| fs2 - p).collect();
        Zpk {
            zeros,
            poles: self.poles.iter().map(map).collect(),
            gain: self.gain * (C64::product(&num) / C64::product(&den)).re,
        }
    }
}

/// `concat(p + sqrt(p² - wo²), p - sqrt(p² - wo²))`.
fn shift_pairs(points: &[C64], wo: f64) -> Vec<C64> {
    let w2 = C64::real(wo * wo);
    let roots: Vec<C64> = points.iter().map(|&p| (p * p - w2).sqrt()).collect();
    let plus = points.iter().zip(&roots).map(|(&p, &r)| p + r);
    let minus = points.iter().zip(&roots).map(|(&p, &r)| p - r);
    plus.chain(minus).collect()
}

/// Why a set of points could not become second-order sections (never for a Butterworth design;
/// kept as a value so that a future design cannot make the conversion panic).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PairingError(pub &'static str);

/// `_cplxreal` followed by `concatenate`: the complex points as one of each conjugate pair
/// (positive imaginary part, the pair averaged), sorted by real part then by imaginary
/// magnitude, followed by the real points (imaginary part set to exactly 0) sorted by value.
/// Points whose imaginary part is within `100·eps·|z|` of zero count as real.
pub(crate) fn complex_then_real(points: &[C64]) -> Result<Vec<C64>, PairingError> {
    let tol = 100.0 * f64::EPSILON;
    let mut z = points.to_vec();
    // numpy's lexsort is stable; so is sort_by.
    z.sort_by(|a, b| {
        a.re.total_cmp(&b.re)
            .then_with(|| a.im.abs().total_cmp(&b.im.abs()))
    });
    let is_real = |p: &C64| p.im.abs() <= tol * p.abs();
    let reals: Vec<C64> = z
        .iter()
        .filter(|p| is_real(p))
        .map(|p| C64::real(p.re))
        .collect();
    let mut upper: Vec<C64> = z
        .iter()
        .filter(|p| !is_real(p) && p.im > 0.0)
        .copied()
        .collect();
    let mut lower: Vec<C64> = z
        .iter()
        .filter(|p| !is_real(p) && p.im < 0.0)
        .copied()
        .collect();
    if upper.len() != lower.len() {
        return Err(PairingError("a complex point has no conjugate"));
    }
    // Within each run of (nearly) equal real parts, order by imaginary magnitude.
    let mut start = 0;
    while start < upper.len() {
        let mut stop = start;
        while stop + 1 < upper.len()
            && upper[stop + 1].re - upper[stop].re <= tol * upper[stop].abs()
        {
            stop += 1;
        }
        if stop > start {
            for run in [&mut upper[start..=stop], &mut lower[start..=stop]] {
                run.sort_by(|a, b| a.im.abs().total_cmp(&b.im.abs()));
            }
        }
        start = stop + 1;
    }
    let mut out = Vec::with_capacity(upper.len() + reals.len());
    for (&u, &l) in upper.iter().zip(&lower) {
        if (u - l.conj()).abs() > tol * l.abs() {
            return Err(PairingError("a complex point has no conjugate"));
        }
        out.push((u + l.conj()).scale(0.5));
    }
    out.extend(reals);
    Ok(out)
}

/// Indices of `from` by increasing distance to `to` (stable, as NumPy's sort of a short array).
fn by_distance(from: &[C64], to: C64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..from.len()).collect();
    order.sort_by(|&a, &b| (from[a] - to).abs().total_cmp(&(from[b] - to).abs()));
    order
}

/// Which kind of point `nearest` may return.
#[derive(Clone, Copy)]
enum Kind {
    Real,
    Complex,
    Any,
}

/// `_nearest_real_complex_idx`: the index of the point of `from` nearest to `to` of that kind.
fn nearest(from: &[C64], to: C64, kind: Kind) -> Result<usize, PairingError> {
    by_distance(from, to)
        .into_iter()
        .find(|&i| match kind {
            Kind::Real => from[i].is_real(),
            Kind::Complex => !from[i].is_real(),
            Kind::Any => true,
        })
        .ok_or(PairingError("no zero of the kind a pole needs is left"))
}

/// The index of the pole closest to the unit circle (the first such, as `argmin`).
fn worst(poles: &[C64]) -> usize {
    let mut best = 0;
    for (i, p) in poles.iter().enumerate() {
        if (1.0 - p.abs()).abs() < (1.0 - poles[best].abs()).abs() {
            best = i;
        }
    }
    best
}

/// `numpy.poly` of one or two roots, real part (the roots here are real or a conjugate pair).
fn poly(roots: &[C64]) -> Vec<f64> {
    let mut coeffs = vec![C64::ONE];
    for &r in roots {
        let mut next = vec![C64::ZERO; coeffs.len() + 1];
        for (i, &c) in coeffs.iter().enumerate() {
            next[i] = next[i] + c;
            next[i + 1] = next[i + 1] + c * -r;
        }
        coeffs = next;
    }
    coeffs.iter().map(|c| c.re).collect()
}

/// `_single_zpksos`: one section `[b0, b1, b2, 1, a1, a2]`, right-aligned as scipy places a
/// shorter polynomial.
fn section(zeros: &[C64], poles: &[C64]) -> [f64; 6] {
    let mut s = [0.0; 6];
    let b = poly(zeros);
    let a = poly(poles);
    s[3 - b.len()..3].copy_from_slice(&b);
    s[6 - a.len()..6].copy_from_slice(&a);
    s
}

/// `zpk2sos(z, p, k, pairing='nearest')` for a digital filter with as many zeros as poles.
pub(crate) fn to_sections(zpk: &Zpk) -> Result<Vec<[f64; 6]>, PairingError> {
    let (mut z, mut p) = (zpk.zeros.clone(), zpk.poles.clone());
    if z.is_empty() && p.is_empty() {
        return Ok(vec![[zpk.gain, 0.0, 0.0, 1.0, 0.0, 0.0]]);
    }
    let n = z.len().max(p.len());
    p.resize(n, C64::ZERO);
    z.resize(n, C64::ZERO);
    let n_sections = n.div_ceil(2);
    if n % 2 == 1 {
        p.push(C64::ZERO);
        z.push(C64::ZERO);
    }
    let mut z = complex_then_real(&z)?;
    let mut p = complex_then_real(&p)?;
    let mut sos = vec![[0.0; 6]; n_sections];
    // Built from the last section back, so that the poles nearest the unit circle come last.
    for si in (0..n_sections).rev() {
        let p1 = p.remove(worst(&p));
        let reals_left = p.iter().filter(|q| q.is_real()).count();
        if p1.is_real() && reals_left == 0 {
            // The last real pole: pair it with the nearest real zero, as a first-order section.
            let z1 = z.remove(nearest(&z, p1, Kind::Real)?);
            sos[si] = section(&[z1, C64::ZERO], &[p1, C64::ZERO]);
        } else if p.len() + 1 == z.len()
            && !p1.is_real()
            && reals_left == 1
            && z.iter().filter(|q| q.is_real()).count() == 1
        {
            // One real pole and one real zero left: this complex pole must take complex zeros.
            let z1 = z.remove(nearest(&z, p1, Kind::Complex)?);
            sos[si] = section(&[z1, z1.conj()], &[p1, p1.conj()]);
        } else {
            let p2 = if p1.is_real() {
                let reals: Vec<usize> = (0..p.len()).filter(|&i| p[i].is_real()).collect();
                let real_poles: Vec<C64> = reals.iter().map(|&i| p[i]).collect();
                p.remove(reals[worst(&real_poles)])
            } else {
                p1.conj()
            };
            if z.is_empty() {
                sos[si] = section(&[], &[p1, p2]);
            } else {
                let z1 = z.remove(nearest(&z, p1, Kind::Any)?);
                if !z1.is_real() {
                    sos[si] = section(&[z1, z1.conj()], &[p1, p2]);
                } else if z.is_empty() {
                    sos[si] = section(&[z1], &[p1, p2]);
                } else {
                    let z2 = z.remove(nearest(&z, p1, Kind::Real)?);
                    sos[si] = section(&[z1, z2], &[p1, p2]);
                }
            }
        }
    }
    if !p.is_empty() || !z.is_empty() {
        return Err(PairingError("poles or zeros were left unpaired"));
    }
    for c in &mut sos[0][..3] {
        *c *= zpk.gain;
    }
    Ok(sos)
}

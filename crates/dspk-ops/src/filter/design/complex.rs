//! The few complex-number operations the design needs, in `f64` (no dependency for six functions).

use std::ops::{Add, Div, Mul, Neg, Sub};

/// A complex number in `f64`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct C64 {
    pub re: f64,
    pub im: f64,
}

impl C64 {
    pub const ZERO: C64 = C64 { re: 0.0, im: 0.0 };
    pub const ONE: C64 = C64 { re: 1.0, im: 0.0 };

    pub const fn new(re: f64, im: f64) -> Self {
        C64 { re, im }
    }

    pub const fn real(re: f64) -> Self {
        C64 { re, im: 0.0 }
    }

    /// `e^{iθ}`.
    pub fn cis(theta: f64) -> Self {
        C64::new(theta.cos(), theta.sin())
    }

    pub fn conj(self) -> Self {
        C64::new(self.re, -self.im)
    }

    /// The modulus as NumPy's SIMD loop computes it on x86-64 with FMA (`big·√(1 + r²)`,
    /// `r = small / big`, the `1 + r²` fused), not libm's `hypot`: `zpk2sos` breaks ties between
    /// equal pole magnitudes (bands symmetric about a quarter of the rate) on these roundings.
    pub fn abs(self) -> f64 {
        let (a, b) = (self.re.abs(), self.im.abs());
        let (big, small) = if a >= b { (a, b) } else { (b, a) };
        if big == 0.0 || big.is_infinite() || small.is_nan() {
            return if small.is_nan() && !big.is_infinite() {
                f64::NAN
            } else {
                big
            };
        }
        let r = small / big;
        big * r.mul_add(r, 1.0).sqrt()
    }

    /// Real in NumPy's `isreal` sense: the imaginary part is exactly zero.
    pub fn is_real(self) -> bool {
        self.im == 0.0
    }

    pub fn scale(self, by: f64) -> Self {
        C64::new(self.re * by, self.im * by)
    }

    /// The principal square root (branch cut on the negative real axis, the sign of a zero
    /// imaginary part choosing the side, as C99's `csqrt`).
    pub fn sqrt(self) -> Self {
        if self.re == 0.0 && self.im == 0.0 {
            return C64::new(0.0, self.im);
        }
        let t = ((self.re.abs() + self.abs()) / 2.0).sqrt();
        if self.re >= 0.0 {
            C64::new(t, self.im / (2.0 * t))
        } else {
            C64::new(self.im.abs() / (2.0 * t), t.copysign(self.im))
        }
    }

    /// The product of all of `values` in order (`numpy.prod`); 1 for none.
    pub fn product(values: &[C64]) -> Self {
        values.iter().fold(C64::ONE, |acc, &v| acc * v)
    }
}

impl Add for C64 {
    type Output = C64;
    fn add(self, rhs: C64) -> C64 {
        C64::new(self.re + rhs.re, self.im + rhs.im)
    }
}

impl Sub for C64 {
    type Output = C64;
    fn sub(self, rhs: C64) -> C64 {
        C64::new(self.re - rhs.re, self.im - rhs.im)
    }
}

impl Neg for C64 {
    type Output = C64;
    fn neg(self) -> C64 {
        C64::new(-self.re, -self.im)
    }
}

impl Mul for C64 {
    type Output = C64;
    fn mul(self, rhs: C64) -> C64 {
        C64::new(
            self.re * rhs.re - self.im * rhs.im,
            self.re * rhs.im + self.im * rhs.re,
        )
    }
}

impl Div for C64 {
    type Output = C64;
    /// Smith's algorithm as NumPy's complex division writes it (no overflow from squaring the
    /// divisor; the scaled numerator multiplied by the reciprocal of the denominator), so that
    /// the design rounds as scipy's does: pole magnitudes tie exactly where scipy's do, for
    /// bands symmetric about a quarter of the rate, and the pairing breaks the tie alike.
    fn div(self, rhs: C64) -> C64 {
        if rhs.re.abs() >= rhs.im.abs() {
            let ratio = rhs.im / rhs.re;
            let scale = 1.0 / (rhs.re + rhs.im * ratio);
            C64::new(
                (self.re + self.im * ratio) * scale,
                (self.im - self.re * ratio) * scale,
            )
        } else {
            let ratio = rhs.re / rhs.im;
            let scale = 1.0 / (rhs.im + rhs.re * ratio);
            C64::new(
                (self.re * ratio + self.im) * scale,
                (self.im * ratio - self.re) * scale,
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::C64;

    #[test]
    fn sqrt_squares_back_and_takes_the_principal_branch() {
        for &(re, im) in &[
            (3.0, 4.0),
            (-3.0, 4.0),
            (-3.0, -4.0),
            (-2.0, 0.0),
            (0.5, -0.25),
        ] {
            let z = C64::new(re, im);
            let r = z.sqrt();
            let back = r * r;
            assert!((back - z).abs() < 1e-14 * z.abs(), "{z:?} -> {r:?}");
            assert!(r.re >= 0.0, "{z:?} -> {r:?}");
        }
        assert_eq!(C64::new(-4.0, 0.0).sqrt(), C64::new(0.0, 2.0));
        assert_eq!(C64::new(-4.0, -0.0).sqrt(), C64::new(0.0, -2.0));
    }

    #[test]
    fn division_inverts_multiplication() {
        let a = C64::new(1.5, -2.25);
        for b in [C64::new(0.3, 7.0), C64::new(-5.0, 0.1), C64::real(2.0)] {
            let q = (a * b) / b;
            assert!((q - a).abs() < 1e-15 * a.abs() * 4.0, "{a:?} {b:?} {q:?}");
        }
    }
}

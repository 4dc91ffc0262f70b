// The functions unary.def's formulas call that GLSL lacks (erf, expm1,
// log1p) or whose built-ins the Vulkan spec leaves inexact or free to
// overflow for large |x| (tanh, sinh, cosh and their inverses are only
// defined through exp and log there, and drivers expand them so: tanh
// as (e^x - e^-x) / (e^x + e^-x) is inf / inf = NaN beyond |x| = 89).
// llvmpipe's asin, acos and atan are off by 3e-4 to 3e-6. Each is
// written from exp (or expm1's polynomial near 0) or log of a value that
// cannot overflow, or from a polynomial; errors stay near float rounding
// (~1e-7). precise stops the compiler rewriting log1p's cancellation.

// e^x - 1 without the cancellation near 0: there (|x| < 0.35) its Taylor
// polynomial to x^8 (truncation below 3e-10 relative), beyond exp(x) - 1.
float dg_expm1(float x) {
  float p = 1.0 / 40320.0;
  p = p * x + 1.0 / 5040.0;
  p = p * x + 1.0 / 720.0;
  p = p * x + 1.0 / 120.0;
  p = p * x + 1.0 / 24.0;
  p = p * x + 1.0 / 6.0;
  p = p * x + 0.5;
  p = p * x + 1.0;
  return abs(x) < 0.35 ? p * x : exp(x) - 1.0;
}

// tanh |x| = m / (m + 2), m = e^(2|x|) - 1 (accurate near 0 through
// dg_expm1), |x| clamped at 10, where tanh is 1 in float and m finite.
float dg_tanh(float x) {
  float m = dg_expm1(2.0 * min(abs(x), 10.0));
  return sign(x) * (m / (m + 2.0));
}

// sinh |x| = (m + m / (m + 1)) / 2, m = e^|x| - 1: no cancellation near
// 0. Past |x| = 88, e^|x| / 2 as e^(|x| - ln 2), which stays finite up
// to |x| = 89.4 where e^|x| itself would overflow (cosh likewise).
float dg_sinh(float x) {
  float a = abs(x);
  float m = dg_expm1(a);
  return sign(x) *
         (a < 88.0 ? 0.5 * (m + m / (m + 1.0)) : exp(a - 0.693147181));
}

float dg_cosh(float x) {
  float a = abs(x);
  float e = exp(a);
  return a < 88.0 ? 0.5 * e + 0.5 / e : exp(a - 0.693147181);
}

// log(|x| + sqrt(x^2 + 1)); past 2^12 the 1 is below x^2's rounding and
// log(2|x|) = log|x| + log 2 avoids squaring into overflow.
float dg_asinh(float x) {
  float a = abs(x);
  float r = a > 4096.0 ? log(a) + 0.693147181 : log(a + sqrt(a * a + 1.0));
  return sign(x) * r;
}

float dg_acosh(float x) {
  return x > 4096.0 ? log(x) + 0.693147181 : log(x + sqrt(x * x - 1.0));
}

float dg_atanh(float x) { return 0.5 * log((1.0 + x) / (1.0 - x)); }

// log(1 + u) with u's low bits kept: log(w) * u / (w - 1), w = 1 + u
// rounded, cancels w's rounding error (exact to a few ulps).
float dg_log1p(float u) {
  precise float w = 1.0 + u;
  precise float d = w - 1.0;
  return d == 0.0 ? u : log(w) * (u / d);
}

// erf: |x| < 1: x * p(x^2), p a degree-6 interpolant of erf(sqrt t) /
// sqrt t at Chebyshev nodes of t in [0, 1] (in s = 2t - 1); 1 <= |x| < 4:
// 1 - exp(-x^2) q(|x|), q a degree-10 interpolant of erfc(x) exp(x^2) on
// [1, 4] (in s = (x - 2.5) / 1.5); beyond, erf is 1 in float. Within
// 9e-8 of erf everywhere (checked in float arithmetic against libm's
// erf at 800k points).
float dg_erf(float x) {
  float a = abs(x);
  float r;
  if (a < 1.0) {
    float s = 2.0 * (a * a) - 1.0;
    float p = 1.230605477e-06;
    p = p * s - 1.766906803e-05;
    p = p * s + 2.175135417e-04;
    p = p * s - 2.285419545e-03;
    p = p * s + 1.985249714e-02;
    p = p * s - 1.405360973e-01;
    p = p * s + 9.654687387e-01;
    r = a * p;
  } else if (a < 4.0) {
    float s = a * (1.0 / 1.5) - (2.5 / 1.5);
    float q = 9.294974298e-05;
    q = q * s - 2.451864515e-04;
    q = q * s + 3.764772748e-04;
    q = q * s - 9.162726026e-04;
    q = q * s + 2.418384229e-03;
    q = q * s - 5.611233637e-03;
    q = q * s + 1.248669964e-02;
    q = q * s - 2.699793742e-02;
    q = q * s + 5.611062799e-02;
    q = q * s - 1.115213905e-01;
    q = q * s + 2.108063641e-01;
    r = 1.0 - exp(-(a * a)) * q;
  } else {
    r = 1.0;
  }
  return sign(x) * r;
}

// asin on [0, 0.5]: z * p(z^2), p a degree-5 interpolant of asin(sqrt t) /
// sqrt t at Chebyshev nodes of t in [0, 0.25] (in s = 8t - 1), within
// 3e-9.
float dg_asin_half(float z) {
  float s = 8.0 * (z * z) - 1.0;
  float p = 1.294475518e-06;
  p = p * s + 1.233028766e-05;
  p = p * s + 1.252838869e-04;
  p = p * s + 1.485861047e-03;
  p = p * s + 2.347219671e-02;
  p = p * s + 1.022100580e+00;
  return z * p;
}

// Past 0.5, asin(a) = pi/2 - 2 asin(sqrt((1 - a) / 2)), whose argument is
// at most 0.5 again and exact in float (1 - a is, for a in [0.5, 1]).
float dg_asin(float x) {
  float a = abs(x);
  float r = a <= 0.5 ? dg_asin_half(a)
                     : 1.570796327 - 2.0 * dg_asin_half(sqrt(0.5 - 0.5 * a));
  return sign(x) * r;
}

// acos(x) = pi/2 - asin(x) near 0; near +-1 from the half-angle form, so
// that acos(1 - tiny) keeps its relative accuracy.
float dg_acos(float x) {
  if (abs(x) <= 0.5)
    return 1.570796327 - dg_asin_half(abs(x)) * sign(x);
  float h = 2.0 * dg_asin_half(sqrt(0.5 - 0.5 * abs(x)));
  return x > 0.0 ? h : 3.141592654 - h;
}

// atan: |x| <= 1: x * p(x^2), p a degree-8 interpolant of atan(sqrt t) /
// sqrt t at Chebyshev nodes of t in [0, 1] (in s = 2t - 1), within 1e-8;
// beyond, pi/2 - atan(1/|x|). Within 2e-7 relative in float arithmetic.
float dg_atan(float x) {
  float a = abs(x);
  float z = a > 1.0 ? 1.0 / a : a;
  float s = 2.0 * (z * z) - 1.0;
  float p = 1.080579493e-05;
  p = p * s - 3.645402434e-05;
  p = p * s + 1.006599402e-04;
  p = p * s - 3.556484647e-04;
  p = p * s + 1.316043724e-03;
  p = p * s - 5.032373526e-03;
  p = p * s + 2.085181663e-02;
  p = p * s - 1.018764283e-01;
  p = p * s + 8.704197514e-01;
  float r = z * p;
  return sign(x) * (a > 1.0 ? 1.570796327 - r : r);
}

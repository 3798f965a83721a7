/* Tessel vector math: f32 exp, log, tanh, sigmoid and erf on 16 lanes (AVX-512F, __m512,
 * tessel_*_v16) and 8 lanes (AVX2 + FMA, __m256, tessel_*_v8), for vectorized kernels.
 * Plain C11 on <immintrin.h>; embedded into kernels as text (tessel::abi::vectorMathText()).
 * Each group exists only when the kernel is compiled for its ISA (__AVX512F__, or __AVX2__ and
 * __FMA__), so the file compiles on any x86-64. The v8 functions use AVX2 + FMA only, also on an
 * AVX-512 machine, and return bit-identical results to the v16 ones for every input.
 *
 * Accuracy: the largest distance, in f32 ulps, between a result and the correctly rounded one
 * (libm in double, rounded to f32; sigmoid's reference is 1/(1+exp(-x)) in double). The
 * distance counts the floats between the two, across binades and through denormals and zero,
 * so it needs no absolute-error allowance near 0. MEASURED EXHAUSTIVELY over all 2^32 inputs
 * (gcc 12 -O3 -march=native, AVX-512 Xeon; identical with clang 14), v16 and v8 alike:
 *     function   max error   required
 *     exp        1 ulp       2
 *     log        1 ulp       2
 *     tanh       2 ulp       3          (at x = 0.5497, just above the polynomial's range)
 *     sigmoid    2 ulp       3          (at x = -1.0988, result just below 1/4)
 *     erf        1 ulp       4
 * tests/abi/VectorMathTest.cpp re-checks these bounds and the special values below on ~1.5
 * million inputs per function, for both widths.
 *
 * Special values follow C's expf/logf/tanhf/erff: NaN in, NaN out (every function);
 *   exp:     exp(+inf) = +inf, exp(-inf) = +0, x > 88.7228 overflows to +inf; results below
 *            FLT_MIN are gradual denormals (not flushed); x < -103.972 gives +0.
 *   log:     log(+-0) = -inf; log(x < 0) = NaN, -inf included; log(+inf) = +inf; log(1) = +0;
 *            denormal inputs are handled exactly (no flushing).
 *   tanh:    tanh(+-inf) = +-1, tanh(-0) = -0, |x| > 9.01 gives exactly +-1.
 *   sigmoid: sigmoid(-inf) = +0, sigmoid(+inf) = 1, x > 17.33 gives exactly 1; x < -87.34
 *            gives gradual denormals, x < -103.972 gives +0.
 *   erf:     erf(+-inf) = +-1, erf(-0) = -0, |x| >= 3.92 gives exactly +-1.
 *
 * Lanes are independent and branch-free: no loops, no data-dependent branches, so any value in
 * a masked-off lane is harmless. The functions never trap (kernels run with every FP exception
 * masked); they may set status flags (inexact, overflow, invalid on garbage), which kernels
 * never read. Accuracy assumes round-to-nearest with FTZ/DAZ off, the kernels' defaults.
 * Speed is the same for every input but one hardware caveat: x86 cores take a microcode assist
 * (about 100 cycles on Intel) for a multiplication with a denormal operand or result. Every
 * input whose result is not denormal avoids these -- infinities, NaN, huge, tiny and denormal
 * inputs run at full speed (lanes whose result is a constant compute on a harmless stand-in);
 * only exp and sigmoid for x in (-103.972, -87.34) and erf of a denormal, whose results are
 * denormal themselves, pay. Measured cost (TSC ticks per element, loop over 4096 floats, same
 * machine), v16 / v8 / scalar glibc: exp 0.46 / 1.13 / 6.2, log 0.61 / 1.24 / 8.5,
 * tanh 1.11 / 1.78 / 32.7, sigmoid 0.77 / 1.44 / 6.3 (1/(1+expf(-x))), erf 1.16 / 2.11 / 28.8.
 *
 * Methods (coefficients fitted for this file with a Remez exchange in 50-digit arithmetic, then
 * rounded to f32 one coefficient at a time, lowest degree first, refitting the rest; the error
 * quoted next to each polynomial below is its own, in exact arithmetic):
 *   exp:     n = round(x log2 e), r = x - n ln2 (Cody-Waite split ln2 = LN2_HI + LN2_LO, exact
 *            with FMA), e^r = 1 + r (c1 + r (c2 + ... c6 r)) minimax-relative on |r| <= ln2/2,
 *            scaled by 2^n with vscalefps (v16) or two exponent-built factors 2^(n/2) 2^(n-n/2)
 *            (v8), so overflow, denormal results and n = 128 round once.
 *   log:     x = 2^e m with m in [sqrt(1/2), sqrt(2)) (getexp/getmant on v16; integer split
 *            on v8, denormals through their integer mantissa), f = m - 1 (exact),
 *            log(m) = f + f^2 P(f), P of degree 8 minimax-relative, log x = e LN2_HI + (f +
 *            (f^2 P + e LN2_LO)).
 *   tanh:    |x| < atanh(1/2): x + x^3 P(x^2), P of degree 4; otherwise
 *            +-(1 - 2 / (exp(2|x|) + 1)), whose result lies in [1/2, 1] so the subtraction
 *            cannot cancel.
 *   sigmoid: e = exp(-|x|) in (0, 1]; 1/(1+e) for x >= 0 and e/(1+e) for x < 0, so neither
 *            side cancels and tiny results keep their relative accuracy.
 *   erf:     |x| < 1: x + x Q(x^2), Q of degree 6 minimax-relative; 1 <= |x| <= 4:
 *            +-(1 - exp(R(|x| - 2) - x^2)), R of degree 6 fitted to log(erfc x) + x^2,
 *            minimax in absolute erf error; |x| is clamped to 4, where the formula gives 1. */
#ifndef TESSEL_VECTOR_MATH_H
#define TESSEL_VECTOR_MATH_H

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>
#endif

/* Shared constants (hex float literals: exact f32 values). */
#define TESSEL_VM_LOG2E 0x1.715476p+0f
#define TESSEL_VM_LN2_HI 0x1.62e430p-1f   /* f32(ln 2) */
#define TESSEL_VM_LN2_LO -0x1.05c610p-29f /* f32(ln 2 - LN2_HI) */
/* 1.5 * 2^23: adding it rounds a float of magnitude < 2^22 to an integer held in the low
 * mantissa bits. */
#define TESSEL_VM_ROUND_MAGIC 0x1.8p+23f
/* exp(x) rounds to +0 below EXP_UNDERFLOW (the f32 just above ln 2^-150) and to +inf above
 * 88.7228; clamping at EXP_MAX keeps n, and 2^n in v8, representable. */
#define TESSEL_VM_EXP_UNDERFLOW -0x1.9fe368p+6f /* -103.972076 */
#define TESSEL_VM_EXP_MAX 89.0f
#define TESSEL_VM_EXP_TINY 0x1p-26f /* exp(|x| < 2^-26) rounds to 1 */
/* e^r - 1 = r (c1 + r (c2 + ...)), |r| <= ln2/2: max relative error 0.053 * 2^-24. */
#define TESSEL_VM_EXP_C1 0x1.000000p+0f
#define TESSEL_VM_EXP_C2 0x1.fffffcp-2f
#define TESSEL_VM_EXP_C3 0x1.55548cp-3f
#define TESSEL_VM_EXP_C4 0x1.555858p-5f
#define TESSEL_VM_EXP_C5 0x1.123de0p-7f
#define TESSEL_VM_EXP_C6 0x1.6ac74ep-10f
/* log(1+f) = f + f^2 P(f), f in [sqrt(1/2)-1, sqrt(2)-1]: max relative error 0.27 * 2^-24. */
#define TESSEL_VM_SQRT2 0x1.6a09e6p+0f
#define TESSEL_VM_LOG_P0 -0x1.fffff8p-2f
#define TESSEL_VM_LOG_P1 0x1.555608p-2f
#define TESSEL_VM_LOG_P2 -0x1.0004f8p-2f
#define TESSEL_VM_LOG_P3 0x1.994874p-3f
#define TESSEL_VM_LOG_P4 -0x1.53ada0p-3f
#define TESSEL_VM_LOG_P5 0x1.291218p-3f
#define TESSEL_VM_LOG_P6 -0x1.19fc96p-3f
#define TESSEL_VM_LOG_P7 0x1.c5311ep-4f
#define TESSEL_VM_LOG_P8 -0x1.4f09f8p-5f
/* tanh(x) = x + x^3 P(x^2), |x| < atanh(1/2): max relative error 0.02 * 2^-24. */
#define TESSEL_VM_TANH_SMALL 0x1.193ea8p-1f /* f32(atanh(1/2)) = 0.549306 */
#define TESSEL_VM_TANH_TINY 0x1p-13f        /* tanh(|x| < 2^-13) rounds to x */
#define TESSEL_VM_TANH_SATURATE 10.0f       /* tanh(|x| > 9.01) rounds to +-1 */
#define TESSEL_VM_TANH_P0 -0x1.55554ap-2f
#define TESSEL_VM_TANH_P1 0x1.110ceep-3f
#define TESSEL_VM_TANH_P2 -0x1.b91e7ep-5f
#define TESSEL_VM_TANH_P3 0x1.58e518p-6f
#define TESSEL_VM_TANH_P4 -0x1.9921a2p-8f
/* sigmoid(x) rounds to 1 for x > 17.33 and to 1/2 for |x| < 2^-26. */
#define TESSEL_VM_SIGMOID_SATURATE 20.0f
#define TESSEL_VM_SIGMOID_TINY 0x1p-26f
/* erf(x) = x + x Q(x^2), |x| < 1: max relative error 0.024 * 2^-24. Q's argument is at least
 * ERF_TINY^2 (below it Q(x^2) = Q(0) to 2^-40), so tiny x never makes a denormal. */
#define TESSEL_VM_ERF_TINY 0x1p-20f
#define TESSEL_VM_ERF_Q0 0x1.06eba8p-3f
#define TESSEL_VM_ERF_Q1 -0x1.81273ep-2f
#define TESSEL_VM_ERF_Q2 0x1.ce2ce6p-4f
#define TESSEL_VM_ERF_Q3 -0x1.b7f71ap-6f
#define TESSEL_VM_ERF_Q4 0x1.53f224p-8f
#define TESSEL_VM_ERF_Q5 -0x1.a3515ep-11f
#define TESSEL_VM_ERF_Q6 0x1.4771fep-14f
/* erfc(x) = exp(R(x - 2) - x^2), 1 <= x <= 4: max error of erf 0.021 * 2^-24 (absolute). */
#define TESSEL_VM_ERF_SATURATE 4.0f /* erf(|x| >= 3.92) rounds to +-1 */
#define TESSEL_VM_ERF_R0 -0x1.5d6cc6p+0f
#define TESSEL_VM_ERF_R1 -0x1.ac31fep-2f
#define TESSEL_VM_ERF_R2 0x1.384c80p-4f
#define TESSEL_VM_ERF_R3 -0x1.0e3044p-6f
#define TESSEL_VM_ERF_R4 0x1.d0cb82p-9f
#define TESSEL_VM_ERF_R5 -0x1.70f7d2p-11f
#define TESSEL_VM_ERF_R6 0x1.8f35c8p-13f

/* Operand order of min/max matters throughout: vminps/vmaxps return the second operand when
 * either is NaN, so min(constant, x) and max(constant, x) keep a NaN x. */

/* ------------------------------------------------------------------ AVX-512F, 16 lanes */
#if defined(__AVX512F__)

#define TESSEL_VM_SET16(c) _mm512_set1_ps(c)

/* Horner step: p * x + c. */
static inline __m512 tessel_vm_horner_v16(__m512 p, __m512 x, float c) {
  return _mm512_fmadd_ps(p, x, _mm512_set1_ps(c));
}

/* magnitude | (sign_source & sign bit); ternary-logic 0xF8 is A | (B & C). */
static inline __m512 tessel_vm_or_sign_v16(__m512 magnitude, __m512 sign_source) {
  return _mm512_castsi512_ps(_mm512_ternarylogic_epi32(_mm512_castps_si512(magnitude),
                                                       _mm512_castps_si512(sign_source),
                                                       _mm512_set1_epi32((int)0x80000000u), 0xF8));
}

/* e^x for x in [EXP_UNDERFLOW, EXP_MAX] or NaN; +0 in the lanes outside `nonzero`. */
static inline __m512 tessel_vm_exp_core_v16(__m512 x, __mmask16 nonzero) {
  __m512 magic = TESSEL_VM_SET16(TESSEL_VM_ROUND_MAGIC);
  __m512 n = _mm512_sub_ps(_mm512_fmadd_ps(x, TESSEL_VM_SET16(TESSEL_VM_LOG2E), magic), magic);
  __m512 r = _mm512_fnmadd_ps(n, TESSEL_VM_SET16(TESSEL_VM_LN2_HI), x); /* exact */
  r = _mm512_fnmadd_ps(n, TESSEL_VM_SET16(TESSEL_VM_LN2_LO), r);
  __m512 p = TESSEL_VM_SET16(TESSEL_VM_EXP_C6);
  p = tessel_vm_horner_v16(p, r, TESSEL_VM_EXP_C5);
  p = tessel_vm_horner_v16(p, r, TESSEL_VM_EXP_C4);
  p = tessel_vm_horner_v16(p, r, TESSEL_VM_EXP_C3);
  p = tessel_vm_horner_v16(p, r, TESSEL_VM_EXP_C2);
  p = tessel_vm_horner_v16(p, r, TESSEL_VM_EXP_C1);
  p = tessel_vm_horner_v16(p, r, 1.0f);
  /* p * 2^n with one rounding: overflow to inf and denormal results come out right. */
  return _mm512_maskz_scalef_ps(nonzero, p, n);
}

static inline __m512 tessel_exp_v16(__m512 x) {
  /* Lanes whose result is +0 or 1 compute e^0, so that underflowing and tiny (denormal) inputs
   * cost no microcode assist; the underflowing ones are zeroed at the end. */
  __mmask16 nonzero = _mm512_cmp_ps_mask(x, TESSEL_VM_SET16(TESSEL_VM_EXP_UNDERFLOW), _CMP_NLT_UQ);
  __mmask16 not_one =
      _mm512_mask_cmp_ps_mask(nonzero, _mm512_abs_ps(x), TESSEL_VM_SET16(TESSEL_VM_EXP_TINY), _CMP_NLT_UQ);
  x = _mm512_maskz_min_ps(not_one, TESSEL_VM_SET16(TESSEL_VM_EXP_MAX), x);
  return tessel_vm_exp_core_v16(x, nonzero);
}

static inline __m512 tessel_log_v16(__m512 x) {
  /* x = 2^e m, m in [sqrt(1/2), sqrt(2)); getexp/getmant normalise denormals themselves. */
  __m512 m = _mm512_getmant_ps(x, _MM_MANT_NORM_1_2, _MM_MANT_SIGN_zero);
  __m512 e = _mm512_getexp_ps(x);
  /* >= as in v8, whose integer split halves from f32(sqrt 2) up: both give identical results. */
  __mmask16 above_sqrt2 = _mm512_cmp_ps_mask(m, TESSEL_VM_SET16(TESSEL_VM_SQRT2), _CMP_GE_OQ);
  m = _mm512_mask_mul_ps(m, above_sqrt2, m, TESSEL_VM_SET16(0.5f));
  e = _mm512_mask_add_ps(e, above_sqrt2, e, TESSEL_VM_SET16(1.0f));
  __m512 f = _mm512_sub_ps(m, TESSEL_VM_SET16(1.0f));
  __m512 p = TESSEL_VM_SET16(TESSEL_VM_LOG_P8);
  p = tessel_vm_horner_v16(p, f, TESSEL_VM_LOG_P7);
  p = tessel_vm_horner_v16(p, f, TESSEL_VM_LOG_P6);
  p = tessel_vm_horner_v16(p, f, TESSEL_VM_LOG_P5);
  p = tessel_vm_horner_v16(p, f, TESSEL_VM_LOG_P4);
  p = tessel_vm_horner_v16(p, f, TESSEL_VM_LOG_P3);
  p = tessel_vm_horner_v16(p, f, TESSEL_VM_LOG_P2);
  p = tessel_vm_horner_v16(p, f, TESSEL_VM_LOG_P1);
  p = tessel_vm_horner_v16(p, f, TESSEL_VM_LOG_P0);
  __m512 s = _mm512_fmadd_ps(_mm512_mul_ps(f, f), p, _mm512_mul_ps(e, TESSEL_VM_SET16(TESSEL_VM_LN2_LO)));
  s = _mm512_add_ps(f, s);
  __m512 y = _mm512_fmadd_ps(e, TESSEL_VM_SET16(TESSEL_VM_LN2_HI), s);
  /* Special inputs by class of x (vfixupimmps, one nibble per class): QNaN and SNaN -> quiet x,
   * +-0 -> -inf, +1 -> +0, -inf -> NaN, +inf -> +inf, negative -> NaN, positive -> y. */
  return _mm512_fixupimm_ps(y, x, _mm512_set1_epi32(0x03538422), 0);
}

static inline __m512 tessel_tanh_v16(__m512 x) {
  __m512 ax = _mm512_abs_ps(x);
  /* Computed on a = max(|x|, TANH_TINY), so nothing underflows; tiny lanes return |x| below. */
  __m512 a = _mm512_max_ps(TESSEL_VM_SET16(TESSEL_VM_TANH_TINY), ax);
  __m512 u = _mm512_mul_ps(a, a);
  __m512 p = TESSEL_VM_SET16(TESSEL_VM_TANH_P4);
  p = tessel_vm_horner_v16(p, u, TESSEL_VM_TANH_P3);
  p = tessel_vm_horner_v16(p, u, TESSEL_VM_TANH_P2);
  p = tessel_vm_horner_v16(p, u, TESSEL_VM_TANH_P1);
  p = tessel_vm_horner_v16(p, u, TESSEL_VM_TANH_P0);
  __m512 small = _mm512_fmadd_ps(a, _mm512_mul_ps(u, p), a);
  __m512 b = _mm512_min_ps(TESSEL_VM_SET16(TESSEL_VM_TANH_SATURATE), a);
  __m512 e2b = tessel_vm_exp_core_v16(_mm512_add_ps(b, b), 0xFFFF);
  __m512 large = _mm512_sub_ps(
      TESSEL_VM_SET16(1.0f), _mm512_div_ps(TESSEL_VM_SET16(2.0f), _mm512_add_ps(e2b, TESSEL_VM_SET16(1.0f))));
  __mmask16 is_small = _mm512_cmp_ps_mask(ax, TESSEL_VM_SET16(TESSEL_VM_TANH_SMALL), _CMP_LT_OQ);
  __mmask16 is_tiny = _mm512_cmp_ps_mask(ax, TESSEL_VM_SET16(TESSEL_VM_TANH_TINY), _CMP_LT_OQ);
  __m512 y = _mm512_mask_mov_ps(_mm512_mask_blend_ps(is_small, large, small), is_tiny, ax);
  return tessel_vm_or_sign_v16(y, x); /* odd; also tanh(-0) = -0 */
}

static inline __m512 tessel_sigmoid_v16(__m512 x) {
  __mmask16 non_negative = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GE_OQ);
  /* e = exp(-|x|), its argument kept where the result does not change and no denormal appears:
   * at most -TINY, and at least -SATURATE for x >= 0 (x < 0 needs the tail: e is the result). */
  __m512 minus_ax =
      _mm512_castsi512_ps(_mm512_or_epi32(_mm512_castps_si512(x), _mm512_set1_epi32((int)0x80000000u)));
  __m512 arg = _mm512_min_ps(TESSEL_VM_SET16(-TESSEL_VM_SIGMOID_TINY), minus_ax);
  arg = _mm512_mask_max_ps(arg, non_negative, TESSEL_VM_SET16(-TESSEL_VM_SIGMOID_SATURATE), arg);
  __mmask16 nonzero = _mm512_cmp_ps_mask(arg, TESSEL_VM_SET16(TESSEL_VM_EXP_UNDERFLOW), _CMP_NLT_UQ);
  __m512 e = tessel_vm_exp_core_v16(_mm512_maskz_mov_ps(nonzero, arg), nonzero);
  /* x >= 0: 1/(1+e); x < 0: e/(1+e). */
  __m512 numerator = _mm512_mask_blend_ps(non_negative, e, TESSEL_VM_SET16(1.0f));
  return _mm512_div_ps(numerator, _mm512_add_ps(e, TESSEL_VM_SET16(1.0f)));
}

static inline __m512 tessel_erf_v16(__m512 x) {
  __m512 ax = _mm512_abs_ps(x);
  __m512 a = _mm512_max_ps(TESSEL_VM_SET16(TESSEL_VM_ERF_TINY), ax);
  __m512 u = _mm512_mul_ps(a, a);
  __m512 q = TESSEL_VM_SET16(TESSEL_VM_ERF_Q6);
  q = tessel_vm_horner_v16(q, u, TESSEL_VM_ERF_Q5);
  q = tessel_vm_horner_v16(q, u, TESSEL_VM_ERF_Q4);
  q = tessel_vm_horner_v16(q, u, TESSEL_VM_ERF_Q3);
  q = tessel_vm_horner_v16(q, u, TESSEL_VM_ERF_Q2);
  q = tessel_vm_horner_v16(q, u, TESSEL_VM_ERF_Q1);
  q = tessel_vm_horner_v16(q, u, TESSEL_VM_ERF_Q0);
  __m512 small = _mm512_fmadd_ps(x, q, x);
  __m512 b = _mm512_min_ps(TESSEL_VM_SET16(TESSEL_VM_ERF_SATURATE), a);
  __m512 t = _mm512_sub_ps(b, TESSEL_VM_SET16(2.0f)); /* exact for b in [1, 4] */
  __m512 r = TESSEL_VM_SET16(TESSEL_VM_ERF_R6);
  r = tessel_vm_horner_v16(r, t, TESSEL_VM_ERF_R5);
  r = tessel_vm_horner_v16(r, t, TESSEL_VM_ERF_R4);
  r = tessel_vm_horner_v16(r, t, TESSEL_VM_ERF_R3);
  r = tessel_vm_horner_v16(r, t, TESSEL_VM_ERF_R2);
  r = tessel_vm_horner_v16(r, t, TESSEL_VM_ERF_R1);
  r = tessel_vm_horner_v16(r, t, TESSEL_VM_ERF_R0);
  __m512 erfc_b = tessel_vm_exp_core_v16(_mm512_fnmadd_ps(b, b, r), 0xFFFF); /* argument in [-18.5, -1] */
  __m512 large = _mm512_sub_ps(TESSEL_VM_SET16(1.0f), erfc_b);
  __mmask16 is_small = _mm512_cmp_ps_mask(ax, TESSEL_VM_SET16(1.0f), _CMP_LT_OQ);
  return tessel_vm_or_sign_v16(_mm512_mask_blend_ps(is_small, large, small), x); /* also erf(-0) = -0 */
}

#endif /* __AVX512F__ */

/* ------------------------------------------------------------------ AVX2 + FMA, 8 lanes */
#if defined(__AVX2__) && defined(__FMA__)

#define TESSEL_VM_SET8(c) _mm256_set1_ps(c)

static inline __m256 tessel_vm_horner_v8(__m256 p, __m256 x, float c) {
  return _mm256_fmadd_ps(p, x, _mm256_set1_ps(c));
}

static inline __m256 tessel_vm_sign_bit_v8(void) {
  return _mm256_castsi256_ps(_mm256_set1_epi32((int)0x80000000u));
}

/* e^x for x in [EXP_UNDERFLOW, EXP_MAX] or NaN (callers clamp). */
static inline __m256 tessel_vm_exp_core_v8(__m256 x) {
  __m256 magic = TESSEL_VM_SET8(TESSEL_VM_ROUND_MAGIC);
  __m256 t = _mm256_fmadd_ps(x, TESSEL_VM_SET8(TESSEL_VM_LOG2E), magic); /* magic + round(x log2 e) */
  __m256 n = _mm256_sub_ps(t, magic);
  __m256 r = _mm256_fnmadd_ps(n, TESSEL_VM_SET8(TESSEL_VM_LN2_HI), x); /* exact */
  r = _mm256_fnmadd_ps(n, TESSEL_VM_SET8(TESSEL_VM_LN2_LO), r);
  __m256 p = TESSEL_VM_SET8(TESSEL_VM_EXP_C6);
  p = tessel_vm_horner_v8(p, r, TESSEL_VM_EXP_C5);
  p = tessel_vm_horner_v8(p, r, TESSEL_VM_EXP_C4);
  p = tessel_vm_horner_v8(p, r, TESSEL_VM_EXP_C3);
  p = tessel_vm_horner_v8(p, r, TESSEL_VM_EXP_C2);
  p = tessel_vm_horner_v8(p, r, TESSEL_VM_EXP_C1);
  p = tessel_vm_horner_v8(p, r, 1.0f);
  /* 2^n = 2^n1 2^n2 with n1 = floor(n/2): both factors are normal floats for n in [-150, 129], so
   * p 2^n1 is exact and the second product rounds once (overflow, denormals). */
  __m256i ni = _mm256_sub_epi32(_mm256_castps_si256(t), _mm256_castps_si256(magic));
  __m256i n1 = _mm256_srai_epi32(ni, 1);
  __m256i n2 = _mm256_sub_epi32(ni, n1);
  __m256i bias = _mm256_set1_epi32(127);
  __m256 scale1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
  __m256 scale2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
  return _mm256_mul_ps(_mm256_mul_ps(p, scale1), scale2);
}

static inline __m256 tessel_exp_v8(__m256 x) {
  /* Lanes whose result is +0 or 1 compute e^0, so that underflowing and tiny (denormal) inputs
   * cost no microcode assist; the underflowing ones are zeroed at the end. */
  __m256 underflow = _mm256_cmp_ps(x, TESSEL_VM_SET8(TESSEL_VM_EXP_UNDERFLOW), _CMP_LT_OQ);
  __m256 tiny = _mm256_cmp_ps(_mm256_andnot_ps(tessel_vm_sign_bit_v8(), x),
                              TESSEL_VM_SET8(TESSEL_VM_EXP_TINY), _CMP_LT_OQ);
  x = _mm256_andnot_ps(_mm256_or_ps(underflow, tiny), _mm256_min_ps(TESSEL_VM_SET8(TESSEL_VM_EXP_MAX), x));
  return _mm256_andnot_ps(underflow, tessel_vm_exp_core_v8(x));
}

static inline __m256 tessel_log_v8(__m256 x) {
  __m256i bits = _mm256_castps_si256(x);
  /* Below FLT_MIN (also zeros and negative x, handled at the end): the integer mantissa, converted
   * exactly, is x 2^149 -- integer work only, so denormals cost no microcode assist. */
  __m256i below_normal = _mm256_cmpgt_epi32(_mm256_set1_epi32(0x00800000), bits);
  __m256 xs = _mm256_blendv_ps(x, _mm256_cvtepi32_ps(bits), _mm256_castsi256_ps(below_normal));
  /* x = 2^e m, m in [sqrt(1/2), sqrt(2)): offsetting the bits by those of sqrt(1/2) moves the
   * exponent boundary to the mantissa sqrt(2). */
  __m256i sqrt_half_bits = _mm256_set1_epi32(0x3f3504f3);
  __m256i offset = _mm256_sub_epi32(_mm256_castps_si256(xs), sqrt_half_bits);
  __m256i exponent =
      _mm256_sub_epi32(_mm256_srai_epi32(offset, 23), _mm256_and_si256(below_normal, _mm256_set1_epi32(149)));
  __m256 e = _mm256_cvtepi32_ps(exponent);
  __m256 m = _mm256_castsi256_ps(
      _mm256_add_epi32(_mm256_and_si256(offset, _mm256_set1_epi32(0x007fffff)), sqrt_half_bits));
  __m256 f = _mm256_sub_ps(m, TESSEL_VM_SET8(1.0f));
  __m256 p = TESSEL_VM_SET8(TESSEL_VM_LOG_P8);
  p = tessel_vm_horner_v8(p, f, TESSEL_VM_LOG_P7);
  p = tessel_vm_horner_v8(p, f, TESSEL_VM_LOG_P6);
  p = tessel_vm_horner_v8(p, f, TESSEL_VM_LOG_P5);
  p = tessel_vm_horner_v8(p, f, TESSEL_VM_LOG_P4);
  p = tessel_vm_horner_v8(p, f, TESSEL_VM_LOG_P3);
  p = tessel_vm_horner_v8(p, f, TESSEL_VM_LOG_P2);
  p = tessel_vm_horner_v8(p, f, TESSEL_VM_LOG_P1);
  p = tessel_vm_horner_v8(p, f, TESSEL_VM_LOG_P0);
  __m256 s = _mm256_fmadd_ps(_mm256_mul_ps(f, f), p, _mm256_mul_ps(e, TESSEL_VM_SET8(TESSEL_VM_LN2_LO)));
  s = _mm256_add_ps(f, s);
  __m256 y = _mm256_fmadd_ps(e, TESSEL_VM_SET8(TESSEL_VM_LN2_HI), s);
  /* Special inputs, classified on the bits: +-inf and NaN -> x, then sign bit set -> NaN, then
   * +-0 -> -inf. */
  __m256i magnitude = _mm256_and_si256(bits, _mm256_set1_epi32(0x7fffffff));
  y = _mm256_blendv_ps(y, x,
                       _mm256_castsi256_ps(_mm256_cmpgt_epi32(magnitude, _mm256_set1_epi32(0x7f7fffff))));
  y = _mm256_blendv_ps(y, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fc00000)), x); /* blendv reads sign bits */
  return _mm256_blendv_ps(y, _mm256_castsi256_ps(_mm256_set1_epi32((int)0xff800000u)),
                          _mm256_castsi256_ps(_mm256_cmpeq_epi32(magnitude, _mm256_setzero_si256())));
}

static inline __m256 tessel_tanh_v8(__m256 x) {
  __m256 ax = _mm256_andnot_ps(tessel_vm_sign_bit_v8(), x);
  /* Computed on a = max(|x|, TANH_TINY), so nothing underflows; tiny lanes return |x| below. */
  __m256 a = _mm256_max_ps(TESSEL_VM_SET8(TESSEL_VM_TANH_TINY), ax);
  __m256 u = _mm256_mul_ps(a, a);
  __m256 p = TESSEL_VM_SET8(TESSEL_VM_TANH_P4);
  p = tessel_vm_horner_v8(p, u, TESSEL_VM_TANH_P3);
  p = tessel_vm_horner_v8(p, u, TESSEL_VM_TANH_P2);
  p = tessel_vm_horner_v8(p, u, TESSEL_VM_TANH_P1);
  p = tessel_vm_horner_v8(p, u, TESSEL_VM_TANH_P0);
  __m256 small = _mm256_fmadd_ps(a, _mm256_mul_ps(u, p), a);
  __m256 b = _mm256_min_ps(TESSEL_VM_SET8(TESSEL_VM_TANH_SATURATE), a);
  __m256 e2b = tessel_vm_exp_core_v8(_mm256_add_ps(b, b));
  __m256 large = _mm256_sub_ps(TESSEL_VM_SET8(1.0f),
                               _mm256_div_ps(TESSEL_VM_SET8(2.0f), _mm256_add_ps(e2b, TESSEL_VM_SET8(1.0f))));
  __m256 y =
      _mm256_blendv_ps(large, small, _mm256_cmp_ps(ax, TESSEL_VM_SET8(TESSEL_VM_TANH_SMALL), _CMP_LT_OQ));
  y = _mm256_blendv_ps(y, ax, _mm256_cmp_ps(ax, TESSEL_VM_SET8(TESSEL_VM_TANH_TINY), _CMP_LT_OQ));
  return _mm256_or_ps(y, _mm256_and_ps(x, tessel_vm_sign_bit_v8())); /* odd; also tanh(-0) = -0 */
}

static inline __m256 tessel_sigmoid_v8(__m256 x) {
  __m256 non_negative = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GE_OQ);
  /* e = exp(-|x|), its argument kept where the result does not change and no denormal appears:
   * at most -TINY, and at least -SATURATE for x >= 0 (x < 0 needs the tail: e is the result). */
  __m256 arg =
      _mm256_min_ps(TESSEL_VM_SET8(-TESSEL_VM_SIGMOID_TINY), _mm256_or_ps(x, tessel_vm_sign_bit_v8()));
  __m256 lower = _mm256_blendv_ps(_mm256_castsi256_ps(_mm256_set1_epi32((int)0xff800000u)),
                                  TESSEL_VM_SET8(-TESSEL_VM_SIGMOID_SATURATE), non_negative);
  arg = _mm256_max_ps(lower, arg);
  __m256 underflow = _mm256_cmp_ps(arg, TESSEL_VM_SET8(TESSEL_VM_EXP_UNDERFLOW), _CMP_LT_OQ);
  __m256 e = _mm256_andnot_ps(underflow, tessel_vm_exp_core_v8(_mm256_andnot_ps(underflow, arg)));
  /* x >= 0: 1/(1+e); x < 0: e/(1+e). */
  __m256 numerator = _mm256_blendv_ps(e, TESSEL_VM_SET8(1.0f), non_negative);
  return _mm256_div_ps(numerator, _mm256_add_ps(e, TESSEL_VM_SET8(1.0f)));
}

static inline __m256 tessel_erf_v8(__m256 x) {
  __m256 ax = _mm256_andnot_ps(tessel_vm_sign_bit_v8(), x);
  __m256 a = _mm256_max_ps(TESSEL_VM_SET8(TESSEL_VM_ERF_TINY), ax);
  __m256 u = _mm256_mul_ps(a, a);
  __m256 q = TESSEL_VM_SET8(TESSEL_VM_ERF_Q6);
  q = tessel_vm_horner_v8(q, u, TESSEL_VM_ERF_Q5);
  q = tessel_vm_horner_v8(q, u, TESSEL_VM_ERF_Q4);
  q = tessel_vm_horner_v8(q, u, TESSEL_VM_ERF_Q3);
  q = tessel_vm_horner_v8(q, u, TESSEL_VM_ERF_Q2);
  q = tessel_vm_horner_v8(q, u, TESSEL_VM_ERF_Q1);
  q = tessel_vm_horner_v8(q, u, TESSEL_VM_ERF_Q0);
  __m256 small = _mm256_fmadd_ps(x, q, x);
  __m256 b = _mm256_min_ps(TESSEL_VM_SET8(TESSEL_VM_ERF_SATURATE), a);
  __m256 t = _mm256_sub_ps(b, TESSEL_VM_SET8(2.0f)); /* exact for b in [1, 4] */
  __m256 r = TESSEL_VM_SET8(TESSEL_VM_ERF_R6);
  r = tessel_vm_horner_v8(r, t, TESSEL_VM_ERF_R5);
  r = tessel_vm_horner_v8(r, t, TESSEL_VM_ERF_R4);
  r = tessel_vm_horner_v8(r, t, TESSEL_VM_ERF_R3);
  r = tessel_vm_horner_v8(r, t, TESSEL_VM_ERF_R2);
  r = tessel_vm_horner_v8(r, t, TESSEL_VM_ERF_R1);
  r = tessel_vm_horner_v8(r, t, TESSEL_VM_ERF_R0);
  __m256 erfc_b = tessel_vm_exp_core_v8(_mm256_fnmadd_ps(b, b, r)); /* argument in [-18.5, -1] */
  __m256 large = _mm256_sub_ps(TESSEL_VM_SET8(1.0f), erfc_b);
  __m256 y = _mm256_blendv_ps(large, small, _mm256_cmp_ps(ax, TESSEL_VM_SET8(1.0f), _CMP_LT_OQ));
  return _mm256_or_ps(y, _mm256_and_ps(x, tessel_vm_sign_bit_v8())); /* also erf(-0) = -0 */
}

#endif /* __AVX2__ && __FMA__ */

#endif /* TESSEL_VECTOR_MATH_H */

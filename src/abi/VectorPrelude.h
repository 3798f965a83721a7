/* Tessel vector prelude: the SIMD operations vectorized loops are written in,
 * with one spelling per lane count so the code generator emits the same text
 * for every ISA: tessel_v16_* (AVX-512, 16 x f32) and tessel_v8_* (AVX2 + FMA,
 * 8 x f32). Each group exists only when the kernel is compiled for its ISA.
 *
 * Loops process `lanes` iterations at a time; the last, partial vector is
 * handled with a tail mask (masked loads and stores: never a scalar remainder
 * loop, never an access past the loop's last iteration). Whole vectors use
 * the *_full forms, unmasked: AVX2's masked stores (vmaskmovps) are
 * microcoded on AMD's Zen cores, several times slower than plain stores. NaN behaves as in the
 * scalar kernels: min and max propagate it. The math functions are those of
 * VectorMath.h, which kernels include before this file. */
#ifndef TESSEL_VECTOR_PRELUDE
#define TESSEL_VECTOR_PRELUDE

#include <float.h>
#include <immintrin.h>
#include <stdint.h>

/* The address of base[index], computed on integers. A guarded load (the
 * branch of a select, e.g. a padded convolution's border) may start outside
 * its array, on lanes the guard masks off, which masked loads never touch;
 * forming that pointer by pointer arithmetic would be undefined behaviour. */
#define TESSEL_ADDRESS(base, index) ((const void*)((uintptr_t)(base) + (uintptr_t)(index) * sizeof *(base)))

#if defined(__AVX512F__)
typedef __m512 tessel_v16;
typedef __mmask16 tessel_m16;
static inline tessel_m16 tessel_v16_tail(long remaining) {
  return remaining >= 16 ? (tessel_m16)0xFFFF : (tessel_m16)((1u << remaining) - 1u);
}
static inline tessel_m16 tessel_v16_full(void) { return (tessel_m16)0xFFFF; }
static inline tessel_v16 tessel_v16_load(const float* p, tessel_m16 m) { return _mm512_maskz_loadu_ps(m, p); }
static inline tessel_v16 tessel_v16_load_full(const float* p) { return _mm512_loadu_ps(p); }
/* Lane i reads p[2i] (a downsampling's in(2w)): two masked loads of the elements the lanes need
 * (lane masks spread to even element positions) and one permute, not 16 scalar loads. */
static inline tessel_v16 tessel_v16_load_stride2(const float* p, tessel_m16 m) {
  unsigned lo = m & 0xFFu, hi = (unsigned)m >> 8;
  lo = (lo | (lo << 4)) & 0x0F0Fu, hi = (hi | (hi << 4)) & 0x0F0Fu;
  lo = (lo | (lo << 2)) & 0x3333u, hi = (hi | (hi << 2)) & 0x3333u;
  lo = (lo | (lo << 1)) & 0x5555u, hi = (hi | (hi << 1)) & 0x5555u;
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  return _mm512_permutex2var_ps(_mm512_maskz_loadu_ps((tessel_m16)lo, p), even,
                                _mm512_maskz_loadu_ps((tessel_m16)hi, p + 16));
}
/* Lane i reads p[q(n0 + i) - q(n0)], q(n) = n / 2^shift truncated toward zero as C divides (an
 * upsampling's in(w / 2), p at lane 0's element): the quotients of 16 consecutive numerators lie
 * within 16 elements, loaded once (only those active lanes read) and spread by a permute. */
static inline tessel_v16 tessel_v16_load_quotient(const float* p, int32_t n0, int shift, tessel_m16 m) {
  const __m512i n = _mm512_add_epi32(_mm512_set1_epi32(n0),
                                     _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
  /* Negative numerators get 2^shift - 1 added first, so the arithmetic shift truncates. */
  const __m512i bias = _mm512_srlv_epi32(_mm512_srai_epi32(n, 31), _mm512_set1_epi32(32 - shift));
  const __m512i q = _mm512_srav_epi32(_mm512_add_epi32(n, bias), _mm512_set1_epi32(shift));
  const __m512i at = _mm512_sub_epi32(q, _mm512_set1_epi32(n0 / (1 << shift)));
  const int used = _mm512_mask_reduce_or_epi32(m, _mm512_sllv_epi32(_mm512_set1_epi32(1), at));
  return _mm512_permutexvar_ps(at, _mm512_maskz_loadu_ps((tessel_m16)used, p));
}
/* Lane i reads p[2i] of a whole vector: p[0..30] lie within the buffer, p[31] need not. */
static inline tessel_v16 tessel_v16_load_stride2_full(const float* p) {
  const __m512i odd = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 17, 19, 21, 23, 25, 27, 29, 31);
  return _mm512_permutex2var_ps(_mm512_loadu_ps(p), odd, _mm512_loadu_ps(p + 15));
}
static inline void tessel_v16_store(float* p, tessel_m16 m, tessel_v16 v) { _mm512_mask_storeu_ps(p, m, v); }
static inline void tessel_v16_store_full(float* p, tessel_v16 v) { _mm512_storeu_ps(p, v); }
static inline void tessel_v16_stream_full(float* p, tessel_v16 v) {
  if (((uintptr_t)p & 63u) == 0)
    _mm512_stream_ps(p, v);
  else
    _mm512_storeu_ps(p, v);
}
/* Non-temporal store of a full vector at a 64-byte boundary, else a plain one. */
static inline void tessel_v16_stream(float* p, tessel_m16 m, tessel_v16 v) {
  if (m == (tessel_m16)0xFFFF && ((uintptr_t)p & 63u) == 0)
    _mm512_stream_ps(p, v);
  else
    _mm512_mask_storeu_ps(p, m, v);
}
static inline tessel_v16 tessel_v16_splat(float x) { return _mm512_set1_ps(x); }
/* f16 and bf16 lanes: 16-bit patterns held in f32 lanes, converted bit for bit as the scalar
 * tessel_f16_to_f32 / tessel_f32_to_f16 / tessel_bf16_* do (round to nearest even; a NaN becomes
 * the scalar code's quiet NaN). Masked forms touch only the active lanes' elements; without
 * AVX512BW they go through a copy of those lanes. */
static inline __m256i tessel_v16_load_u16(const uint16_t* p, tessel_m16 m) {
#if defined(__AVX512BW__) && defined(__AVX512VL__)
  return _mm256_maskz_loadu_epi16(m, p);
#else
  uint16_t lanes[16] = {0};
  for (int i = 0; i < 16; ++i)
    if ((m >> i) & 1u) lanes[i] = p[i];
  return _mm256_loadu_si256((const __m256i*)lanes);
#endif
}
static inline void tessel_v16_store_u16(uint16_t* p, tessel_m16 m, __m256i h) {
#if defined(__AVX512BW__) && defined(__AVX512VL__)
  _mm256_mask_storeu_epi16(p, m, h);
#else
  uint16_t lanes[16];
  _mm256_storeu_si256((__m256i*)lanes, h);
  for (int i = 0; i < 16; ++i)
    if ((m >> i) & 1u) p[i] = lanes[i];
#endif
}
static inline __m256i tessel_v16_to_f16_bits(tessel_v16 v) {
  /* NaN lanes as sign | 0x7FC00000, which converts to the scalar code's sign | 0x7E00. */
  const __m512i sign = _mm512_and_si512(_mm512_castps_si512(v), _mm512_set1_epi32((int)0x80000000u));
  v = _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q),
                         _mm512_castsi512_ps(_mm512_or_si512(sign, _mm512_set1_epi32(0x7FC00000))));
  return _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
static inline __m256i tessel_v16_to_bf16_bits(tessel_v16 v) {
  const __m512i bits = _mm512_castps_si512(v);
  const __m512i odd = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
  __m512i r = _mm512_srli_epi32(_mm512_add_epi32(bits, _mm512_add_epi32(_mm512_set1_epi32(0x7FFF), odd)), 16);
  r = _mm512_mask_mov_epi32(r, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q),
                            _mm512_or_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(0x40)));
  return _mm512_cvtepi32_epi16(r);
}
static inline tessel_v16 tessel_v16_from_bf16_bits(__m256i h) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}
static inline tessel_v16 tessel_v16_load_f16(const uint16_t* p, tessel_m16 m) {
  return _mm512_cvtph_ps(tessel_v16_load_u16(p, m));
}
static inline tessel_v16 tessel_v16_load_f16_full(const uint16_t* p) {
  return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)p));
}
static inline tessel_v16 tessel_v16_load_bf16(const uint16_t* p, tessel_m16 m) {
  return tessel_v16_from_bf16_bits(tessel_v16_load_u16(p, m));
}
static inline tessel_v16 tessel_v16_load_bf16_full(const uint16_t* p) {
  return tessel_v16_from_bf16_bits(_mm256_loadu_si256((const __m256i*)p));
}
static inline void tessel_v16_store_f16(uint16_t* p, tessel_m16 m, tessel_v16 v) {
  tessel_v16_store_u16(p, m, tessel_v16_to_f16_bits(v));
}
static inline void tessel_v16_store_f16_full(uint16_t* p, tessel_v16 v) {
  _mm256_storeu_si256((__m256i*)p, tessel_v16_to_f16_bits(v));
}
static inline void tessel_v16_store_bf16(uint16_t* p, tessel_m16 m, tessel_v16 v) {
  tessel_v16_store_u16(p, m, tessel_v16_to_bf16_bits(v));
}
static inline void tessel_v16_store_bf16_full(uint16_t* p, tessel_v16 v) {
  _mm256_storeu_si256((__m256i*)p, tessel_v16_to_bf16_bits(v));
}
/* A value rounded to f16 or bf16 and widened back (a cast's result). */
static inline tessel_v16 tessel_v16_round_f16(tessel_v16 v) {
  return _mm512_cvtph_ps(tessel_v16_to_f16_bits(v));
}
static inline tessel_v16 tessel_v16_round_bf16(tessel_v16 v) {
  return tessel_v16_from_bf16_bits(tessel_v16_to_bf16_bits(v));
}
/* Transposes the 16 x 16 block whose rows are r[0..15] in place (row i, lane j becomes row j,
 * lane i): interleaves of row pairs, then of pair pairs within 128-bit lanes, then two rounds of
 * 128-bit lane shuffles; 64 shuffles, all in registers once inlined. */
static inline void tessel_v16_transpose(tessel_v16 r[16]) {
  __m512 t[16], u[16];
  for (int k = 0; k < 8; ++k) {
    t[2 * k] = _mm512_unpacklo_ps(r[2 * k], r[2 * k + 1]);
    t[2 * k + 1] = _mm512_unpackhi_ps(r[2 * k], r[2 * k + 1]);
  }
  for (int k = 0; k < 4; ++k) {
    u[4 * k] = _mm512_shuffle_ps(t[4 * k], t[4 * k + 2], 0x44);
    u[4 * k + 1] = _mm512_shuffle_ps(t[4 * k], t[4 * k + 2], 0xEE);
    u[4 * k + 2] = _mm512_shuffle_ps(t[4 * k + 1], t[4 * k + 3], 0x44);
    u[4 * k + 3] = _mm512_shuffle_ps(t[4 * k + 1], t[4 * k + 3], 0xEE);
  }
  /* u[4k + c] holds, in 128-bit lane q, rows 4k..4k+3 of column 4q + c. */
  for (int c = 0; c < 4; ++c) {
    const __m512 even = _mm512_shuffle_f32x4(u[c], u[4 + c], 0x88),
                 odd = _mm512_shuffle_f32x4(u[c], u[4 + c], 0xDD);
    const __m512 even2 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0x88),
                 odd2 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0xDD);
    r[c] = _mm512_shuffle_f32x4(even, even2, 0x88);
    r[8 + c] = _mm512_shuffle_f32x4(even, even2, 0xDD);
    r[4 + c] = _mm512_shuffle_f32x4(odd, odd2, 0x88);
    r[12 + c] = _mm512_shuffle_f32x4(odd, odd2, 0xDD);
  }
}
static inline tessel_v16 tessel_v16_add(tessel_v16 a, tessel_v16 b) { return _mm512_add_ps(a, b); }
static inline tessel_v16 tessel_v16_sub(tessel_v16 a, tessel_v16 b) { return _mm512_sub_ps(a, b); }
static inline tessel_v16 tessel_v16_mul(tessel_v16 a, tessel_v16 b) { return _mm512_mul_ps(a, b); }
static inline tessel_v16 tessel_v16_div(tessel_v16 a, tessel_v16 b) { return _mm512_div_ps(a, b); }
/* a / d for d the same in every lane: a multiplication by 1/d (within 1.5 ulp of the quotient)
 * while 1/d is a normal float, a division otherwise (zero, huge, tiny, infinite or NaN d). */
static inline tessel_v16 tessel_v16_div_by(tessel_v16 a, float d) {
  float r = 1.0f / d;
  if (fabsf(r) >= FLT_MIN && fabsf(r) <= FLT_MAX) return _mm512_mul_ps(a, _mm512_set1_ps(r));
  return _mm512_div_ps(a, _mm512_set1_ps(d));
}
static inline tessel_v16 tessel_v16_fma(tessel_v16 a, tessel_v16 b, tessel_v16 c) {
  return _mm512_fmadd_ps(a, b, c);
}
static inline tessel_v16 tessel_v16_sqrt(tessel_v16 a) { return _mm512_sqrt_ps(a); }
static inline tessel_v16 tessel_v16_abs(tessel_v16 a) { return _mm512_abs_ps(a); }
static inline tessel_v16 tessel_v16_neg(tessel_v16 a) {
  return _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(a), _mm512_set1_epi32((int)0x80000000u)));
}
/* max_ps/min_ps return their second operand when either is NaN: put a's NaNs back. */
static inline tessel_v16 tessel_v16_max(tessel_v16 a, tessel_v16 b) {
  return _mm512_mask_mov_ps(_mm512_max_ps(a, b), _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q), a);
}
static inline tessel_v16 tessel_v16_min(tessel_v16 a, tessel_v16 b) {
  return _mm512_mask_mov_ps(_mm512_min_ps(a, b), _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q), a);
}
#define tessel_v16_cmp(a, b, predicate) _mm512_cmp_ps_mask((a), (b), (predicate))
static inline tessel_v16 tessel_v16_select(tessel_m16 c, tessel_v16 a, tessel_v16 b) {
  return _mm512_mask_blend_ps(c, b, a);
}
/* Reduction accumulators: lanes outside the mask keep their value. */
static inline tessel_v16 tessel_v16_acc_fma(tessel_v16 acc, tessel_m16 m, tessel_v16 a, tessel_v16 b) {
  return _mm512_mask3_fmadd_ps(a, b, acc, m);
}
static inline tessel_v16 tessel_v16_acc_add(tessel_v16 acc, tessel_m16 m, tessel_v16 x) {
  return _mm512_mask_add_ps(acc, m, acc, x);
}
static inline tessel_v16 tessel_v16_acc_mul(tessel_v16 acc, tessel_m16 m, tessel_v16 x) {
  return _mm512_mask_mul_ps(acc, m, acc, x);
}
static inline tessel_v16 tessel_v16_acc_max(tessel_v16 acc, tessel_m16 m, tessel_v16 x) {
  return _mm512_mask_mov_ps(acc, m, tessel_v16_max(acc, x));
}
static inline tessel_v16 tessel_v16_acc_min(tessel_v16 acc, tessel_m16 m, tessel_v16 x) {
  return _mm512_mask_mov_ps(acc, m, tessel_v16_min(acc, x));
}
/* Integer lanes (index comparisons): a value in every lane, or x, x+1, ..., x+15. */
static inline __m512i tessel_v16_splat_i32(int32_t x) { return _mm512_set1_epi32(x); }
static inline __m512i tessel_v16_iota_i32(int32_t x) {
  return _mm512_add_epi32(_mm512_set1_epi32(x),
                          _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
}
static inline tessel_m16 tessel_v16_cmp_i32_eq(__m512i a, __m512i b) { return _mm512_cmpeq_epi32_mask(a, b); }
static inline tessel_m16 tessel_v16_cmp_i32_ne(__m512i a, __m512i b) {
  return _mm512_cmpneq_epi32_mask(a, b);
}
static inline tessel_m16 tessel_v16_cmp_i32_lt(__m512i a, __m512i b) { return _mm512_cmplt_epi32_mask(a, b); }
static inline tessel_m16 tessel_v16_cmp_i32_le(__m512i a, __m512i b) { return _mm512_cmple_epi32_mask(a, b); }
static inline tessel_m16 tessel_v16_cmp_i32_gt(__m512i a, __m512i b) { return _mm512_cmpgt_epi32_mask(a, b); }
static inline tessel_m16 tessel_v16_cmp_i32_ge(__m512i a, __m512i b) { return _mm512_cmpge_epi32_mask(a, b); }
static inline tessel_m16 tessel_v16_mask_and(tessel_m16 a, tessel_m16 b) { return (tessel_m16)(a & b); }
static inline tessel_m16 tessel_v16_mask_or(tessel_m16 a, tessel_m16 b) { return (tessel_m16)(a | b); }
static inline tessel_m16 tessel_v16_mask_not(tessel_m16 a) { return (tessel_m16)~a; }
/* ~c & m: the lanes of m where c is false. */
static inline tessel_m16 tessel_v16_mask_andnot(tessel_m16 c, tessel_m16 m) { return (tessel_m16)(~c & m); }
static inline tessel_v16 tessel_v16_exp(tessel_v16 x) { return tessel_exp_v16(x); }
static inline tessel_v16 tessel_v16_log(tessel_v16 x) { return tessel_log_v16(x); }
static inline tessel_v16 tessel_v16_tanh(tessel_v16 x) { return tessel_tanh_v16(x); }
static inline tessel_v16 tessel_v16_sigmoid(tessel_v16 x) { return tessel_sigmoid_v16(x); }
static inline tessel_v16 tessel_v16_erf(tessel_v16 x) { return tessel_erf_v16(x); }
static inline float tessel_v16_reduce_add(tessel_v16 v) { return _mm512_reduce_add_ps(v); }
static inline float tessel_v16_reduce_mul(tessel_v16 v) { return _mm512_reduce_mul_ps(v); }
static inline float tessel_v16_reduce_max(tessel_v16 v) {
  float lanes[16], r;
  int i;
  _mm512_storeu_ps(lanes, v);
  for (r = lanes[0], i = 1; i < 16; ++i) r = tessel_fmaxf(r, lanes[i]);
  return r;
}
static inline float tessel_v16_reduce_min(tessel_v16 v) {
  float lanes[16], r;
  int i;
  _mm512_storeu_ps(lanes, v);
  for (r = lanes[0], i = 1; i < 16; ++i) r = tessel_fminf(r, lanes[i]);
  return r;
}
#endif

#if defined(__AVX2__) && defined(__FMA__)
typedef __m256 tessel_v8;
typedef __m256i tessel_m8; /* lane masks as all-ones / all-zeros 32-bit lanes */
static inline tessel_m8 tessel_v8_tail(long remaining) {
  int n = remaining >= 8 ? 8 : (int)remaining;
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
static inline tessel_m8 tessel_v8_full(void) { return _mm256_set1_epi32(-1); }
static inline tessel_v8 tessel_v8_load(const float* p, tessel_m8 m) { return _mm256_maskload_ps(p, m); }
static inline tessel_v8 tessel_v8_load_full(const float* p) { return _mm256_loadu_ps(p); }
/* Lane i reads p[2i] of a whole vector from p[0..7] and p[7..14] (p[15] need not exist): per
 * 128-bit half a0 a2 b1 b3 | a4 a6 b5 b7, then the 64-bit pairs reordered. */
static inline tessel_v8 tessel_v8_load_stride2_full(const float* p) {
  __m256 pairs = _mm256_shuffle_ps(_mm256_loadu_ps(p), _mm256_loadu_ps(p + 7), _MM_SHUFFLE(3, 1, 2, 0));
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(pairs), _MM_SHUFFLE(3, 1, 2, 0)));
}
/* Lane i reads p[2i]: the lane masks spread to even element positions, two masked loads, then the
 * even elements of both gathered in order. */
static inline tessel_v8 tessel_v8_load_stride2(const float* p, tessel_m8 m) {
  const __m256i evenOnly = _mm256_setr_epi32(-1, 0, -1, 0, -1, 0, -1, 0);
  __m256i lo = _mm256_and_si256(_mm256_permutevar8x32_epi32(m, _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3)), evenOnly);
  __m256i hi = _mm256_and_si256(_mm256_permutevar8x32_epi32(m, _mm256_setr_epi32(4, 4, 5, 5, 6, 6, 7, 7)), evenOnly);
  __m256 a = _mm256_maskload_ps(p, lo), b = _mm256_maskload_ps(p + 8, hi);
  /* per 128-bit half: a0 a2 b0 b2 | a4 a6 b4 b6, then the 64-bit pairs reordered */
  __m256 pairs = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(pairs), _MM_SHUFFLE(3, 1, 2, 0)));
}
/* As tessel_v16_load_quotient: the lanes' quotients lie within 8 elements. */
static inline tessel_v8 tessel_v8_load_quotient(const float* p, int32_t n0, int shift, tessel_m8 m) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i n = _mm256_add_epi32(_mm256_set1_epi32(n0), lane);
  const __m256i bias = _mm256_srlv_epi32(_mm256_srai_epi32(n, 31), _mm256_set1_epi32(32 - shift));
  const __m256i q = _mm256_srav_epi32(_mm256_add_epi32(n, bias), _mm256_set1_epi32(shift));
  const __m256i at = _mm256_sub_epi32(q, _mm256_set1_epi32(n0 / (1 << shift)));
  /* The elements active lanes read, as one bit each, then as a lane mask of the load. */
  const __m256i bits = _mm256_and_si256(_mm256_sllv_epi32(_mm256_set1_epi32(1), at), m);
  __m128i any = _mm_or_si128(_mm256_castsi256_si128(bits), _mm256_extracti128_si256(bits, 1));
  any = _mm_or_si128(any, _mm_shuffle_epi32(any, 0x4E));
  any = _mm_or_si128(any, _mm_shuffle_epi32(any, 0xB1));
  const __m256i used = _mm256_cmpeq_epi32(
      _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(_mm_cvtsi128_si32(any)), lane), _mm256_set1_epi32(1)),
      _mm256_set1_epi32(1));
  return _mm256_permutevar8x32_ps(_mm256_maskload_ps(p, used), at);
}
/* AMD cores run vmaskmovps stores as microcode: on Zen 3 rows of 7 floats store 1.9x faster as
 * 4 + 2 + 1 plain stores. A mask of the first n lanes (every tail) is stored so, any other masked. */
static inline void tessel_v8_store(float* p, tessel_m8 m, tessel_v8 v) {
  unsigned bits = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(m));
  if (bits & (bits + 1u)) {
    _mm256_maskstore_ps(p, m, v);
    return;
  }
  if (bits == 0xFFu) {
    _mm256_storeu_ps(p, v);
    return;
  }
  int n = __builtin_popcount(bits);
  __m128 part = _mm256_castps256_ps128(v);
  if (n & 4) {
    _mm_storeu_ps(p, part);
    part = _mm256_extractf128_ps(v, 1);
    p += 4;
  }
  if (n & 2) {
    _mm_storel_pi((__m64*)p, part);
    part = _mm_movehl_ps(part, part);
    p += 2;
  }
  if (n & 1) _mm_store_ss(p, part);
}
static inline void tessel_v8_store_full(float* p, tessel_v8 v) { _mm256_storeu_ps(p, v); }
static inline void tessel_v8_stream_full(float* p, tessel_v8 v) {
  if (((uintptr_t)p & 31u) == 0)
    _mm256_stream_ps(p, v);
  else
    _mm256_storeu_ps(p, v);
}
/* Non-temporal store of a full vector at a 32-byte boundary, else a plain one (consecutive
 * stores fill each line's write-combining buffer by halves). */
static inline void tessel_v8_stream(float* p, tessel_m8 m, tessel_v8 v) {
  if (_mm256_movemask_ps(_mm256_castsi256_ps(m)) == 0xFF && ((uintptr_t)p & 31u) == 0)
    _mm256_stream_ps(p, v);
  else
    tessel_v8_store(p, m, v);
}
static inline tessel_v8 tessel_v8_splat(float x) { return _mm256_set1_ps(x); }
/* f16 and bf16 lanes, as the tessel_v16 forms: 8 16-bit patterns in an __m128i; f16 through
 * F16C where the kernel is compiled for it, else lane by lane with the scalar conversions. */
static inline __m128i tessel_v8_load_u16(const uint16_t* p, tessel_m8 m) {
  unsigned bits = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(m));
  if (bits == 0xFFu) return _mm_loadu_si128((const __m128i*)p);
  uint16_t lanes[8] = {0};
  for (int i = 0; i < 8; ++i)
    if ((bits >> i) & 1u) lanes[i] = p[i];
  return _mm_loadu_si128((const __m128i*)lanes);
}
static inline void tessel_v8_store_u16(uint16_t* p, tessel_m8 m, __m128i h) {
  unsigned bits = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(m));
  if (bits == 0xFFu) {
    _mm_storeu_si128((__m128i*)p, h);
    return;
  }
  uint16_t lanes[8];
  _mm_storeu_si128((__m128i*)lanes, h);
  for (int i = 0; i < 8; ++i)
    if ((bits >> i) & 1u) p[i] = lanes[i];
}
static inline __m128i tessel_v8_to_f16_bits(tessel_v8 v) {
#if defined(__F16C__)
  const __m256 nan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
  const __m256 quiet =
      _mm256_or_ps(_mm256_and_ps(v, _mm256_castsi256_ps(_mm256_set1_epi32((int)0x80000000u))),
                   _mm256_castsi256_ps(_mm256_set1_epi32(0x7FC00000)));
  return _mm256_cvtps_ph(_mm256_blendv_ps(v, quiet, nan), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
#else
  float f[8];
  uint16_t h[8];
  _mm256_storeu_ps(f, v);
  for (int i = 0; i < 8; ++i) h[i] = tessel_f32_to_f16(f[i]);
  return _mm_loadu_si128((const __m128i*)h);
#endif
}
static inline tessel_v8 tessel_v8_from_f16_bits(__m128i h) {
#if defined(__F16C__)
  return _mm256_cvtph_ps(h);
#else
  uint16_t b[8];
  float f[8];
  _mm_storeu_si128((__m128i*)b, h);
  for (int i = 0; i < 8; ++i) f[i] = tessel_f16_to_f32(b[i]);
  return _mm256_loadu_ps(f);
#endif
}
static inline __m128i tessel_v8_to_bf16_bits(tessel_v8 v) {
  const __m256i bits = _mm256_castps_si256(v);
  const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
  __m256i r = _mm256_srli_epi32(_mm256_add_epi32(bits, _mm256_add_epi32(_mm256_set1_epi32(0x7FFF), odd)), 16);
  const __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
  r = _mm256_blendv_epi8(r, _mm256_or_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(0x40)), nan);
  /* Every lane is below 2^16: the unsigned saturating pack keeps it. */
  return _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
}
static inline tessel_v8 tessel_v8_from_bf16_bits(__m128i h) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}
static inline tessel_v8 tessel_v8_load_f16(const uint16_t* p, tessel_m8 m) {
  return tessel_v8_from_f16_bits(tessel_v8_load_u16(p, m));
}
static inline tessel_v8 tessel_v8_load_f16_full(const uint16_t* p) {
  return tessel_v8_from_f16_bits(_mm_loadu_si128((const __m128i*)p));
}
static inline tessel_v8 tessel_v8_load_bf16(const uint16_t* p, tessel_m8 m) {
  return tessel_v8_from_bf16_bits(tessel_v8_load_u16(p, m));
}
static inline tessel_v8 tessel_v8_load_bf16_full(const uint16_t* p) {
  return tessel_v8_from_bf16_bits(_mm_loadu_si128((const __m128i*)p));
}
static inline void tessel_v8_store_f16(uint16_t* p, tessel_m8 m, tessel_v8 v) {
  tessel_v8_store_u16(p, m, tessel_v8_to_f16_bits(v));
}
static inline void tessel_v8_store_f16_full(uint16_t* p, tessel_v8 v) {
  _mm_storeu_si128((__m128i*)p, tessel_v8_to_f16_bits(v));
}
static inline void tessel_v8_store_bf16(uint16_t* p, tessel_m8 m, tessel_v8 v) {
  tessel_v8_store_u16(p, m, tessel_v8_to_bf16_bits(v));
}
static inline void tessel_v8_store_bf16_full(uint16_t* p, tessel_v8 v) {
  _mm_storeu_si128((__m128i*)p, tessel_v8_to_bf16_bits(v));
}
static inline tessel_v8 tessel_v8_round_f16(tessel_v8 v) {
  return tessel_v8_from_f16_bits(tessel_v8_to_f16_bits(v));
}
static inline tessel_v8 tessel_v8_round_bf16(tessel_v8 v) {
  return tessel_v8_from_bf16_bits(tessel_v8_to_bf16_bits(v));
}
/* Transposes the 8 x 8 block whose rows are r[0..7] in place, as tessel_v16_transpose does. */
static inline void tessel_v8_transpose(tessel_v8 r[8]) {
  __m256 t[8], u[8];
  for (int k = 0; k < 4; ++k) {
    t[2 * k] = _mm256_unpacklo_ps(r[2 * k], r[2 * k + 1]);
    t[2 * k + 1] = _mm256_unpackhi_ps(r[2 * k], r[2 * k + 1]);
  }
  for (int k = 0; k < 2; ++k) {
    u[4 * k] = _mm256_shuffle_ps(t[4 * k], t[4 * k + 2], 0x44);
    u[4 * k + 1] = _mm256_shuffle_ps(t[4 * k], t[4 * k + 2], 0xEE);
    u[4 * k + 2] = _mm256_shuffle_ps(t[4 * k + 1], t[4 * k + 3], 0x44);
    u[4 * k + 3] = _mm256_shuffle_ps(t[4 * k + 1], t[4 * k + 3], 0xEE);
  }
  for (int c = 0; c < 4; ++c) {
    r[c] = _mm256_permute2f128_ps(u[c], u[4 + c], 0x20);
    r[4 + c] = _mm256_permute2f128_ps(u[c], u[4 + c], 0x31);
  }
}
static inline tessel_v8 tessel_v8_add(tessel_v8 a, tessel_v8 b) { return _mm256_add_ps(a, b); }
static inline tessel_v8 tessel_v8_sub(tessel_v8 a, tessel_v8 b) { return _mm256_sub_ps(a, b); }
static inline tessel_v8 tessel_v8_mul(tessel_v8 a, tessel_v8 b) { return _mm256_mul_ps(a, b); }
static inline tessel_v8 tessel_v8_div(tessel_v8 a, tessel_v8 b) { return _mm256_div_ps(a, b); }
/* As tessel_v16_div_by. */
static inline tessel_v8 tessel_v8_div_by(tessel_v8 a, float d) {
  float r = 1.0f / d;
  if (fabsf(r) >= FLT_MIN && fabsf(r) <= FLT_MAX) return _mm256_mul_ps(a, _mm256_set1_ps(r));
  return _mm256_div_ps(a, _mm256_set1_ps(d));
}
static inline tessel_v8 tessel_v8_fma(tessel_v8 a, tessel_v8 b, tessel_v8 c) {
  return _mm256_fmadd_ps(a, b, c);
}
static inline tessel_v8 tessel_v8_sqrt(tessel_v8 a) { return _mm256_sqrt_ps(a); }
static inline tessel_v8 tessel_v8_abs(tessel_v8 a) {
  return _mm256_and_ps(a, _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF)));
}
static inline tessel_v8 tessel_v8_neg(tessel_v8 a) {
  return _mm256_xor_ps(a, _mm256_castsi256_ps(_mm256_set1_epi32((int)0x80000000u)));
}
static inline tessel_v8 tessel_v8_max(tessel_v8 a, tessel_v8 b) {
  return _mm256_blendv_ps(_mm256_max_ps(a, b), a, _mm256_cmp_ps(a, a, _CMP_UNORD_Q));
}
static inline tessel_v8 tessel_v8_min(tessel_v8 a, tessel_v8 b) {
  return _mm256_blendv_ps(_mm256_min_ps(a, b), a, _mm256_cmp_ps(a, a, _CMP_UNORD_Q));
}
#define tessel_v8_cmp(a, b, predicate) _mm256_castps_si256(_mm256_cmp_ps((a), (b), (predicate)))
static inline tessel_v8 tessel_v8_select(tessel_m8 c, tessel_v8 a, tessel_v8 b) {
  return _mm256_blendv_ps(b, a, _mm256_castsi256_ps(c));
}
static inline tessel_v8 tessel_v8_acc_fma(tessel_v8 acc, tessel_m8 m, tessel_v8 a, tessel_v8 b) {
  return tessel_v8_select(m, _mm256_fmadd_ps(a, b, acc), acc);
}
static inline tessel_v8 tessel_v8_acc_add(tessel_v8 acc, tessel_m8 m, tessel_v8 x) {
  return tessel_v8_select(m, _mm256_add_ps(acc, x), acc);
}
static inline tessel_v8 tessel_v8_acc_mul(tessel_v8 acc, tessel_m8 m, tessel_v8 x) {
  return tessel_v8_select(m, _mm256_mul_ps(acc, x), acc);
}
static inline tessel_v8 tessel_v8_acc_max(tessel_v8 acc, tessel_m8 m, tessel_v8 x) {
  return tessel_v8_select(m, tessel_v8_max(acc, x), acc);
}
static inline tessel_v8 tessel_v8_acc_min(tessel_v8 acc, tessel_m8 m, tessel_v8 x) {
  return tessel_v8_select(m, tessel_v8_min(acc, x), acc);
}
/* Integer lanes (index comparisons): a value in every lane, or x, x+1, ..., x+7. AVX2 compares
 * only == and >, the others are built from them. */
static inline __m256i tessel_v8_splat_i32(int32_t x) { return _mm256_set1_epi32(x); }
static inline __m256i tessel_v8_iota_i32(int32_t x) {
  return _mm256_add_epi32(_mm256_set1_epi32(x), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
static inline tessel_m8 tessel_v8_cmp_i32_eq(__m256i a, __m256i b) { return _mm256_cmpeq_epi32(a, b); }
static inline tessel_m8 tessel_v8_cmp_i32_gt(__m256i a, __m256i b) { return _mm256_cmpgt_epi32(a, b); }
static inline tessel_m8 tessel_v8_cmp_i32_lt(__m256i a, __m256i b) { return _mm256_cmpgt_epi32(b, a); }
static inline tessel_m8 tessel_v8_cmp_i32_ne(__m256i a, __m256i b) {
  return _mm256_xor_si256(_mm256_cmpeq_epi32(a, b), _mm256_set1_epi32(-1));
}
static inline tessel_m8 tessel_v8_cmp_i32_le(__m256i a, __m256i b) {
  return _mm256_xor_si256(_mm256_cmpgt_epi32(a, b), _mm256_set1_epi32(-1));
}
static inline tessel_m8 tessel_v8_cmp_i32_ge(__m256i a, __m256i b) {
  return _mm256_xor_si256(_mm256_cmpgt_epi32(b, a), _mm256_set1_epi32(-1));
}
static inline tessel_m8 tessel_v8_mask_and(tessel_m8 a, tessel_m8 b) { return _mm256_and_si256(a, b); }
static inline tessel_m8 tessel_v8_mask_or(tessel_m8 a, tessel_m8 b) { return _mm256_or_si256(a, b); }
static inline tessel_m8 tessel_v8_mask_not(tessel_m8 a) { return _mm256_xor_si256(a, _mm256_set1_epi32(-1)); }
static inline tessel_m8 tessel_v8_mask_andnot(tessel_m8 c, tessel_m8 m) { return _mm256_andnot_si256(c, m); }
static inline tessel_v8 tessel_v8_exp(tessel_v8 x) { return tessel_exp_v8(x); }
static inline tessel_v8 tessel_v8_log(tessel_v8 x) { return tessel_log_v8(x); }
static inline tessel_v8 tessel_v8_tanh(tessel_v8 x) { return tessel_tanh_v8(x); }
static inline tessel_v8 tessel_v8_sigmoid(tessel_v8 x) { return tessel_sigmoid_v8(x); }
static inline tessel_v8 tessel_v8_erf(tessel_v8 x) { return tessel_erf_v8(x); }
static inline float tessel_v8_reduce_add(tessel_v8 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
  return _mm_cvtss_f32(s);
}
static inline float tessel_v8_reduce_mul(tessel_v8 v) {
  float lanes[8], r = 1.0f;
  int i;
  _mm256_storeu_ps(lanes, v);
  for (i = 0; i < 8; ++i) r *= lanes[i];
  return r;
}
static inline float tessel_v8_reduce_max(tessel_v8 v) {
  float lanes[8], r;
  int i;
  _mm256_storeu_ps(lanes, v);
  for (r = lanes[0], i = 1; i < 8; ++i) r = tessel_fmaxf(r, lanes[i]);
  return r;
}
static inline float tessel_v8_reduce_min(tessel_v8 v) {
  float lanes[8], r;
  int i;
  _mm256_storeu_ps(lanes, v);
  for (r = lanes[0], i = 1; i < 8; ++i) r = tessel_fminf(r, lanes[i]);
  return r;
}
#endif

/* Orders the non-temporal stores of tessel_v*_stream before whatever follows. */
static inline void tessel_stream_fence(void) { _mm_sfence(); }

#endif

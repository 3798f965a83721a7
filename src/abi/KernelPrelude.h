/* Tessel kernel prelude: the C every generated kernel starts with. It is plain
 * C99 (also valid C++) so the compiler's C++ side can use the same conversions
 * and status codes. f16 and bf16 are stored as 16-bit patterns and computed in f32. */
#ifndef TESSEL_KERNEL_PRELUDE_H
#define TESSEL_KERNEL_PRELUDE_H
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* What a kernel returns. */
#define TESSEL_STATUS_OK 0
#define TESSEL_STATUS_BAD_INDEX 1     /* a read whose index could not be proven in range was out of range */
#define TESSEL_STATUS_OUT_OF_MEMORY 2 /* scratch buffers could not be allocated */

typedef uint16_t tessel_f16;
typedef uint16_t tessel_bf16;

static inline float tessel_bf16_to_f32(tessel_bf16 h) {
  uint32_t bits = (uint32_t)h << 16;
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

static inline tessel_bf16 tessel_f32_to_bf16(float f) {
  uint32_t bits;
  memcpy(&bits, &f, 4);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return (tessel_bf16)((bits >> 16) | 0x40u); /* NaN */
  bits += 0x7FFFu + ((bits >> 16) & 1u); /* round to nearest even */
  return (tessel_bf16)(bits >> 16);
}

static inline float tessel_f16_to_f32(tessel_f16 h) {
  uint32_t sign = (uint32_t)(h >> 15) << 31;
  uint32_t exp = (h >> 10) & 0x1Fu;
  uint32_t man = h & 0x3FFu;
  float f;
  if (exp == 0) {
    f = ldexpf((float)man, -24); /* zero or subnormal */
    if (sign) f = -f;
    return f;
  }
  uint32_t bits =
      exp == 31
          ? (sign | 0x7F800000u | (man << 13) | (man ? 0x400000u : 0u)) /* NaNs come out quiet, as F16C's */
          : (sign | ((exp + 112u) << 23) | (man << 13));
  memcpy(&f, &bits, 4);
  return f;
}

static inline tessel_f16 tessel_f32_to_f16(float f) {
  uint32_t bits;
  memcpy(&bits, &f, 4);
  uint16_t sign = (uint16_t)((bits >> 16) & 0x8000u);
  float a = fabsf(f);
  if (a != a) return (tessel_f16)(sign | 0x7E00u);
  if (a >= 65520.0f) return (tessel_f16)(sign | 0x7C00u);
  if (a < 6.103515625e-05f) { /* subnormal: quantum 2^-24, ties to even */
    float q = nearbyintf(a * 16777216.0f);
    return (tessel_f16)(sign | (uint16_t)q);
  }
  uint32_t abits;
  memcpy(&abits, &a, 4);
  abits += 0xFFFu + ((abits >> 13) & 1u);
  uint32_t exp = (abits >> 23) - 112u;
  uint32_t man = (abits >> 13) & 0x3FFu;
  return (tessel_f16)(sign | (uint16_t)(exp << 10) | (uint16_t)man);
}

/* C-cast semantics with defined behaviour: truncate toward zero, wrap modulo 2^n. */
static inline int64_t tessel_trunc_i64(double v) {
  if (v != v) return 0;
  double t = trunc(v);
  if (t > 9.2e18 || t < -9.2e18) return 0;
  return (int64_t)t;
}
static inline int32_t tessel_to_i32(double v) { return (int32_t)(uint32_t)(uint64_t)tessel_trunc_i64(v); }
static inline int8_t tessel_to_i8(double v) { return (int8_t)(uint8_t)(uint64_t)tessel_trunc_i64(v); }
static inline uint8_t tessel_to_u8(double v) { return (uint8_t)(uint64_t)tessel_trunc_i64(v); }

/* Integer division and remainder that never trap: x/0 = 0 and x%0 = 0. */
static inline int32_t tessel_idiv(int32_t a, int32_t b) {
  if (b == 0) return 0;
  if (b == -1) return (int32_t)(0u - (uint32_t)a);
  return a / b;
}
static inline int32_t tessel_imod(int32_t a, int32_t b) {
  if (b == 0 || b == -1) return 0;
  return a % b;
}
static inline int32_t tessel_iadd(int32_t a, int32_t b) { return (int32_t)((uint32_t)a + (uint32_t)b); }
static inline int32_t tessel_isub(int32_t a, int32_t b) { return (int32_t)((uint32_t)a - (uint32_t)b); }
static inline int32_t tessel_imul(int32_t a, int32_t b) { return (int32_t)((uint32_t)a * (uint32_t)b); }
static inline int32_t tessel_ineg(int32_t a) { return (int32_t)(0u - (uint32_t)a); }
static inline int32_t tessel_iabs(int32_t a) { return a < 0 ? tessel_ineg(a) : a; }
static inline int32_t tessel_imin(int32_t a, int32_t b) { return a < b ? a : b; }
static inline int32_t tessel_imax(int32_t a, int32_t b) { return a > b ? a : b; }

static inline float tessel_sigmoidf(float x) { return 1.0f / (1.0f + expf(-x)); }
static inline double tessel_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
static inline float tessel_rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double tessel_rsqrt(double x) { return 1.0 / sqrt(x); }
/* min/max with the C fmin/fmax NaN rules would hide NaNs; these propagate them. */
static inline float tessel_fminf(float a, float b) { return (a != a || a < b) ? a : b; }
static inline float tessel_fmaxf(float a, float b) { return (a != a || a > b) ? a : b; }
static inline double tessel_fmin(double a, double b) { return (a != a || a < b) ? a : b; }
static inline double tessel_fmax(double a, double b) { return (a != a || a > b) ? a : b; }

/* Floor division for index arithmetic produced by the AST generator. */
static inline long tessel_floord(long a, long b) { return (a >= 0) ? a / b : -((-a + b - 1) / b); }
static inline long tessel_lmin(long a, long b) { return a < b ? a : b; }
static inline long tessel_lmax(long a, long b) { return a > b ? a : b; }

/* Unproven index (indirect read, data-dependent guard): out of range sets *status and reads element 0. */
static inline long tessel_checked_index(int64_t i, long extent, int* status) {
  if (i < 0 || i >= extent) {
    __atomic_store_n(status, TESSEL_STATUS_BAD_INDEX, __ATOMIC_RELAXED);
    return 0;
  }
  return (long)i;
}

static inline void* tessel_alloc(size_t bytes) { return aligned_alloc(64, (bytes + 63) / 64 * 64 + 64); }

/* A scratch array outlives its call in a slot of its own: freed, tens of MB
 * go back to the system and every call pays their page faults again (smart
 * fusion's Harris at 2052^2: 40 ms per call instead of 19). A concurrent call
 * finds the slot empty and allocates its own. */
static inline void* tessel_take(void** slot, size_t bytes) {
  void* p = __atomic_exchange_n(slot, (void*)0, __ATOMIC_ACQ_REL);
  return p ? p : tessel_alloc(bytes);
}
static inline void tessel_keep(void** slot, void* p) { free(__atomic_exchange_n(slot, p, __ATOMIC_ACQ_REL)); }

#endif

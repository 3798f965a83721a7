/* Wrong code from GCC 12.2 at -O3 -fno-tree-loop-vectorize (tessel fuzz, program seed
 * 6736012150187660626: a max-fusion schedule with two-level tiles, reduced by cvise and by hand).
 * The else branch writes a temporary t4 in an inner loop and reads it right after, in the same
 * iteration; loop distribution moves some of the reads before the writes, so they see the zeros
 * of the memset. Correct with -O2, with -fno-tree-loop-distribution and with clang 14; clean
 * under ASan and UBSan. The kernel compiler's flags must compile it correctly
 * (tests/runtime/KernelCompilerTest.cpp).
 * Standalone: gcc -O3 -fno-tree-loop-vectorize -DSTANDALONE this.c -lm && ./a.out */
#include <math.h>
#include <stdlib.h>
#include <string.h>

static long lmin(long a, long b) { return a < b ? a : b; }
static long lmax(long a, long b) { return a > b ? a : b; }

void tessel_gcc12_distribution_kernel(const float* restrict in, float* restrict t2, float* restrict t5);
void tessel_gcc12_distribution_kernel(const float* restrict in, float* restrict t2, float* restrict t5) {
  float* restrict t4 = malloc(13 * 13 * 13 * sizeof(float));
  if (!t4) return;
  memset(t4, 0, 13 * 13 * 13 * sizeof(float));
  for (long c1 = -4; c1 <= 11; c1 += 4) {
    t2[0] = 0 - in[0];
    for (long c2 = 0; c2 <= 12; c2 += 4)
      if (c1 + c2 >= 12) {
        for (long c4 = 0; c4 <= c1 + 3; c4 += 3)
          for (long c5 = 0; c5 <= lmin(12, c2 + 3); c5 += 3)
            for (long c6 = 0; c6 <= lmin(c1 + 3, c4 + 2); c6 += 1)
              for (long c7 = lmax(c2, c5); c7 <= lmin(lmin(12, c2 + 3), c5 + 2); c7 += 1)
                for (long c8 = 0; c8 <= 12; c8 += 1) {
                  long i0 = c7 - 1, i1 = 11 - c6;
                  t5[i0 * 13 + i1] = expf(tanhf(t4[(1 + i1) * 13]));
                }
      } else {
        for (long c4 = lmax(-3, c1); c4 <= c1 + 3; c4 += 3)
          for (long c5 = 0; c5 <= 11; c5 += 3)
            for (long c6 = lmax(lmax(-1, c1), c4); c6 <= lmin(c1 + 3, c4 + 2); c6 += 1)
              for (long c7 = lmax(0, c5); c7 <= lmin(lmin(12, 11 - c1), c5 + 2); c7 += 1) {
                if (c6 >= 0)
                  for (long c8 = 0; c8 <= 12; c8 += 1) t4[(c7 * 13 + 12 - c6) * 13 + 12 - c8] = t2[0] * 0.5f;
                if (c7 >= 1) {
                  long i0 = c7 - 1, i1 = 11 - c6;
                  t5[i0 * 13 + i1] = expf(tanhf(i1 + 1 < 13 ? t4[((1 + i0) * 13 + 1 + i1) * 13 + 1 + i0] : 0));
                }
              }
      }
  }
  free(t4);
}

/* The number of wrong results (0 when compiled correctly). Every element with both indices below
 * 12 reads a value of t4 written before it: t2 * 0.5 = 0.5. */
int miscompiled_elements(void) {
  static float in[1] = {-1.0f}, t2[1], t5[13 * 13];
  for (int i = 0; i < 13 * 13; i++) t5[i] = -1.0f;
  tessel_gcc12_distribution_kernel(in, t2, t5);
  float want = expf(tanhf(0.5f));
  int bad = 0;
  for (int i0 = 0; i0 < 12; i0++)
    for (int i1 = 0; i1 < 12; i1++) bad += t5[i0 * 13 + i1] != want;
  return bad;
}

#ifdef STANDALONE
#include <stdio.h>
int main(void) {
  int bad = miscompiled_elements();
  printf("%s (%d wrong)\n", bad ? "miscompiled" : "ok", bad);
  return bad != 0;
}
#endif

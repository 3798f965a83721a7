/* Wrong code from GCC 12.2 at -O3 (tessel fuzz, program seed 10556639686391846486: an int32
 * min-reduction with a guarded read under max fusion). GCC completely unrolls the 13-trip
 * reduction loop, if-converts the guard and vectorizes the loop around it; some results come
 * out one lower. Correct with -O2 -ftree-vectorize, -fno-tree-loop-vectorize,
 * -fno-tree-loop-if-convert, -fdisable-tree-cunrolli, and with clang 14. The kernel compiler's
 * flags must compile it correctly (tests/runtime/KernelCompilerTest.cpp).
 * Standalone: gcc -O3 -mavx2 -DSTANDALONE this.c && ./a.out */
static int imin(int a, int b) { return a < b ? a : b; }

void tessel_gcc12_kernel(const int* in, int* out);
void tessel_gcc12_kernel(const int* in, int* out) {
  for (long c0 = 0; c0 <= 12; c0++) {
    for (long c1 = 12 - c0; c1 <= 12; c1++) {
      long i0 = c0 + c1 - 12, i1 = 12 - c0;
      out[i0 * 13 + i1] = 0;
      for (long r = 0; r <= 12; r++)
        out[i0 * 13 + i1] = imin(out[i0 * 13 + i1], (int)i0 + 1 < 13 ? in[(1 + i0) * 13 + r] : 0);
    }
    for (long c1 = 13; c1 <= 25; c1++)
      if (c0 + c1 <= 24)
        for (long r = 0; r <= 12; r++) {
          long i0 = c0 + c1 - 12, i1 = 12 - c0;
          out[i0 * 13 + i1] = imin(out[i0 * 13 + i1], (int)i0 + 1 < 13 ? in[(1 + i0) * 13 + r] : 0);
        }
  }
}

/* The number of wrong results (0 when compiled correctly). */
int miscompiled_elements(void) {
  static int in[13 * 13 * 13], out[13 * 13];
  for (int i = 0; i < 13 * 13 * 13; i++) in[i] = (int)(((unsigned)i * 2654435761u) >> 20) % 17 - 8;
  for (int i = 0; i < 13 * 13; i++) out[i] = 0;
  tessel_gcc12_kernel(in, out);
  int bad = 0;
  for (int i0 = 0; i0 < 13; i0++)
    for (int i1 = 0; i1 < 13; i1++) {
      int want = 0;
      for (int r = 0; r < 13; r++) want = imin(want, i0 + 1 < 13 ? in[(1 + i0) * 13 + r] : 0);
      bad += out[i0 * 13 + i1] != want;
    }
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

#!/usr/bin/env python3
"""Writes bench/suites/sizes.suite, the size sweep of issue 43 (docs/performance.md).

Families (each a `sweep=FAMILY:X` of `tessel bench`, plotted by scripts/plot-sweep.py):
  mm_k256, mm_k1024   square matmul M = N = X, K = 256 or 1024, X over 1..64 and
                      primes and their neighbours up to 2048;
  bmm_qk, bmm_av      12 heads of attention's products Q.K^T (X x 64 by 64 x X) and
                      P.V (X x X by X x 64) over odd sequence lengths X;
  bmm_heads           X heads of 128 x 64 by 64 x 128 over odd head counts;
  conv3x3_c37, conv3x3_c64, conv1x1_c129
                      NHWC convolutions (zero padding "same") at spatial sizes X.
Usage: scripts/make-sizes-suite.py > bench/suites/sizes.suite
"""

SMALL = list(range(1, 65))
LARGE = [67, 96, 97, 127, 128, 129, 191, 193, 251, 256, 257, 383, 509, 512, 513, 769, 1000, 1009,
         1021, 1024, 1025, 1531, 2039, 2048]
SEQUENCES = [7, 13, 31, 64, 97, 127, 128, 197, 256, 384, 509]
HEADS = [1, 3, 5, 7, 9, 11, 12, 13, 15]
SPATIAL = [7, 13, 14, 17, 28, 56]
MATMUL_PEERS = "peers=onednn.matmul,openblas.sgemm"
BMM_PEERS = "peers=onednn.batch_matmul,openblas.sgemm_batched"
CONV_PEERS = "peers=onednn.conv2d,xnnpack.conv2d"


def line(name, program, sizes, family, x, peers):
    return f"{name:<22} {program:<38} {sizes:<36} sweep={family}:{x:<5} {peers}"


def main():
    out = [("# " + l).rstrip() for l in __doc__.strip().split("\n")] + [
           "#",
           "# Run: build/tessel bench bench/suites/sizes.suite --threads 1,2 --measure --csv sizes.csv",
           "# Plot: scripts/plot-sweep.py sizes.csv -o docs/sizes-sweep.svg",
           ""]
    for k in (256, 1024):
        for x in SMALL + LARGE:
            out.append(line(f"mm_k{k}_{x}", "examples/matmul.tc", f"M={x} N={x} K={k}", f"mm_k{k}", x,
                            MATMUL_PEERS))
    for s in SEQUENCES:
        out.append(line(f"bmm_qk_{s}", "examples/batch_matmul.tc", f"BS=12 M={s} N={s} K=64", "bmm_qk", s,
                        BMM_PEERS))
        out.append(line(f"bmm_av_{s}", "examples/batch_matmul.tc", f"BS=12 M={s} N=64 K={s}", "bmm_av", s,
                        BMM_PEERS))
    for h in HEADS:
        out.append(line(f"bmm_heads_{h}", "examples/batch_matmul.tc", f"BS={h} M=128 N=128 K=64",
                        "bmm_heads", h, BMM_PEERS))
    for c, r in ((37, 3), (64, 3), (129, 1)):
        for x in SPATIAL:
            out.append(line(f"conv{r}x{r}_c{c}_{x}", "bench/programs/conv_nhwc_same.tc",
                            f"N=1 H={x} W={x} C={c} K={c} R={r}", f"conv{r}x{r}_c{c}", x, CONV_PEERS))
    print("\n".join(out))


if __name__ == "__main__":
    main()

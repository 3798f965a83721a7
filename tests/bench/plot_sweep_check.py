"""Checks scripts/plot-sweep.py on a small hand-made CSV (run by ctest with /usr/bin/python3):
the SVG is well-formed XML with a panel per family and thread count and a line per contestant."""
import csv
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "plot-sweep.py")
COLUMNS = ("case,threads,contestant,status,median_ms,runs,ratio,gflops,gbps,bound,percent_of_peak,check,"
           "flops,bytes,intensity,message,sweep,sweep_x").split(",")


def row(case, threads, contestant, ms, flops, family, x):
    values = dict.fromkeys(COLUMNS, "")
    values.update(case=case, threads=threads, contestant=contestant, status="ok", median_ms=ms,
                  check="pass" if contestant == "tessel" else "", flops=flops, sweep=family, sweep_x=x)
    return values


def main():
    with tempfile.TemporaryDirectory() as tmp:
        results = os.path.join(tmp, "sweep.csv")
        with open(results, "w", newline="") as f:
            w = csv.DictWriter(f, COLUMNS)
            w.writeheader()
            for x in (1, 7, 64, 127, 1009):
                flops = 2 * x * x * 256
                for threads in (1, 2):
                    w.writerow(row(f"mm_{x}", threads, "tessel", 0.01 * x, flops, "mm_k256", x))
                    w.writerow(row(f"mm_{x}", threads, "onednn.matmul", 0.012 * x, flops, "mm_k256", x))
            w.writerow(row("other", 1, "tessel", 1.0, 1000, "", ""))
        out = os.path.join(tmp, "sweep.svg")
        subprocess.run([sys.executable, SCRIPT, results, "-o", out], check=True)
        svg = ET.parse(out).getroot()
        lines = [e for e in svg.iter() if e.tag.endswith("polyline")]
        # Two panels (1 and 2 threads), each a line for tessel and one for oneDNN.
        assert len(lines) == 4, f"{len(lines)} polylines"
        text = "".join(e.text or "" for e in svg.iter() if e.tag.endswith("text"))
        assert "mm_k256" in text and "onednn.matmul" in text, text
        bad = subprocess.run([sys.executable, SCRIPT, os.path.join(tmp, "missing.csv"), "-o", out],
                             capture_output=True, text=True)
        assert bad.returncode != 0 and "missing.csv" in bad.stderr, bad.stderr
    print("plot-sweep: ok")


if __name__ == "__main__":
    main()

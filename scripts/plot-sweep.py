#!/usr/bin/env python3
"""Draws the size sweeps of `tessel bench` CSVs as one self-contained SVG.

Usage:
  scripts/plot-sweep.py RESULTS.csv [MORE.csv ...] -o OUT.svg [--threads N] [--family REGEX]

Reads the CSVs `tessel bench --csv` writes and keeps the rows of cases with a
sweep family (a suite's `sweep=FAMILY:X`) that were timed (status ok; not
Tessel's rows whose check FAILed). Draws one panel per family and thread
count: X on a log2 axis (1 to 2048, further when a case lies beyond), GFLOP/s
from 0, one line with markers for Tessel and one for each other contestant
(peers, and `tessel[...]` of --versus), in the same color in every panel, with
one legend above the panels. When several CSVs hold the same case, thread
count and contestant (repeated runs), the point is the median of their
GFLOP/s, each computed from the row's median_ms and flops.

Standard library only (no matplotlib): runs with /usr/bin/python3. The logic
is importable: read_rows, sweep_panels, render_svg, main(argv).
"""

import argparse
import csv
import math
import re
import statistics
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from xml.sax.saxutils import escape

TESSEL = "tessel"
TESSEL_COLOR = "#d62728"
PEER_COLORS = ["#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#17becf", "#e377c2", "#7f7f7f",
               "#bcbd22"]
MARKERS = ["circle", "square", "triangle", "diamond", "down"]
X_MIN, X_MAX = 1, 2048  # the axis always spans these, so panels and runs compare at a glance
REQUIRED_COLUMNS = {"case", "threads", "contestant", "status", "median_ms", "flops", "sweep", "sweep_x"}

# Layout, in SVG user units (pixels).
PANEL_W, PANEL_H = 420, 280
PLOT_LEFT, PLOT_RIGHT, PLOT_TOP, PLOT_BOTTOM = 58, 16, 34, 46  # inside a panel
COLUMNS = 3
MARGIN = 16
FONT = "font-family=\"sans-serif\""


@dataclass
class Point:
    x: int
    gflops: float
    case: str


@dataclass
class Panel:
    family: str
    threads: int
    series: dict = field(default_factory=dict)  # contestant -> [Point], sorted by x

    def title(self):
        return f"{self.family}, {self.threads} thread{'s' if self.threads != 1 else ''}"


def read_rows(paths):
    """Every row of the CSVs as a dict; SystemExit naming a file that is not a bench CSV with sweeps."""
    rows = []
    for path in paths:
        try:
            with open(path, newline="", encoding="utf-8") as f:
                reader = csv.DictReader(f)
                missing = REQUIRED_COLUMNS - set(reader.fieldnames or [])
                if missing:
                    raise SystemExit(f"plot-sweep: {path}: not a tessel bench CSV with sweep columns "
                                     f"(missing: {', '.join(sorted(missing))})")
                rows.extend(reader)
        except OSError as e:
            raise SystemExit(f"plot-sweep: cannot read {path}: {e.strerror}")
    return rows


def row_gflops(row):
    """GFLOP/s of a timed row from its median_ms and flops; None when it was not timed, or when it is
    a Tessel result that FAILed its check (as in the report's sweep summary: a wrong result's speed
    says nothing)."""
    try:
        ms, flops = float(row["median_ms"]), float(row["flops"])
    except ValueError:
        return None
    if row["status"] != "ok" or ms <= 0 or flops <= 0 or (row.get("check") or "").startswith("FAIL"):
        return None
    return flops / (ms / 1000) / 1e9


def sweep_panels(rows, threads=None, family=None):
    """Panels of the rows with a sweep: families in the order they first appear (the suite's), each by
    thread count.

    threads: keep only this thread count; family: a regular expression searched in the family names.
    """
    pattern = re.compile(family) if family else None
    samples = defaultdict(list)  # (family, threads, contestant, case, x) -> GFLOP/s of each CSV
    order = {}  # family -> rank of its first row
    for row in rows:
        name = row.get("sweep") or ""
        if not name or (pattern and not pattern.search(name)):
            continue
        order.setdefault(name, len(order))
        if threads is not None and int(row["threads"]) != threads:
            continue
        rate = row_gflops(row)
        if rate is None:
            continue
        samples[(name, int(row["threads"]), row["contestant"], row["case"], int(row["sweep_x"]))].append(rate)
    panels = {}
    for (name, thr, contestant, case, x), rates in samples.items():
        panel = panels.setdefault((name, thr), Panel(name, thr))
        panel.series.setdefault(contestant, []).append(Point(x, statistics.median(rates), case))
    for panel in panels.values():
        for points in panel.series.values():
            points.sort(key=lambda p: (p.x, p.case))
    return [panels[key] for key in sorted(panels, key=lambda k: (order[k[0]], k[1]))]


def contestant_styles(panels):
    """contestant -> (color, marker): Tessel first and red, the others in name order."""
    names = sorted({c for p in panels for c in p.series}, key=lambda c: (c != TESSEL, c))
    styles = {}
    peers = 0
    for name in names:
        if name == TESSEL:
            styles[name] = (TESSEL_COLOR, MARKERS[0])
        else:
            styles[name] = (PEER_COLORS[peers % len(PEER_COLORS)], MARKERS[1 + peers % (len(MARKERS) - 1)])
            peers += 1
    return styles


def nice_step(span, ticks=5):
    """A step of 1, 2, 2.5 or 5 times a power of ten giving about `ticks` intervals over span."""
    raw = span / ticks if span > 0 else 1
    power = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if m * power >= raw:
            return m * power
    return 10 * power


def tick_label(v):
    return format(round(v, 9), "g")


def marker(shape, x, y, color, tip=None, r=3.5):
    """An SVG marker centred on (x, y); `tip` shows on hovering it."""
    if shape == "circle":
        tag, attrs = "circle", f'cx="{x:.1f}" cy="{y:.1f}" r="{r}"'
    elif shape == "square":
        tag, attrs = "rect", f'x="{x - r:.1f}" y="{y - r:.1f}" width="{2 * r}" height="{2 * r}"'
    else:
        corners = {
            "triangle": [(0, -1.2), (1.1, 0.8), (-1.1, 0.8)],
            "down": [(0, 1.2), (1.1, -0.8), (-1.1, -0.8)],
            "diamond": [(0, -1.3), (1.1, 0), (0, 1.3), (-1.1, 0)],
        }[shape]
        points = " ".join(f"{x + dx * r:.1f},{y + dy * r:.1f}" for dx, dy in corners)
        tag, attrs = "polygon", f'points="{points}"'
    if tip is None:
        return f'<{tag} {attrs} fill="{color}"/>'
    return f'<{tag} {attrs} fill="{color}"><title>{escape(tip)}</title></{tag}>'


def x_range(panels):
    """The log2 axis' ends: X_MIN..X_MAX, widened to powers of two around any case outside."""
    xs = [pt.x for p in panels for pts in p.series.values() for pt in pts]
    lo = min([X_MIN] + xs)
    hi = max([X_MAX] + xs)
    return 2 ** math.floor(math.log2(lo)), 2 ** math.ceil(math.log2(hi))


def render_panel(panel, left, top, styles, xlo, xhi):
    """SVG elements of one panel whose top-left corner is (left, top)."""
    x0, x1 = left + PLOT_LEFT, left + PANEL_W - PLOT_RIGHT
    y0, y1 = top + PANEL_H - PLOT_BOTTOM, top + PLOT_TOP  # y0: the axis (0 GFLOP/s)
    top_rate = max((pt.gflops for pts in panel.series.values() for pt in pts), default=1)
    step = nice_step(top_rate)
    ymax = step * math.ceil(top_rate / step)

    def px(x):
        return x0 + (math.log2(x) - math.log2(xlo)) / (math.log2(xhi) - math.log2(xlo)) * (x1 - x0)

    def py(v):
        return y0 - v / ymax * (y0 - y1)

    out = ['<g class="panel">',
           f'<text x="{(x0 + x1) / 2:.1f}" y="{top + 20}" text-anchor="middle" font-size="14" '
           f'font-weight="bold" {FONT}>{escape(panel.title())}</text>']
    # Grid and y ticks.
    for i in range(round(ymax / step) + 1):
        v = i * step
        y = py(v)
        out.append(f'<line x1="{x0}" y1="{y:.1f}" x2="{x1}" y2="{y:.1f}" stroke="#e0e0e0" stroke-width="1"/>')
        out.append(f'<text x="{x0 - 6}" y="{y + 4:.1f}" text-anchor="end" font-size="11" {FONT}>'
                   f'{tick_label(v)}</text>')
    # x ticks at the powers of two.
    e = round(math.log2(xlo))
    while 2 ** e <= xhi:
        x = px(2 ** e)
        out.append(f'<line x1="{x:.1f}" y1="{y0}" x2="{x:.1f}" y2="{y1}" stroke="#f0f0f0" stroke-width="1"/>')
        out.append(f'<line x1="{x:.1f}" y1="{y0}" x2="{x:.1f}" y2="{y0 + 4}" stroke="#333"/>')
        out.append(f'<text x="{x:.1f}" y="{y0 + 16}" text-anchor="middle" font-size="10" {FONT}>'
                   f'{2 ** e}</text>')
        e += 1
    out.append(f'<line x1="{x0}" y1="{y0}" x2="{x1}" y2="{y0}" stroke="#333"/>')
    out.append(f'<line x1="{x0}" y1="{y0}" x2="{x0}" y2="{y1}" stroke="#333"/>')
    out.append(f'<text x="{(x0 + x1) / 2:.1f}" y="{y0 + 34}" text-anchor="middle" font-size="11" {FONT}>'
               f'X (log2 scale)</text>')
    cy = (y0 + y1) / 2
    out.append(f'<text x="{left + 14}" y="{cy:.1f}" text-anchor="middle" font-size="11" {FONT} '
               f'transform="rotate(-90 {left + 14} {cy:.1f})">GFLOP/s</text>')
    # Tessel last, so that it is drawn over the peers.
    for contestant in sorted(panel.series, key=lambda c: (c == TESSEL, c)):
        color, shape = styles[contestant]
        points = panel.series[contestant]
        coords = " ".join(f"{px(p.x):.1f},{py(p.gflops):.1f}" for p in points)
        out.append(f'<polyline points="{coords}" fill="none" stroke="{color}" stroke-width="1.6" '
                   f'stroke-linejoin="round"/>')
        for p in points:
            tip = f"{contestant}: {p.case}, X={p.x}, {p.gflops:.1f} GFLOP/s"
            out.append(marker(shape, px(p.x), py(p.gflops), color, tip))
    out.append("</g>")
    return out


def render_legend(styles, top, width):
    """One row (wrapping) of a line and a marker per contestant."""
    out, x, y = [], MARGIN, top
    for name, (color, shape) in styles.items():
        item_w = 40 + 7 * len(name)
        if x + item_w > width - MARGIN and x > MARGIN:
            x, y = MARGIN, y + 20
        out.append(f'<line x1="{x}" y1="{y}" x2="{x + 24}" y2="{y}" stroke="{color}" stroke-width="1.6"/>')
        out.append(marker(shape, x + 12, y, color))
        out.append(f'<text x="{x + 30}" y="{y + 4}" font-size="12" {FONT}>{escape(name)}</text>')
        x += item_w
    return out, y + 16


def render_svg(panels, heading="tessel bench: GFLOP/s by size"):
    """The whole SVG document for `panels` (from sweep_panels) as a string."""
    styles = contestant_styles(panels)
    xlo, xhi = x_range(panels)
    columns = max(1, min(COLUMNS, len(panels)))
    rows = math.ceil(len(panels) / columns)
    width = 2 * MARGIN + columns * PANEL_W
    body = [f'<text x="{MARGIN}" y="{MARGIN + 12}" font-size="16" font-weight="bold" {FONT}>'
            f'{escape(heading)}</text>']
    legend, legend_bottom = render_legend(styles, MARGIN + 34, width)
    body += legend
    top = legend_bottom + 8
    for i, panel in enumerate(panels):
        body += render_panel(panel, MARGIN + (i % columns) * PANEL_W, top + (i // columns) * PANEL_H, styles,
                             xlo, xhi)
    height = top + rows * PANEL_H + MARGIN
    return "\n".join([f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
                      f'viewBox="0 0 {width} {height}">',
                      f'<rect width="{width}" height="{height}" fill="white"/>'] + body + ["</svg>"]) + "\n"


def parse_args(argv):
    parser = argparse.ArgumentParser(
        description="Draws the size sweeps (sweep=FAMILY:X) of tessel bench CSVs as one SVG: a panel per "
                    "family and thread count, GFLOP/s against X on a log2 axis.")
    parser.add_argument("csv", nargs="+", metavar="RESULTS.csv", help="CSVs of tessel bench --csv")
    parser.add_argument("-o", "--output", required=True, metavar="OUT.svg", help="the SVG to write")
    parser.add_argument("--threads", type=int, metavar="N", help="only the runs with N threads")
    parser.add_argument("--family", metavar="REGEX", help="only the families this regular expression finds")
    args = parser.parse_args(argv)
    if args.family:
        try:
            re.compile(args.family)
        except re.error as e:
            parser.error(f"bad --family '{args.family}': {e}")
    return args


def main(argv=None):
    args = parse_args(argv)
    panels = sweep_panels(read_rows(args.csv), args.threads, args.family)
    if not panels:
        raise SystemExit("plot-sweep: no timed case with a sweep family in " + ", ".join(args.csv) +
                         (" (after --threads/--family)" if args.threads is not None or args.family else ""))
    svg = render_svg(panels)
    try:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(svg)
    except OSError as e:
        raise SystemExit(f"plot-sweep: cannot write {args.output}: {e.strerror}")
    print(f"plot-sweep: wrote {args.output}: {len(panels)} panel(s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

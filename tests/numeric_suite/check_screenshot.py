#!/usr/bin/env python3
"""Checks that a headless-Chromium screenshot of a rendered report shows its charts (standard library only).

    python3 check_screenshot.py SCREENSHOT.png REPORT.json [--summary-only]

The charts use fixed colours (numeric_suite/svg_charts.h) on whole pixels, so the check finds them by colour:
  - the page is not blank: enough non-white pixels and colours;
  - the worst-layers table (issue 21) leads the page: its header (#fdd0a2) above the first SQNR bar, then one
    colour swatch per row, as many rows as the report ranks (at most 10), in the order of the lowest shadow SQNR
    (propagated SQNR without shadow entries), each swatch in its SQNR class colour;
  - SQNR bars: each horizontal run (>= 20 px) of an SQNR colour belongs to a bar; rows of runs form one band per bar.
    There must be one band per weights/activations/shadow entry of the report, top to bottom in report order, each
    in the colour its SQNR calls for, 14 px high, all starting at the same x (the zero of the shared axis), with
    lengths proportional to the SQNR (exact entries the longest);
  - sensitivity bars (when the report has them): one band per node, below the SQNR charts;
  - weight histograms and per-channel ranges: their colours in enough pixels, between the SQNR bars and the
    sensitivity bars (the page's order), more than the legends alone could give.
With --summary-only (large reports, whose charts scroll in boxes) only the page and the worst-layers table are
checked. Prints what it measured; each failed check prints a line starting with "FAILED:" and the exit status is 1.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from png_decode import read_png  # noqa: E402

# numeric_suite/svg_charts.h
COLOURS = {
    "good": "#2ca25f", "fair": "#f0a202", "poor": "#d7301f", "sensitivity": "#756bb1",
    "hist_float": "#9ecae1", "hist_int8": "#e6550d", "range": "#3182bd", "scale": "#74c476",
    "worst_head": "#fdd0a2",
}
WORST_ROWS = 10  # numeric_suite/report_html.cc kWorstLayerRows
SQNR_GOOD_DB, SQNR_FAIR_DB = 30.0, 20.0
BAR_HEIGHT = 14
MIN_RUN = 20  # px; legend swatches (12 px) and the output card's border (5 px) stay below it
TOLERANCE = 2  # per channel, for colour management rounding

failures = []


def check(ok, message):
    print(("ok: " if ok else "FAILED: ") + message)
    if not ok:
        failures.append(message)


def colour_table():
    """Maps every RGB byte triple within TOLERANCE of a chart colour to the colour's name."""
    table = {}
    for name, hex_colour in COLOURS.items():
        r, g, b = (int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))
        for dr in range(-TOLERANCE, TOLERANCE + 1):
            for dg in range(-TOLERANCE, TOLERANCE + 1):
                for db in range(-TOLERANCE, TOLERANCE + 1):
                    table[bytes((r + dr, g + dg, b + db))] = name
    return table


def expected_class(entry):
    db = entry.get("sqnr_db")
    if db is None:
        return "good" if entry.get("exact") else None
    return "good" if db >= SQNR_GOOD_DB else "fair" if db >= SQNR_FAIR_DB else "poor"


def bands(runs_by_row):
    """Groups consecutive rows that have long runs into bands: [(top, bottom, left, right, colour)]."""
    out = []
    for y in sorted(runs_by_row):
        left = min(r[0] for r in runs_by_row[y])
        right = max(r[1] for r in runs_by_row[y])
        colour = runs_by_row[y][0][2]
        if out and out[-1][1] == y - 1 and out[-1][4] == colour:
            top, _, l0, r0, _ = out[-1]
            out[-1] = (top, y, min(l0, left), max(r0, right), colour)
        else:
            out.append((y, y, left, right, colour))
    return out


def sort_db(entry):
    db = entry.get("sqnr_db")
    if db is None:
        return float("inf") if entry.get("exact") else float("-inf")
    return db


def check_worst_table(report, sqnr_runs_top, head_rows, swatch_runs):
    """The worst-layers table: header band, then one swatch band per ranked row, before the first SQNR bar."""
    ranked = report["shadow"] or report["activations"]
    expected = sorted(ranked, key=sort_db)[:WORST_ROWS]  # sorted() is stable, like the renderer's stable_sort
    check(bool(head_rows), f"the worst-layers table header is on the page ({len(head_rows)} rows of it)")
    if not head_rows:
        return
    head_top, head_bottom = min(head_rows), max(head_rows)
    check(head_bottom < sqnr_runs_top, f"the worst-layers table (header y {head_top}) comes before the first SQNR "
                                       f"bar (y {sqnr_runs_top})")
    rows = {y: runs for y, runs in swatch_runs.items() if head_bottom < y < sqnr_runs_top}
    swatches = bands(rows)
    print("worst-layer swatches (top, bottom, left, right, colour): " + str(swatches))
    check(len(swatches) == len(expected), f"{len(swatches)} worst-layer rows, {len(expected)} expected")
    if len(swatches) == len(expected):
        wrong = [(e["name"], band[4], expected_class(e)) for e, band in zip(expected, swatches)
                 if expected_class(e) is not None and band[4] != expected_class(e)]
        check(not wrong, f"worst-layer rows in order of SQNR, each swatch in its class colour (mismatches: {wrong})")
        lefts = [b[2] for b in swatches]
        check(max(lefts) - min(lefts) <= 1, "the swatches line up in one column")


def main():
    png_path, report_path = sys.argv[1], sys.argv[2]
    summary_only = "--summary-only" in sys.argv[3:]
    with open(report_path) as f:
        report = json.load(f)
    width, height, rows = read_png(png_path)
    print(f"screenshot {png_path}: {width}x{height}")

    table = colour_table()
    counts = {name: 0 for name in COLOURS}
    first_row = {name: None for name in COLOURS}
    last_row = {name: None for name in COLOURS}
    sqnr_runs, sensitivity_runs, swatch_runs, head_rows = {}, {}, {}, []
    non_white = 0
    distinct = set()
    for y, row in enumerate(rows):
        run_name, run_start = None, 0
        for x in range(width + 1):
            name = None
            if x < width:
                pixel = row[3 * x:3 * x + 3]
                if pixel != b"\xff\xff\xff":
                    non_white += 1
                    if len(distinct) < 5000:
                        distinct.add(pixel)
                    name = table.get(pixel)
                if name is not None:
                    counts[name] += 1
                    if first_row[name] is None:
                        first_row[name] = y
                    last_row[name] = y
            if name != run_name:
                if run_name is not None and x - run_start >= MIN_RUN:
                    if run_name in ("good", "fair", "poor"):
                        sqnr_runs.setdefault(y, []).append((run_start, x - 1, run_name))
                    elif run_name == "sensitivity":
                        sensitivity_runs.setdefault(y, []).append((run_start, x - 1, run_name))
                    elif run_name == "worst_head" and x - run_start >= 40 and (not head_rows or head_rows[-1] != y):
                        head_rows.append(y)
                elif run_name in ("good", "fair", "poor") and 6 <= x - run_start < MIN_RUN:
                    swatch_runs.setdefault(y, []).append((run_start, x - 1, run_name))
                run_name, run_start = name, x

    total = width * height
    print("pixels per chart colour: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    check(non_white > total * 0.03, f"page is not blank: {non_white} of {total} pixels are not white")
    check(len(distinct) >= 50, f"page has {len(distinct)} distinct colours (>= 50)")

    check_worst_table(report, min(sqnr_runs) if sqnr_runs else height, head_rows, swatch_runs)
    if summary_only:
        if failures:
            print(f"FAILED: {len(failures)} screenshot check(s) failed")
            return 1
        print("summary screenshot checks passed")
        return 0

    # SQNR bars, in report order.
    entries = [e for section in ("weights", "activations", "shadow") for e in report[section]]
    sqnr_bands = bands(sqnr_runs)
    print("SQNR bars (top, bottom, left, right, colour): " + str(sqnr_bands))
    check(len(sqnr_bands) == len(entries),
          f"{len(sqnr_bands)} SQNR bars in the screenshot, {len(entries)} weight/activation/shadow entries in "
          "the report")
    if len(sqnr_bands) == len(entries) and entries:
        wrong = [(e["name"], band[4], expected_class(e)) for e, band in zip(entries, sqnr_bands)
                 if expected_class(e) is not None and band[4] != expected_class(e)]
        check(not wrong, f"each bar has the colour of its SQNR class (mismatches: {wrong})")
        heights = {b[1] - b[0] + 1 for b in sqnr_bands}
        check(all(abs(h - BAR_HEIGHT) <= 1 for h in heights), f"bar heights {sorted(heights)} px ~ {BAR_HEIGHT}")
        lefts = [b[2] for b in sqnr_bands]
        check(max(lefts) - min(lefts) <= 1, f"all bars start at the axis zero (x from {min(lefts)} to {max(lefts)})")
        lengths = [b[3] - b[2] + 1 for b in sqnr_bands]
        finite = [(e["sqnr_db"], n) for e, n in zip(entries, lengths) if e.get("sqnr_db") is not None
                  and e["sqnr_db"] > 0]
        if finite:
            top_db, top_len = max(finite)
            off = [(db, n, round(top_len * db / top_db)) for db, n in finite if abs(n - top_len * db / top_db) > 3]
            check(not off, f"bar lengths proportional to SQNR within 3 px ({top_len} px for {top_db} dB; "
                           f"off: {off})")
        exact = [n for e, n in zip(entries, lengths) if e.get("sqnr_db") is None and e.get("exact")]
        if exact:
            check(min(exact) >= max(lengths) - 1, f"exact entries span the axis ({exact} px, longest {max(lengths)})")

    # Sensitivity bars.
    sensitivity = report.get("sensitivity")
    sens_bands = bands(sensitivity_runs)
    sens_top = sens_bands[0][0] if sens_bands else height
    if sensitivity is not None:
        print("sensitivity bars: " + str(sens_bands))
        check(len(sens_bands) == len(sensitivity["nodes"]),
              f"{len(sens_bands)} sensitivity bars, {len(sensitivity['nodes'])} nodes in the report")
        if sqnr_bands and sens_bands:
            check(sens_bands[0][0] > sqnr_bands[-1][1], "sensitivity bars are below the SQNR bars")

    # Histograms and channel ranges lie between the SQNR bars and the sensitivity bars; their legends alone give
    # 4 x 120 px of the float colour, so ask for more than that.
    sqnr_bottom = sqnr_bands[-1][1] if sqnr_bands else 0
    with_histogram = sum(1 for w in report["weights"] if "histogram" in w)
    with_channels = sum(1 for w in report["weights"] if w.get("channels"))
    for name, needed, charts in (("hist_float", 1500, with_histogram), ("hist_int8", 600, with_histogram),
                                 ("range", 600, with_channels), ("scale", 1500, with_channels)):
        if charts == 0:
            continue
        check(counts[name] >= needed * charts, f"{counts[name]} px of {name} {COLOURS[name]} "
                                               f"(>= {needed} per chart x {charts})")
        if counts[name]:
            check(sqnr_bottom < first_row[name] and last_row[name] < sens_top,
                  f"{name} between the SQNR bars (bottom y {sqnr_bottom}) and the sensitivity bars (top y "
                  f"{sens_top}): rows {first_row[name]}..{last_row[name]}")
    if with_histogram and with_channels and counts["hist_float"] and counts["range"]:
        check(first_row["hist_float"] < first_row["range"], "histograms come before the channel ranges")

    if failures:
        print(f"FAILED: {len(failures)} screenshot check(s) failed")
        return 1
    print("screenshot checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Draw warpsort_bench results: throughput (Gkeys/s) against n, one PNG per regime.

usage: python3 bench/plot.py RESULTS.json [--out DIR]

RESULTS.json: written by `warpsort_bench device` or `warpsort_bench wide-pairs`
(schema warpsort-bench/2), or by the harness of before the modes (warpsort-bench/1).

usage: python3 bench/plot.py RESULTS.json --segments [--out DIR]

The segmented rows (a `warpsort_bench segmented` file takes this form by itself):
one PNG, <json stem>_segments.png, one panel per dtype x keys/pairs, Gkeys/s
against segment length (log2): a line per rival over the equal segments, a
hollow marker per random-length regime at its mean length (labelled 1..MAX),
and the whole-array rows of the same n as dotted horizontal lines.

One PNG per regime (dtype x keys/pairs x distribution [x segment size]), one line
per rival, log2(n) on the x axis, written next to the JSON (or into DIR) as
<json stem>_<dtype>_<kind>[64]_<dist>[_seg<S>].png (64: 8-byte values). Only verified rows are drawn;
rows that FAILED verification or errored are listed on the plot in red. A dashed
line marks the keys/s at which one pass over memory (read + write of every key
and value) would run at the measured copy bandwidth.

usage: python3 bench/plot.py --timeline TRACE.csv [--calls 0,1] [-o OUT.png]

Timelines of host-array sorts: TRACE.csv is the library's own trace
(WARPSORT_TRACE=FILE, as `warpsort_bench host --timeline` and scripts/gpu.sh
bench-host write it); one panel per call, one row per lane (phase, host staging
threads, H2D stream, compute stream, D2H stream) of every worker, so the copies
can be seen overlapping the sort. Lanes are named "dev<D> <lane>" (or
"dev<D>.w<I> <lane>" for test-hook workers sharing device D; older traces have
bare lanes): each worker's lanes are drawn together on a background band and
with tick labels of its own colour. Prints each lane's busy time per kind of
span.
"""
import argparse
import json
import math
import os
import sys

RIVAL_STYLE = {  # fixed colours so plots compare across runs
    "warpsort": ("#d62728", "o", 2.4),
    "cub-radix": ("#1f77b4", "s", 1.6),
    "cub-radix-i32": ("#aec7e8", "s", 1.2),
    "cub-merge": ("#2ca02c", "^", 1.6),
    "cub-segmented": ("#17becf", "v", 1.6),
    "cub-segmented-radix": ("#bcbd22", "<", 1.6),
    "thrust": ("#9467bd", "D", 1.6),
    "seed-naive": ("#7f7f7f", "x", 1.2),
    "seed-hybrid": ("#8c564b", "+", 1.2),
    "warpsort-cpu": ("#ff7f0e", "*", 1.2),
    "warpsort-host": ("#e377c2", "P", 1.2),
}


def die(msg):
    print(f"plot.py: error: {msg}", file=sys.stderr)
    sys.exit(2)


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except OSError as e:
        die(f"cannot read {path}: {e.strerror}")
    except json.JSONDecodeError as e:
        die(f"{path} is not valid JSON: {e}")
    if not isinstance(data, dict) or not isinstance(data.get("rows"), list):
        die(f"{path} has no 'rows' list: not a warpsort_bench results file")
    schema = data.get("schema")
    if schema not in ("warpsort-bench/1", "warpsort-bench/2"):
        die(f"{path}: unknown schema {schema!r} (expected 'warpsort-bench/1' or '/2')")
    if schema == "warpsort-bench/2" and data.get("mode") not in ("device", "wide-pairs", "segmented"):
        die(f"{path}: mode {data.get('mode')!r} has no n sweep to plot (device, wide-pairs and segmented do)")
    return data


def segments_plot(data, json_path, out_dir, plt):
    """Gkeys/s against segment length, one panel per (dtype, kind); returns the PNG path."""
    panels = {}
    for r in data["rows"]:
        if r.get("status") != "ok":
            continue
        key = (r["dtype"], r["kind"], int(r.get("value_bytes", 0)))
        panels.setdefault(key, []).append(r)
    keep = {k: rows for k, rows in panels.items()
            if any(int(r.get("segment_size", 0)) or int(r.get("segment_max", 0)) for r in rows)}
    if not keep:
        die(f"{json_path} has no verified segmented rows to plot")
    keys = sorted(keep)
    cols = 2 if len(keys) > 1 else 1
    rows_n = (len(keys) + cols - 1) // cols
    fig, axes = plt.subplots(rows_n, cols, figsize=(7.5 * cols, 4.8 * rows_n), squeeze=False)
    copy_bps = (data.get("copy_bandwidth") or {}).get("bytes_per_s") or 0
    gpu = data.get("gpu", {}).get("name", "unknown GPU")
    for ax, key in zip([a for row in axes for a in row], keys):
        rows = keep[key]
        seg_n = {r["n"] for r in rows if int(r.get("segment_size", 0)) or int(r.get("segment_max", 0))}
        equal, rand, whole = {}, [], []
        for r in rows:
            seg, mx = int(r.get("segment_size", 0)), int(r.get("segment_max", 0))
            if seg:
                equal.setdefault(r["rival"], []).append((math.log2(seg), r["gkeys_per_s"]))
            elif mx:
                mean = r.get("mean_segment") or (mx + 1) / 2.0
                rand.append((r["rival"], math.log2(mean), r["gkeys_per_s"], mx))
            elif r["n"] in seg_n:
                whole.append((r["rival"], r["gkeys_per_s"]))
        names = [n for n in RIVAL_STYLE if n in equal] + sorted(set(equal) - set(RIVAL_STYLE))
        for name in names:
            pts = sorted(equal[name])
            colour, marker, width = RIVAL_STYLE.get(name, (None, ".", 1.2))
            ax.plot([p[0] for p in pts], [p[1] for p in pts], label=name, color=colour, marker=marker,
                    linewidth=width, markersize=5)
        for name, x, y, mx in rand:
            colour, marker, _ = RIVAL_STYLE.get(name, (None, "o", 1.2))
            ax.scatter([x], [y], facecolors="none", edgecolors=colour or "black", marker=marker, s=70,
                       linewidths=1.4)
            ax.annotate(f"1..{mx}", (x, y), textcoords="offset points", xytext=(4, 4), fontsize=6,
                        color=colour or "black")
        for name, y in whole:
            colour, _, _ = RIVAL_STYLE.get(name, ("#444444", ".", 1.2))
            ax.axhline(y, color=colour, linestyle=":", linewidth=1.1, label=f"{name}, whole array")
        if copy_bps > 0:
            item = int(rows[0].get("key_bytes", 4)) + int(rows[0].get("value_bytes", 0))
            ax.axhline(copy_bps / (2.0 * item) / 1e9, color="#444444", linestyle="--", linewidth=0.9,
                       label=f"one pass at copy BW ({copy_bps / 1e9:.0f} GB/s)")
        ticks = sorted({p[0] for pts in equal.values() for p in pts})
        if ticks:
            ax.set_xticks(ticks)
            ax.set_xticklabels([f"{int(t)}" for t in ticks], fontsize=8)
        ax.set_yscale("log")
        ax.set_xlabel("segment length (log2; hollow: random lengths at their mean)")
        ax.set_ylabel("Gkeys/s (n / median time)")
        dtype, kind, vb = key
        n_text = ", ".join(f"2^{int(math.log2(n))}" if n & (n - 1) == 0 else str(n) for n in sorted(seg_n))
        ax.set_title(f"{dtype} {kind}{' (u%d values)' % (8 * vb) if vb else ''}, n = {n_text}", fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, loc="best")
    for ax in [a for row in axes for a in row][len(keys):]:
        ax.axis("off")
    fig.suptitle(f"segmented sorts: {gpu}, {data.get('date_utc', '?')}", fontsize=11)
    fig.tight_layout()
    stem = os.path.splitext(os.path.basename(json_path))[0]
    path = os.path.join(out_dir, f"{stem}_segments.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def regime_key(row):
    vb = int(row.get("value_bytes", 4 if row["kind"] == "pairs" else 0))
    return (row["dtype"], row["kind"], row["dist"], int(row.get("segment_size", 0)), vb)


def regime_file_part(key):
    dtype, kind, dist, seg, vb = key
    return f"{dtype}_{kind}{'64' if vb == 8 else ''}_{dist}" + (f"_seg{seg}" if seg else "")


def regime_title(key):
    dtype, kind, dist, seg, vb = key
    kind_text = "keys only" if kind == "keys" else f"key/value pairs (u{8 * vb} values)"
    seg_text = f", segments of {seg}" if seg else ""
    return f"{dtype} {kind_text}, {dist} input{seg_text}"


TIMELINE_LANES = ["phase", "host", "h2d", "compute", "d2h"]
# One colour per worker (device): tick labels, and a light band behind its lanes.
TIMELINE_DEVICE_COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b",
                           "#e377c2", "#17becf"]
TIMELINE_COLOURS = {
    "copy in": "#1f77b4", "copy out": "#2ca02c", "sort a piece": "#d62728", "merge": "#ff7f0e",
    "indices": "#9467bd", "stage in": "#aec7e8", "stage out": "#98df8a",
    "wait for a slot": "#dddddd", "wait for the device": "#bbbbbb",
    "sorting a run": "#c49c94", "sorting a range": "#8c564b", "split the runs": "#000000",
    "copy back": "#e377c2", "fault the scratch in": "#bcbd22",
    "wait to take a range": "#eeeeee", "wait for blocks to land in": "#999999",
    "spread: sort a share": "#c49c94", "spread: cut the shares": "#000000",
    "spread: gather a part": "#17becf", "spread: merge a part": "#ff7f0e",
    "spread: copy a part out": "#e377c2", "fault the output in": "#bcbd22",
}


def timeline_lane_parts(lane):
    """'dev1 h2d' -> ((1, -1), 'dev1', 'h2d'); 'dev0.w1 host' -> ((0, 1), 'dev0.w1', 'host');
    a bare lane of an older trace -> ((-1, -1), '', lane)."""
    head, _, base = lane.partition(" ")
    if base and head.startswith("dev"):
        dev, _, worker = head[3:].partition(".w")
        if dev.isdigit() and (not worker or worker.isdigit()):
            return (int(dev), int(worker) if worker else -1), head, base
    return (-1, -1), "", lane


def timeline_lane_order(lanes):
    """Lanes grouped per worker (device order), each group in TIMELINE_LANES order."""
    def key(lane):
        rank, _, base = timeline_lane_parts(lane)
        known = TIMELINE_LANES.index(base) if base in TIMELINE_LANES else len(TIMELINE_LANES)
        return (rank, known, base)
    return sorted(lanes, key=key)


def timeline_main(argv):
    ap = argparse.ArgumentParser(
        description="Draw a WARPSORT_TRACE CSV (call,lane,what,start_ms,end_ms) as one timeline per call.")
    ap.add_argument("--timeline", required=True, help="CSV written by the library under WARPSORT_TRACE=FILE")
    ap.add_argument("--calls", help="comma-separated call numbers to draw (default: all, at most 4)")
    ap.add_argument("-o", "--out", help="PNG to write (default: next to the CSV)")
    args = ap.parse_args(argv)
    import csv
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.patches import Patch
    except ImportError:
        die("matplotlib is not installed: run 'python3 -m pip install matplotlib' (or your distribution's python3-matplotlib)")
    try:
        with open(args.timeline, encoding="utf-8") as f:
            lines = [l for l in f if l.strip() and not l.startswith("#")]
    except OSError as e:
        die(f"cannot read {args.timeline}: {e.strerror}")
    if not lines or not lines[0].startswith("call,lane,what,start_ms,end_ms"):
        die(f"{args.timeline}: not a WARPSORT_TRACE file (header call,lane,what,start_ms,end_ms)")
    calls = {}
    for r in csv.DictReader(lines):
        try:
            calls.setdefault(int(r["call"]), []).append(
                (r["lane"], r["what"], float(r["start_ms"]), float(r["end_ms"])))
        except (KeyError, TypeError, ValueError):
            die(f"{args.timeline}: bad row {r}")
    if not calls:
        die(f"{args.timeline}: no spans")
    chosen = sorted(calls)[:4]
    if args.calls:
        try:
            chosen = [int(c) for c in args.calls.split(",")]
        except ValueError:
            die(f"--calls: expected numbers, got {args.calls!r}")
        missing = [c for c in chosen if c not in calls]
        if missing:
            die(f"{args.timeline}: no call {missing[0]} (calls: {sorted(calls)})")
    heights = [max(2, len({s[0] for s in calls[c]})) for c in chosen]
    fig, axes = plt.subplots(len(chosen), 1, figsize=(13, 0.8 + sum(0.6 + 0.28 * h for h in heights)),
                             squeeze=False, gridspec_kw={"height_ratios": heights})
    seen = set()
    for ax, c in zip(axes[:, 0], chosen):
        spans = calls[c]
        lanes = timeline_lane_order({s[0] for s in spans})
        groups = []  # worker prefixes in drawing order
        for lane in lanes:
            g = timeline_lane_parts(lane)[1]
            if g not in groups:
                groups.append(g)
        colour_of = {g: TIMELINE_DEVICE_COLOURS[i % len(TIMELINE_DEVICE_COLOURS)]
                     for i, g in enumerate(groups)}
        end = max(s[3] for s in spans)
        print(f"call {c}: {end:.2f} ms from the first enqueue to the last span"
              + (f", workers {', '.join(groups)}" if groups != [""] else ""))
        if len(groups) > 1:  # a light band behind each worker's lanes
            for g in groups:
                ys = [len(lanes) - 1 - i for i, l in enumerate(lanes) if timeline_lane_parts(l)[1] == g]
                ax.axhspan(min(ys) - 0.5, max(ys) + 0.5, color=colour_of[g], alpha=0.07, lw=0)
        totals = {}
        for lane, what, t0, t1 in spans:
            y = len(lanes) - 1 - lanes.index(lane)
            colour = TIMELINE_COLOURS.get(what, "#7f7f7f")
            seen.add(what)
            ax.broken_barh([(t0, max(t1 - t0, end * 1e-4))], (y - 0.4, 0.8), facecolors=colour,
                           edgecolors="none")
            k = totals.setdefault((lane, what), [0, 0.0])
            k[0] += 1
            k[1] += t1 - t0
        for (lane, what), (count, ms) in sorted(totals.items(),
                                                key=lambda kv: (lanes.index(kv[0][0]), kv[0][1])):
            print(f"  {lane:16s} {what:26s} x{count:<6d} {ms:10.2f} ms ({100 * ms / end:5.1f} %)")
        ax.set_yticks(range(len(lanes)))
        ax.set_yticklabels(list(reversed(lanes)), fontsize=7 if len(lanes) > 10 else 9)
        for label, lane in zip(ax.get_yticklabels(), reversed(lanes)):
            if len(groups) > 1:
                label.set_color(colour_of[timeline_lane_parts(lane)[1]])
        ax.set_ylim(-0.5, len(lanes) - 0.5)
        ax.set_xlim(0, end * 1.01)
        ax.set_title(f"call {c}: {end:.1f} ms", fontsize=9)
        ax.grid(True, axis="x", alpha=0.3)
    axes[-1, 0].set_xlabel("ms since the call started")
    fig.legend(handles=[Patch(color=TIMELINE_COLOURS.get(w, "#7f7f7f"), label=w) for w in sorted(seen)],
               fontsize=7, loc="lower center", ncol=min(7, len(seen)))
    fig.suptitle(f"host-array sort timeline: {os.path.basename(args.timeline)}", fontsize=10)
    out = args.out or os.path.splitext(args.timeline)[0] + ".png"
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    fig.savefig(out, dpi=110)
    plt.close(fig)
    print(out)


def main():
    if "--timeline" in sys.argv[1:]:
        timeline_main(sys.argv[1:])
        return
    ap = argparse.ArgumentParser(description="Plot warpsort_bench JSON results (one PNG per regime).")
    ap.add_argument("json", help="results file written by warpsort_bench")
    ap.add_argument("--out", help="folder for the PNGs (default: next to the JSON)")
    ap.add_argument("--segments", action="store_true",
                    help="one PNG of Gkeys/s against segment length (default for segmented files)")
    args = ap.parse_args()

    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        die("matplotlib is not installed: run 'python3 -m pip install matplotlib' (or your distribution's python3-matplotlib)")

    data = load(args.json)
    out_dir = args.out or os.path.dirname(os.path.abspath(args.json))
    os.makedirs(out_dir, exist_ok=True)
    stem = os.path.splitext(os.path.basename(args.json))[0]
    if args.segments or data.get("mode") == "segmented":
        print(segments_plot(data, args.json, out_dir, plt))
        return

    gpu = data.get("gpu", {}).get("name", "unknown GPU")
    copy_bps = (data.get("copy_bandwidth") or {}).get("bytes_per_s") or 0
    subtitle = f"{gpu}, driver {data.get('nvidia_driver_version', '?')}, CUDA {data.get('cuda_runtime_version', '?')}, {data.get('date_utc', '?')}"

    regimes = {}
    for row in data["rows"]:
        try:
            regimes.setdefault(regime_key(row), []).append(row)
        except (KeyError, ValueError, TypeError):
            die(f"malformed row in {args.json}: {row!r}")

    written = []
    for key in sorted(regimes):
        rows = regimes[key]
        series = {}
        bad = []
        for r in rows:
            if r.get("status") == "ok":
                x = r.get("log2_n")
                if x is None:
                    x = math.log2(r["n"])
                series.setdefault(r["rival"], []).append((x, r["gkeys_per_s"]))
            elif r.get("status") in ("FAILED", "error"):
                bad.append(f"{r['status']}: {r['rival']} n=2^{r.get('log2_n', '?')}")
        if not series and not bad:
            continue
        fig, ax = plt.subplots(figsize=(9, 5.5))
        order = [name for name in RIVAL_STYLE if name in series] + sorted(set(series) - set(RIVAL_STYLE))
        for name in order:
            pts = sorted(series[name])
            colour, marker, width = RIVAL_STYLE.get(name, (None, ".", 1.2))
            ax.plot([p[0] for p in pts], [p[1] for p in pts], label=name, color=colour,
                    marker=marker, linewidth=width, markersize=5)
        if copy_bps > 0 and series:
            key_bytes = rows[0].get("key_bytes", 4)
            value_bytes = rows[0].get("value_bytes", 0)
            one_pass = copy_bps / (2.0 * (key_bytes + value_bytes)) / 1e9
            ax.axhline(one_pass, color="#444444", linestyle="--", linewidth=0.9,
                       label=f"one pass at copy BW ({copy_bps / 1e9:.0f} GB/s)")
        ax.set_yscale("log")
        ax.set_xlabel("n (log2)")
        ax.set_ylabel("Gkeys/s (n / median time)")
        xs = sorted({p[0] for s in series.values() for p in s})
        if xs:
            ax.set_xticks(xs)
            ax.set_xticklabels([f"{int(x)}" if float(x).is_integer() else f"{x:.1f}" for x in xs])
        ax.grid(True, which="both", alpha=0.3)
        ax.set_title(f"{regime_title(key)}\n{subtitle}", fontsize=10)
        if series:
            ax.legend(fontsize=8, loc="best")
        if bad:
            ax.text(0.01, 0.01, "\n".join(bad[:8]) + ("\n..." if len(bad) > 8 else ""),
                    transform=ax.transAxes, color="red", fontsize=7, va="bottom")
        path = os.path.join(out_dir, f"{stem}_{regime_file_part(key)}.png")
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)

    if not written:
        die(f"{args.json} has no rows to plot")
    for p in written:
        print(p)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""torch_topk.py - torch.topk (and torch.sort(...)[..., :k]) on the shapes of
`warpsort_bench topk` (issue 24's targets), timed the way the harness times:
CUDA events around each call on a fresh stream, L2 flushed (a buffer twice
its size read) before every run, --warmup untimed runs, median of --repeat.

Rows come out in the harness's row format (schema warpsort-bench/2, mode
"torch-topk"): regime, kind "topk", dtype, rows, row_len, k, order, n, rival
("torch.topk" or "torch.sort-k"), status, verified, median_ms, min_ms,
mean_ms, max_ms, times_ms, gkeys_per_s; so `warpsort_bench topk` rows and
these can be put side by side by (dtype, rows, row_len, k). The inputs differ
(torch.rand / torch.randint here, src/core/keygen.h there); both are uniform
random, which is what top-k speed depends on.

Checks, every run: torch.topk's keys are ordered best first, equal the first
k of a full torch.sort of the same input, and torch.topk's indices point at
those keys (torch breaks ties in no fixed order, so indices are checked
through the keys they name, not one by one); torch.sort-k the same.
u64 has no torch.topk: the u64 case runs on int64 (noted in the row).

Exits 0 with a message (and a results file saying so) when torch or a CUDA
device is missing, 1 if a check failed, 2 on bad arguments.
"""
import argparse
import datetime
import json
import os
import platform
import sys

M = 1 << 24
# (dtype, rows, row_len, ks): the default cases of `warpsort_bench topk`
CASES = [
    ("f32", 1, M, [1, 8, 32, 100, 256, 1024, 4096, 65536]),
    ("f32", 1, 1 << 28, [100]),
    ("f32", 4096, 4096, [32]),
    ("f32", 1024, 16384, [128]),
    ("f32", 8192, 128000, [100]),
    ("f32", 524288, 32, [8]),
    ("f32", 65536, 256, [8]),
    ("u64", 1, M, [100, 4096]),
    ("u64", 4096, 4096, [32]),
    ("u64", 1024, 16384, [128]),
    ("f64", 1, M, [100, 4096]),
    ("f64", 4096, 4096, [32]),
    ("f64", 1024, 16384, [128]),
]


def shape_label(rows, row_len):
    if rows > 1:
        return "%dx%d" % (rows, row_len)
    log = row_len.bit_length() - 1
    return "2^%d" % log if row_len == 1 << log else str(row_len)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeat", type=int, default=7, help="timed runs per row (default 7)")
    p.add_argument("--warmup", type=int, default=1, help="untimed runs first (default 1)")
    p.add_argument("--smallest", action="store_true", help="the k smallest (default: largest)")
    p.add_argument("--dtype", default="all", help="f32,u64,f64 or all (filters the cases)")
    p.add_argument("--no-sort", action="store_true", help="leave out the torch.sort-k rows")
    p.add_argument("--json", default="", help="results file (default ./bench-torch-topk-<UTC>.json)")
    p.add_argument("--no-json", action="store_true", help="write no results file")
    p.add_argument("--device", type=int, default=0)
    p.add_argument("--list", action="store_true", help="print the planned rows and exit")
    a = p.parse_args()
    if a.repeat < 1 or a.warmup < 0:
        p.error("--repeat must be >= 1 and --warmup >= 0")
    if a.json and a.no_json:
        p.error("--json and --no-json exclude each other")
    want = {"f32", "u64", "f64"} if a.dtype == "all" else set(a.dtype.split(","))
    bad = want - {"f32", "u64", "f64"}
    if bad:
        p.error("--dtype: unknown %s (expected f32,u64,f64 or all)" % ",".join(sorted(bad)))
    a.cases = [c for c in CASES if c[0] in want]
    return a


def median(v):
    s = sorted(v)
    m = len(s) // 2
    return s[m] if len(s) % 2 else 0.5 * (s[m - 1] + s[m])


def write(path, doc):
    if not path:
        return
    d = os.path.dirname(path)
    if d:
        os.makedirs(d, exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("{\n")
        items = list(doc.items())
        for i, (k, v) in enumerate(items):
            if k == "rows":
                body = ",\n    ".join(json.dumps(r) for r in v)
                text = "[\n    " + body + "\n  ]" if v else "[]"
            else:
                text = json.dumps(v)
            f.write('  "%s": %s%s\n' % (k, text, "," if i + 1 < len(items) else ""))
        f.write("}\n")
    os.replace(tmp, path)


def main():
    a = parse_args()
    if a.list:
        for dt, rows, n, ks in a.cases:
            for k in ks:
                rivals = "torch.topk" + ("" if a.no_sort else ",torch.sort-k")
                print("%-34s %s" % ("%s random %s k=%d" % (dt, shape_label(rows, n), k), rivals))
        return 0
    utc = datetime.datetime.now(datetime.timezone.utc)
    path = "" if a.no_json else (a.json or "bench-torch-topk-%s.json" % utc.strftime("%Y%m%d-%H%M%S"))
    doc = {"schema": "warpsort-bench/2", "mode": "torch-topk", "date_utc": utc.strftime("%Y-%m-%dT%H:%M:%SZ"),
           "command": " ".join([sys.executable] + sys.argv), "hostname": platform.node(),
           "settings": {"repeat": a.repeat, "warmup": a.warmup, "order": "smallest" if a.smallest else "largest",
                        "flush_l2": True, "timer": "cuda-events"},
           "aborted": "", "rows": []}
    try:
        import torch
    except ImportError as e:
        msg = "torch is not installed (%s): no torch.topk rows" % e
        print("torch_topk.py: SKIPPED: " + msg)
        doc["aborted"] = msg
        write(path, doc)
        return 0
    if not torch.cuda.is_available() or a.device >= torch.cuda.device_count():
        msg = "no CUDA device for torch (torch %s, cuda %s)" % (torch.__version__, torch.version.cuda)
        print("torch_topk.py: SKIPPED: " + msg)
        doc["aborted"] = msg
        write(path, doc)
        return 0
    dev = torch.device("cuda", a.device)
    torch.cuda.set_device(dev)
    prop = torch.cuda.get_device_properties(dev)
    doc["gpu"] = {"name": prop.name, "sm_count": prop.multi_processor_count,
                  "compute_capability": "%d.%d" % (prop.major, prop.minor), "memory_bytes": prop.total_memory}
    doc["torch_version"] = torch.__version__
    doc["cuda_runtime_version"] = torch.version.cuda
    l2 = getattr(prop, "L2_cache_size", 0) or (50 << 20)
    flush = torch.empty(max(2 * l2, 64 << 20) // 4, dtype=torch.int32, device=dev)
    stream = torch.cuda.Stream(dev)
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    largest = not a.smallest
    print("torch_topk.py: %s, torch %s, CUDA %s" % (prop.name, torch.__version__, torch.version.cuda))
    print("%-34s %-13s %10s %10s %8s" % ("case", "rival", "median_ms", "min_ms", "Gkeys/s"))
    failed = 0
    gen = torch.Generator(device=dev)
    gen.manual_seed(20240601)
    for dt, rows, n, ks in a.cases:
        note = ""
        with torch.cuda.stream(stream):
            try:
                if dt == "f32":
                    x = torch.rand((rows, n), device=dev, dtype=torch.float32, generator=gen)
                elif dt == "f64":
                    x = torch.rand((rows, n), device=dev, dtype=torch.float64, generator=gen)
                else:
                    x = torch.randint(-(1 << 62), 1 << 62, (rows, n), device=dev, dtype=torch.int64, generator=gen)
                    note = "int64 keys (torch has no u64 topk)"
            except torch.cuda.OutOfMemoryError:
                for k in ks:
                    print("%-34s skipped: out of memory for the input" % ("%s %s k=%d" % (dt, shape_label(rows, n), k)))
                continue
            if rows == 1:
                x = x.reshape(n)
        for k in ks:
            label = "%s random %s%s k=%d" % (dt, shape_label(rows, n), "" if largest else " min", k)
            ref = None
            rivals = [("torch.topk", lambda: torch.topk(x, k, dim=-1, largest=largest, sorted=True))]
            if not a.no_sort:
                rivals.append(("torch.sort-k", lambda: tuple(t[..., :k] for t in
                                                             torch.sort(x, dim=-1, descending=largest))))
            for name, fn in rivals:
                row = {"regime": label, "kind": "topk", "dtype": dt, "dist": "random", "rows": rows, "row_len": n,
                       "k": k, "order": "largest" if largest else "smallest", "key_bytes": x.element_size(),
                       "index_bytes": 8, "memory": "device", "n": rows * n, "rival": name, "note": note}
                times, problem = [], ""
                try:
                    for it in range(a.warmup + a.repeat):
                        with torch.cuda.stream(stream):
                            flush.sum()  # a cold L2, outside timing
                            start.record(stream)
                            vals, idx = fn()
                            stop.record(stream)
                        stop.synchronize()
                        if it >= a.warmup:
                            times.append(start.elapsed_time(stop))
                        with torch.cuda.stream(stream):
                            v2 = vals.reshape(rows, k)
                            if ref is None:  # the first k of a full sort: the expected keys
                                ref = torch.sort(x.reshape(rows, n), dim=-1, descending=largest)[0][:, :k].clone()
                            ok_keys = torch.equal(v2, ref)
                            ok_idx = torch.equal(torch.gather(x.reshape(rows, n), 1, idx.reshape(rows, k)), v2)
                            ok_order = bool((v2[:, :-1] >= v2[:, 1:]).all()) if largest else \
                                bool((v2[:, :-1] <= v2[:, 1:]).all())
                        if not (ok_keys and ok_idx and ok_order):
                            problem = "%s %d: %s" % ("warm-up" if it < a.warmup else "repeat", it + 1,
                                                     ", ".join(w for w, ok in (("keys differ from sort[:k]", ok_keys),
                                                                               ("indices do not name their keys", ok_idx),
                                                                               ("keys out of order", ok_order)) if not ok))
                            break
                        del vals, idx
                except torch.cuda.OutOfMemoryError:
                    problem = "skipped: out of memory"
                    torch.cuda.empty_cache()
                if problem:
                    skipped = problem.startswith("skipped")
                    row.update({"status": "skipped" if skipped else "FAILED", "verified": False, "note": problem})
                    failed += 0 if skipped else 1
                    print("%-34s %-13s %s" % (label, name, problem))
                else:
                    med = median(times)
                    row.update({"status": "ok", "verified": True, "timer": "cuda-events", "warmup": a.warmup,
                                "repeats": len(times), "median_ms": med, "min_ms": min(times),
                                "mean_ms": sum(times) / len(times), "max_ms": max(times), "times_ms": times,
                                "gkeys_per_s": rows * n / (med * 1e-3) / 1e9})
                    print("%-34s %-13s %10.5g %10.5g %8.4g" % (label, name, med, min(times), row["gkeys_per_s"]))
                doc["rows"].append(row)
                write(path, doc)
        del x, ref
        torch.cuda.empty_cache()
    write(path, doc)
    if path:
        print("results: " + path)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

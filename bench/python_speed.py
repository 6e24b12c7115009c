#!/usr/bin/env python3
"""python_speed.py - issue 25's speed rows for the Python package, from one run.

Rows (each beside its rival and the C API's time, through the package's own
extension module, so the difference is the Python layer):
  device   2^LOG2N f32 keys on the GPU (PyTorch, then CuPy): warpsort.sort(x)
           (a new array: warpsort_sort_copy), sort(x, inplace=True), the C
           calls warpsort_sort_copy and warpsort_sort (in place, on a fresh
           copy each run, the copy not timed), torch.sort(x).values /
           cupy.sort(x); warpsort.argsort(x) (int64) beside torch.argsort(x)
           (and stable=True). CUDA events on the current stream, median of
           --repeat after --warmup.
  percall  --small (1,000) f32 keys on the GPU: host microseconds per call of a
           loop of calls (the GPU keeps up, so this is the host's cost):
           warpsort.sort(x), sort(x, inplace=True), the C calls
           warpsort_sort_copy and warpsort_sort, torch.sort / cupy.sort; the
           overhead column is the Python call minus the C call of the same
           work (sort: sort_copy; inplace: warpsort_sort).
  numpy    2^LOG2N_HOST u32 keys in a NumPy array: warpsort.sort(x) (a fresh
           result, page faults included), sort(x, inplace=True), numpy.sort
           (wall clock, median of --host-repeat); and the per-call overhead of
           --small NumPy keys as above (on the CPU backend where no GPU is used).
Every sorted result is checked against numpy.sort (or torch.sort) once.
Exits 0 with a message for the parts whose library (torch, cupy) or device is
missing; 1 if a check failed.

  python3 bench/python_speed.py                  # everything the machine has
  python3 bench/python_speed.py --log2n 24 --log2n-host 24 --repeat 5   # quicker
"""
import argparse
import statistics
import sys
import time

import numpy as np

import warpsort as ws
from warpsort import _warpsort as _C

F32, U32 = 2, 0  # warpsort_dtype_t codes
FAILED = []


def check(ok, what):
    if not ok:
        FAILED.append(what)
        print(f"  CHECK FAILED: {what}")


def row(name, ms, ref_ms=None, ref_name=None):
    extra = f"   {ref_ms / ms:6.2f}x vs {ref_name}" if ref_ms else ""
    print(f"  {name:44s} {ms:10.3f} ms{extra}")


def us_row(name, us, c_us=None):
    extra = f"   +{us - c_us:6.2f} us above the C call" if c_us is not None else ""
    print(f"  {name:44s} {us:10.2f} us/call{extra}")


def per_call_us(fn, calls, rounds, sync):
    """Best of `rounds` of host time per call over `calls` calls."""
    best = float("inf")
    for _ in range(rounds):
        sync()
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        sync()
        best = min(best, (time.perf_counter() - t0) / calls * 1e6)
    return best


#======================================================================
# Device arrays (torch, cupy)
#======================================================================
class Torch:
    name = "torch"

    def __init__(self, torch):
        self.t = torch
        self.device = torch.cuda.current_device()

    def stream(self):
        return self.t.cuda.current_stream().cuda_stream

    def rand(self, n):
        return self.t.rand(n, device="cuda", dtype=self.t.float32)

    def ptr(self, x):
        return x.data_ptr()

    def empty_like(self, x):
        return self.t.empty_like(x)

    def copy_(self, dst, src):
        dst.copy_(src)

    def sync(self):
        self.t.cuda.synchronize()

    def event(self):
        return self.t.cuda.Event(enable_timing=True)

    def elapsed(self, a, b):
        b.synchronize()
        return a.elapsed_time(b)

    def record(self, e):
        e.record()

    def rivals(self, x):
        return [("torch.sort(x).values", lambda: self.t.sort(x).values)]

    def arg_rivals(self, x):
        return [("torch.argsort(x)", lambda: self.t.argsort(x)),
                ("torch.argsort(x, stable=True)", lambda: self.t.argsort(x, stable=True))]

    def host(self, x):
        return x.cpu().numpy()


class Cupy:
    name = "cupy"

    def __init__(self, cupy):
        self.c = cupy
        self.device = cupy.cuda.runtime.getDevice()

    def stream(self):
        return self.c.cuda.get_current_stream().ptr

    def rand(self, n):
        return self.c.random.random(n, dtype=self.c.float32)

    def ptr(self, x):
        return x.data.ptr

    def empty_like(self, x):
        return self.c.empty_like(x)

    def copy_(self, dst, src):
        dst[...] = src

    def sync(self):
        self.c.cuda.get_current_stream().synchronize()

    def event(self):
        return self.c.cuda.Event()

    def elapsed(self, a, b):
        b.synchronize()
        return self.c.cuda.get_elapsed_time(a, b)

    def record(self, e):
        e.record()

    def rivals(self, x):
        return [("cupy.sort(x)", lambda: self.c.sort(x))]

    def arg_rivals(self, x):
        return [("cupy.argsort(x)", lambda: self.c.argsort(x))]

    def host(self, x):
        return x.get()


def gpu_ms(lib, fn, warmup, repeat, reset=None):
    """Median device time of fn() between two events on the current stream."""
    times = []
    for i in range(warmup + repeat):
        if reset:
            reset()
        a, b = lib.event(), lib.event()
        lib.record(a)
        fn()
        lib.record(b)
        ms = lib.elapsed(a, b)
        if i >= warmup:
            times.append(ms)
    return statistics.median(times)


def device_rows(lib, args):
    n = 1 << args.log2n
    print(f"\n[{lib.name}] device: 2^{args.log2n} f32 keys, median of {args.repeat}")
    x = lib.rand(n)
    ctx_key = (_C.BACKEND_CUDA, lib.device, lib.stream())
    cap, lock = ws._context(ctx_key)
    work = lib.empty_like(x)
    out = lib.empty_like(x)
    reset = lambda: lib.copy_(work, x)  # noqa: E731

    want = np.sort(lib.host(x))
    got = ws.sort(x)
    check(np.array_equal(lib.host(got), want), f"{lib.name} warpsort.sort")
    del got

    t_sort = gpu_ms(lib, lambda: ws.sort(x), args.warmup, args.repeat)
    t_inpl = gpu_ms(lib, lambda: ws.sort(work, inplace=True), args.warmup, args.repeat, reset)
    t_ccopy = gpu_ms(lib, lambda: _C.sort_copy(cap, lib.ptr(x), lib.ptr(out), n, F32, 0),
                     args.warmup, args.repeat)
    t_cin = gpu_ms(lib, lambda: _C.sort_rows(cap, lib.ptr(work), 1, n, F32, 0), args.warmup,
                   args.repeat, reset)
    check(np.array_equal(lib.host(out), want), f"{lib.name} C sort_copy")
    rivals = [(name, gpu_ms(lib, fn, args.warmup, args.repeat)) for name, fn in lib.rivals(x)]
    ref_name, ref_ms = rivals[0]
    row("warpsort.sort(x)", t_sort, ref_ms, ref_name)
    print(f"  {'':44s} {'':10s}    {t_sort / t_ccopy:6.3f} of the C call warpsort_sort_copy")
    row("warpsort.sort(x, inplace=True)", t_inpl, ref_ms, ref_name)
    row("C warpsort_sort_copy", t_ccopy, ref_ms, ref_name)
    row("C warpsort_sort (in place)", t_cin, ref_ms, ref_name)
    for name, ms in rivals:
        row(name, ms)

    idx = ws.argsort(x)
    check(np.array_equal(lib.host(idx), np.argsort(lib.host(x), kind="stable")),
          f"{lib.name} warpsort.argsort")
    del idx
    t_arg = gpu_ms(lib, lambda: ws.argsort(x), args.warmup, args.repeat)
    arg_rivals = [(name, gpu_ms(lib, fn, args.warmup, args.repeat)) for name, fn in lib.arg_rivals(x)]
    row("warpsort.argsort(x) (int64)", t_arg, arg_rivals[0][1], arg_rivals[0][0])
    for name, ms in arg_rivals:
        row(name, ms)
    del x, work, out

    # per call, small arrays
    m = args.small
    print(f"\n[{lib.name}] per call: {m} f32 keys, host time per call, best of {args.rounds}"
          f" x {args.calls} calls")
    x = lib.rand(m)
    cap, lock = ws._context((_C.BACKEND_CUDA, lib.device, lib.stream()))
    work = lib.empty_like(x)
    out = lib.empty_like(x)
    px, pw, po = lib.ptr(x), lib.ptr(work), lib.ptr(out)
    calls, rounds, sync = args.calls, args.rounds, lib.sync

    def c_copy():
        with lock:
            _C.sort_copy(cap, px, po, m, F32, 0)

    def c_inplace():
        with lock:
            _C.sort_rows(cap, pw, 1, m, F32, 0)

    us_ccopy = per_call_us(c_copy, calls, rounds, sync)
    us_cin = per_call_us(c_inplace, calls, rounds, sync)
    us_sort = per_call_us(lambda: ws.sort(x), calls, rounds, sync)
    us_inpl = per_call_us(lambda: ws.sort(work, inplace=True), calls, rounds, sync)
    us_row("warpsort.sort(x)", us_sort, us_ccopy)
    us_row("warpsort.sort(x, inplace=True)", us_inpl, us_cin)
    us_row("C warpsort_sort_copy", us_ccopy)
    us_row("C warpsort_sort (in place)", us_cin)
    for name, fn in lib.rivals(x):
        us_row(name, per_call_us(fn, calls, rounds, sync))


#======================================================================
# NumPy (host memory)
#======================================================================
def wall_ms(fn, repeat, reset=None):
    times = []
    for _ in range(repeat):
        if reset:
            reset()
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def numpy_rows(args):
    n = 1 << args.log2n_host
    print(f"\n[numpy] host: 2^{args.log2n_host} u32 keys, backend {ws.backend()}, "
          f"median of {args.host_repeat}")
    x = np.random.default_rng(1).integers(0, 1 << 32, n, dtype=np.uint32)
    want = np.sort(x)
    check(np.array_equal(ws.sort(x), want), "numpy warpsort.sort")
    work = x.copy()
    t_np = wall_ms(lambda: np.sort(x), args.host_repeat)
    t_sort = wall_ms(lambda: ws.sort(x), args.host_repeat)
    t_inpl = wall_ms(lambda: ws.sort(work, inplace=True), args.host_repeat,
                     lambda: np.copyto(work, x))
    check(np.array_equal(work, want), "numpy sort(inplace=True)")
    row("warpsort.sort(x)", t_sort, t_np, "numpy.sort")
    row("warpsort.sort(x, inplace=True)", t_inpl, t_np, "numpy.sort")
    row("numpy.sort(x)", t_np)
    del x, work, want

    m = args.small
    print(f"\n[numpy] per call: {m} f32 keys (host arrays below 2,048 keys sort on the CPU), "
          f"best of {args.rounds} x {args.calls} calls")
    x = np.random.default_rng(2).random(m, dtype=np.float32)
    work, out = x.copy(), np.empty_like(x)
    cap, lock = ws._context((_C.BACKEND_AUTO, 0, 0))
    px = x.__array_interface__["data"][0]
    pw = work.__array_interface__["data"][0]
    po = out.__array_interface__["data"][0]

    def c_copy():
        with lock:
            _C.sort_copy(cap, px, po, m, F32, 0)

    def c_inplace():
        with lock:
            _C.sort_rows(cap, pw, 1, m, F32, 0)

    nothing = lambda: None  # noqa: E731
    us_ccopy = per_call_us(c_copy, args.calls, args.rounds, nothing)
    us_cin = per_call_us(c_inplace, args.calls, args.rounds, nothing)
    us_sort = per_call_us(lambda: ws.sort(x), args.calls, args.rounds, nothing)
    us_inpl = per_call_us(lambda: ws.sort(work, inplace=True), args.calls, args.rounds, nothing)
    us_np = per_call_us(lambda: np.sort(x), args.calls, args.rounds, nothing)
    us_row("warpsort.sort(x)", us_sort, us_ccopy)
    us_row("warpsort.sort(x, inplace=True)", us_inpl, us_cin)
    us_row("C warpsort_sort_copy", us_ccopy)
    us_row("C warpsort_sort (in place)", us_cin)
    us_row("numpy.sort(x)", us_np)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--log2n", type=int, default=27, help="device keys: 2^LOG2N f32 (default 27)")
    p.add_argument("--log2n-host", type=int, default=27, help="NumPy keys: 2^N u32 (default 27)")
    p.add_argument("--small", type=int, default=1000, help="keys of the per-call rows (1000)")
    p.add_argument("--repeat", type=int, default=10, help="device runs timed (median)")
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--host-repeat", type=int, default=3, help="NumPy 2^N runs timed (median)")
    p.add_argument("--calls", type=int, default=2000, help="calls per per-call round")
    p.add_argument("--rounds", type=int, default=5, help="per-call rounds (best)")
    p.add_argument("--skip", default="", help="comma list of parts to skip: torch,cupy,numpy")
    args = p.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    print(f"warpsort {ws.__version__}, backend for host arrays: {ws.backend()}, "
          f"numpy {np.__version__}, Python {sys.version.split()[0]}")

    for name, cls in (("torch", Torch), ("cupy", Cupy)):
        if name in skip:
            continue
        try:
            mod = __import__(name)
        except ImportError:
            print(f"\n[{name}] not installed: skipped")
            continue
        try:
            ok = mod.cuda.is_available() if name == "torch" else mod.cuda.runtime.getDeviceCount() > 0
        except Exception as e:  # noqa: BLE001 - no driver, no device
            ok = False
            print(f"\n[{name}] no CUDA device ({e}): skipped")
        if not ok:
            print(f"\n[{name}] no CUDA device: skipped")
            continue
        if ws.backend() != "cuda":
            print(f"\n[{name}] warpsort was built without CUDA or sees no device: skipped")
            continue
        device_rows(cls(mod), args)
    if "numpy" not in skip:
        numpy_rows(args)
    if FAILED:
        print(f"\n{len(FAILED)} check(s) failed: {', '.join(FAILED)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""PyTorch 1.13 against octet on the observer workload of issue 3: 50 batches of 8x64x56x56 float32.

Times torch.ao.quantization.HistogramObserver (1.13's forward; the legacy_1_13 variant reproduces it bit for bit)
and MinMaxObserver, then runs octet's benchmark program on the same recipe in the same session and prints the
speed-ups, the most one core can give (PyTorch's time over octet's counting floor, HistogramCountingFloor: one
increment per element and nothing else; HistogramCountingBound: the same increments with their slots in L1), and
last octet's MinMax observation bandwidth against memcpy on 64 MiB (one thread):

    /usr/bin/python3 bench/observers_pytorch.py --octet build/release/bench/octet_bench_observers [--json out.json]

Data (both sides): four tensors N(0, (1 + 0.02 k)^2), k = 0..3, cycled over the 50 batches (octet draws its own
normal values with the same recipe; the timings do not depend on the values beyond their ranges). Each timing is the
median of --repetitions runs of a fresh observer over all 50 batches; "observe" excludes calculate_qparams,
"observe+qparams" includes it. torch runs with torch.get_num_threads() threads (printed), with one thread and with
every CPU; octet with one and two threads. Both wall-clock and process CPU time are reported: on a shared machine
the CPU time of single-threaded runs is the steadier comparison (it excludes time the process waited for a core).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import warnings

import torch
from torch.ao import quantization as tq

BATCHES = 50
SHAPE = (8, 64, 56, 56)


def torch_batches():
    g = torch.Generator().manual_seed(0)
    return [torch.randn(SHAPE, generator=g) * (1.0 + 0.02 * k) for k in range(4)]


def time_torch(make, batches, qparams, repetitions):
    """Median wall-clock and process CPU seconds."""
    wall, cpu = [], []
    for _ in range(repetitions):
        ob = make()
        t0, c0 = time.perf_counter(), time.process_time()
        for b in range(BATCHES):
            ob(batches[b % 4])
        if qparams:
            ob.calculate_qparams()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return statistics.median(wall), statistics.median(cpu)


def octet_medians(binary, flt, repetitions):
    """The median rows of octet_bench_observers' benchmarks matching the regex `flt` (Google Benchmark's JSON)."""
    out = subprocess.run([binary, f"--benchmark_filter={flt}", "--benchmark_format=json",
                          f"--benchmark_repetitions={repetitions}", "--benchmark_report_aggregates_only=true"],
                         check=True, capture_output=True, text=True).stdout
    return [b for b in json.loads(out)["benchmarks"] if b.get("aggregate_name") == "median"]


def time_octet(binary, repetitions):
    flt = "(HistogramObserver_legacy_1_13|HistogramObserver_upstream|MinMaxObserver|HistogramCountingFloor|HistogramCountingBound)/.*batches"
    result = {}
    for b in octet_medians(binary, flt, repetitions):
        name = b["run_name"].replace("/real_time", "")
        unit = {"ms": 1e-3, "us": 1e-6, "ns": 1e-9, "s": 1.0}[b["time_unit"]]
        result[name] = (b["real_time"] * unit, b["cpu_time"] * unit)
    return result


def time_octet_bandwidth(binary, repetitions):
    """MinMaxObserver::Observe on 64 MiB (one thread) against a 64 MiB memcpy: bytes observed per second over
    bytes copied per second (the issue 3 target: >= 0.7)."""
    flt = "memcpy/bytes|MinMaxObserver/observe/n:.*/threads:1"
    return {"memcpy" if b["run_name"].startswith("memcpy") else "minmax": b["bytes_per_second"]
            for b in octet_medians(binary, flt, repetitions)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--octet", required=True, help="path of octet_bench_observers")
    ap.add_argument("--repetitions", type=int, default=3)
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    batches = torch_batches()
    default_threads = torch.get_num_threads()
    rows = []
    torch_times = {}
    torch_thread_counts = sorted({default_threads, 1, os.cpu_count() or 1})
    for threads in torch_thread_counts:
        torch.set_num_threads(threads)
        for name, make in (("HistogramObserver", tq.HistogramObserver), ("MinMaxObserver", tq.MinMaxObserver)):
            for qparams in (False, True):
                t = time_torch(make, batches, qparams, args.repetitions)
                torch_times[(name, qparams, threads)] = t
    torch.set_num_threads(default_threads)
    octet = time_octet(args.octet, args.repetitions)

    print(f"torch {torch.__version__}, torch threads {default_threads}; {BATCHES} batches of {SHAPE}")
    print("wall: median wall-clock seconds; cpu: process CPU seconds (all threads), the fairer figure on a shared "
          "machine for one thread")
    print(f"{'observer':<30} {'what':<16} {'t.thr':>5} {'torch wall':>10} {'torch cpu':>9} {'o.thr':>5} "
          f"{'octet wall':>10} {'octet cpu':>9} {'x wall':>7} {'x cpu':>7}")
    pairs = [("HistogramObserver", "HistogramObserver_legacy_1_13"),
             ("HistogramObserver", "HistogramObserver_upstream"),
             ("MinMaxObserver", "MinMaxObserver")]
    for torch_name, octet_name in pairs:
        for qparams in (False, True):
            what = "observe+qparams" if qparams else "observe"
            for tthreads in torch_thread_counts:
                for othreads in (1, 2):
                    key = f"{octet_name}/{what}/batches:{BATCHES}/shape:8x64x56x56/threads:{othreads}"
                    if key not in octet:
                        continue
                    tw, tc = torch_times[(torch_name, qparams, tthreads)]
                    ow, oc = octet[key]
                    rows.append({"torch_observer": torch_name, "octet_observer": octet_name, "what": what,
                                 "torch_threads": tthreads, "torch_wall_s": tw, "torch_cpu_s": tc,
                                 "octet_threads": othreads, "octet_wall_s": ow, "octet_cpu_s": oc,
                                 "speedup_wall": tw / ow, "speedup_cpu": tc / oc})
                    print(f"{octet_name:<30} {what:<16} {tthreads:>5} {tw:>10.4f} {tc:>9.4f} {othreads:>5} "
                          f"{ow:>10.4f} {oc:>9.4f} {tw / ow:>6.1f}x {tc / oc:>6.1f}x")
    rates = time_octet_bandwidth(args.octet, args.repetitions)
    print(f"MinMaxObserver observe, 64 MiB, 1 thread: {rates['minmax'] / 1e9:.2f} GB/s observed; memcpy 64 MiB: "
          f"{rates['memcpy'] / 1e9:.2f} GB/s copied; ratio {rates['minmax'] / rates['memcpy']:.2f}x (target >= 0.7x)")
    floor = octet.get(f"HistogramCountingFloor/batches:{BATCHES}/shape:8x64x56x56/threads:1")
    if floor is not None:
        tw, tc = torch_times[("HistogramObserver", False, 1)]
        print(f"Counting floor (one counts[bin] += 1 per element, 1 thread): {floor[0]:.4f} s wall, {floor[1]:.4f} s "
              f"cpu; so one core can give at most {tw / floor[0]:.1f}x wall, {tc / floor[1]:.1f}x cpu over torch's "
              f"HistogramObserver observe at 1 thread")
    bound = octet.get(f"HistogramCountingBound/batches:{BATCHES}/shape:8x64x56x56/threads:1")
    if bound is not None:
        tw, tc = torch_times[("HistogramObserver", False, 1)]
        print(f"Counting bound (the same increments, slots resident in L1, 1 thread): {bound[0]:.4f} s wall, "
              f"{bound[1]:.4f} s cpu; at most {tw / bound[0]:.1f}x wall, {tc / bound[1]:.1f}x cpu at 1 thread")
    best = max((r for r in rows if r["octet_observer"].startswith("HistogramObserver") and r["what"] == "observe"
                and r["torch_threads"] == default_threads), key=lambda r: r["speedup_wall"])
    print(f"HistogramObserver observe: best octet speed-up over torch at its default threads: "
          f"{best['speedup_wall']:.1f}x wall ({best['octet_observer']}, {best['octet_threads']} octet thread(s); "
          f"target >= 20x)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"torch_version": torch.__version__, "torch_default_threads": default_threads, "rows": rows,
                       "minmax_observe_bytes_per_second": rates["minmax"],
                       "memcpy_bytes_per_second": rates["memcpy"]}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

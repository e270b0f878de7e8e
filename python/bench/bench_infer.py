# SPDX-License-Identifier: Apache-2.0
"""Python vs C on a tiny model: the per-call cost of Pipeline.infer added by
the binding, and a pipelined stream (one producer and one consumer thread)
from Python against the same stream from C (python/bench/bench_infer.c).

    PYTHONPATH=build/python /usr/bin/python3 python/bench/bench_infer.py \\
        --c-bench build/python/vkpipe-bench-infer examples/mlp.json

Prints a Markdown table (docs/benchmarks.md keeps the numbers)."""
import argparse
import subprocess
import threading
import time

import numpy as np

import vkpipe


def python_infer_us(pipe, inputs, calls):
    # The best of 20 batches, as bench_infer.c does.
    best, batch = float("inf"), max(calls // 20, 1)
    for _ in range(20):
        t0 = time.perf_counter()
        for _ in range(batch):
            pipe.infer(inputs)
        best = min(best, (time.perf_counter() - t0) / batch)
    return best * 1e6


def python_stream_fps(pipe, inputs, frames):
    """(frames/s, process CPU microseconds per frame)"""
    def produce():
        for _ in range(frames):
            pipe.submit(inputs)
        pipe.end_input()

    seen = [0]

    def consume():
        for frame in pipe.results():
            frame.result()
            seen[0] += 1

    t0, c0 = time.perf_counter(), time.process_time()
    threads = [threading.Thread(target=consume), threading.Thread(target=produce)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    dt, dc = time.perf_counter() - t0, time.process_time() - c0
    assert seen[0] == frames, seen[0]
    return frames / dt, dc / frames * 1e6


def python_map_fps(pipe, inputs, frames):
    t0, c0 = time.perf_counter(), time.process_time()
    n = sum(1 for _ in pipe.map(inputs for _ in range(frames)))
    dt, dc = time.perf_counter() - t0, time.process_time() - c0
    assert n == frames, n
    return frames / dt, dc / frames * 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    ap.add_argument("--c-bench", required=True, help="path of vkpipe-bench-infer")
    ap.add_argument("--policy", default="cpu")
    ap.add_argument("--stages", type=int, default=1)
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--frames", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()

    ap_rounds = a.rounds
    model = vkpipe.load(a.model)
    rng = np.random.default_rng(0)
    inputs = {s.name: rng.standard_normal(s.shape).astype(s.dtype) for s in model.inputs}
    c_us = py_us = float("inf")
    c_fps = py_fps = map_fps = 0.0
    c_cpu = py_cpu = map_cpu = float("inf")
    for _ in range(ap_rounds):  # alternate, keep the best of each side
        c = subprocess.run([a.c_bench, a.model, a.policy, str(a.stages), str(a.calls),
                            str(a.frames)], check=True, capture_output=True, text=True)
        cvals = dict(line.split() for line in c.stdout.splitlines())
        c_us = min(c_us, float(cvals["infer_us"]))
        c_fps = max(c_fps, float(cvals["stream_fps"]))
        c_cpu = min(c_cpu, float(cvals["stream_cpu_us"]))
        with model.pipeline(policy=a.policy, stages=a.stages) as pipe:
            py_us = min(py_us, python_infer_us(pipe, inputs, a.calls))
        with model.pipeline(policy=a.policy, stages=a.stages) as pipe:
            fps, cpu = python_stream_fps(pipe, inputs, a.frames)
            py_fps, py_cpu = max(py_fps, fps), min(py_cpu, cpu)
        with model.pipeline(policy=a.policy, stages=a.stages) as pipe:
            fps, cpu = python_map_fps(pipe, inputs, a.frames)
            map_fps, map_cpu = max(map_fps, fps), min(map_cpu, cpu)
    print(f"| measurement ({a.model}, policy {a.policy}, {a.stages} stage(s)) | C | Python | difference |")
    print("| --- | --- | --- | --- |")
    print(f"| infer, µs per call (best of 20 batches of {a.calls // 20}) | {c_us:.2f} | {py_us:.2f} | "
          f"{py_us - c_us:+.2f} µs |")
    print(f"| stream, frames/s ({a.frames} frames; Python: submit() thread + results() thread) | "
          f"{c_fps:.0f} | {py_fps:.0f} | {100 * (py_fps / c_fps - 1):+.1f}% |")
    print(f"| stream, frames/s ({a.frames} frames; Python: Pipeline.map) | "
          f"{c_fps:.0f} | {map_fps:.0f} | {100 * (map_fps / c_fps - 1):+.1f}% |")
    print(f"| stream, CPU µs per frame, all threads (submit + results) | {c_cpu:.1f} | "
          f"{py_cpu:.1f} | {py_cpu - c_cpu:+.1f} µs |")
    print(f"| stream, CPU µs per frame, all threads (map) | {c_cpu:.1f} | "
          f"{map_cpu:.1f} | {map_cpu - c_cpu:+.1f} µs |")


if __name__ == "__main__":
    main()

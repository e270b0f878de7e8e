#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Whole-model latency of the "cpu" target against ONNX Runtime at 1 and 2
threads, the same run, alternating (a benchmark for docs/benchmarks.md, not
a test):

  /usr/bin/python3 tools/zoo/export_zoo.py /tmp/zoo --only resnet18,mobilenet_v2,squeezenet1_1
  (mkdir -p /tmp/ort && cd /tmp/ort && npm install --ignore-scripts onnxruntime-node)
  python3 tools/bench/threads_vs_ort.py /tmp/zoo --models resnet18,mobilenet_v2,squeezenet1_1 \\
      [--threads 1,2] [--rounds 5] [--runs 20] [--build build] [--baseline OTHER_BENCH]

A model may be written NAME@T1+T2 (its own thread counts) and NAME#RUNS (its
own runs per program): e.g. gpt2_small#5,mha_block@1#200. Each model folder
holds model.onnx and its input_NAME.npy files (what tools/zoo/export_zoo.py
writes). The machine's load average is recorded each round.

Each round runs, for every model and thread count, bench_cpu_model and
tools/bench/ort_latency.js (ORT with as many intra-op threads) one after the
other, --runs runs each after a warm-up. The table gives, per model and
thread count, the median over rounds of each round's median wall time and
median process CPU time per run, and the ratio of ours to ONNX Runtime's.
--baseline adds the bench_cpu_model of another build (an earlier commit)
to every round, for a before/after in the same run.
On a shared machine wall time includes the neighbours; CPU time does not
(but with threads it adds the threads' time up, so latency is wall time).
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

LINE = re.compile(r"wall best ([\d.]+) ms, median ([\d.]+) ms; cpu time best ([\d.]+) ms, "
                  r"median ([\d.]+) ms")


def run(cmd, env=None):
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    m = LINE.search(out.stdout)
    if out.returncode != 0 or not m:
        sys.exit(f"{' '.join(cmd)} failed:\n{out.stdout}{out.stderr}")
    return float(m.group(2)), float(m.group(4)), float(m.group(1))  # wall median, cpu median, wall best


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("zoo")
    ap.add_argument("--models", default="resnet18,mobilenet_v2,squeezenet1_1")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--build", default="build")
    ap.add_argument("--ort", default="/tmp/ort/node_modules")
    ap.add_argument("--baseline", help="bench_cpu_model of another build")
    args = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    bench = os.path.join(args.build, "tools", "bench", "bench_cpu_model")
    env = dict(os.environ, NODE_PATH=args.ort)
    default_threads = [int(t) for t in args.threads.split(",")]
    models, threads_of, runs_of = [], {}, {}
    for spec in args.models.split(","):
        m = spec.split("@")[0].split("#")[0]
        t = re.search(r"@([\d+]+)", spec)
        n = re.search(r"#(\d+)", spec)
        models.append(m)
        threads_of[m] = [int(x) for x in t.group(1).split("+")] if t else default_threads
        runs_of[m] = n.group(1) if n else str(args.runs)
    res = {}  # (model, threads, side) -> [(wall, cpu)] per round
    loads = []
    for r in range(args.rounds):
        for m in models:
            onnx = os.path.join(args.zoo, m, "model.onnx")
            npy = os.path.join(args.zoo, m)  # its input_NAME.npy files
            for t in threads_of[m]:
                loads.append(os.getloadavg()[0])
                ours = run([bench, onnx, "--threads", str(t), "--runs", runs_of[m]])
                ort = run(["node", os.path.join(here, "ort_latency.js"), onnx, npy, str(t),
                           runs_of[m]], env)
                res.setdefault((m, t, "ours"), []).append(ours)
                res.setdefault((m, t, "ort"), []).append(ort)
                if args.baseline:
                    base = run([args.baseline, onnx, "--threads", str(t), "--runs",
                                runs_of[m]])
                    res.setdefault((m, t, "base"), []).append(base)
                print(f"round {r + 1}: {m} threads {t}: ours {ours[0]:.2f} ms "
                      f"(cpu {ours[1]:.2f}), ort {ort[0]:.2f} ms (cpu {ort[1]:.2f})",
                      file=sys.stderr, flush=True)
    print(f"load average (1 min) during the runs: {min(loads):.1f} to {max(loads):.1f}, "
          f"median {statistics.median(loads):.1f}\n")
    print("| model | threads | ours wall | ORT wall | ratio | ours CPU | ORT CPU | ratio |" +
          (" baseline wall | baseline CPU |" if args.baseline else ""))
    print("|---|---:|---:|---:|---:|---:|---:|---:|" + ("---:|---:|" if args.baseline else ""))
    for m in models:
        for t in threads_of[m]:
            ow = statistics.median(r[0] for r in res[(m, t, "ours")])
            oc = statistics.median(r[1] for r in res[(m, t, "ours")])
            rw = statistics.median(r[0] for r in res[(m, t, "ort")])
            rc = statistics.median(r[1] for r in res[(m, t, "ort")])
            line = (f"| {m} | {t} | {ow:.2f} ms | {rw:.2f} ms | {ow / rw:.2f}x | "
                    f"{oc:.2f} ms | {rc:.2f} ms | {oc / rc:.2f}x |")
            if args.baseline:
                bw = statistics.median(r[0] for r in res[(m, t, "base")])
                bc = statistics.median(r[1] for r in res[(m, t, "base")])
                line += f" {bw:.2f} ms | {bc:.2f} ms |"
            print(line)
    # Best wall time over every run of every round: the run the neighbours
    # disturbed least, the closest this machine gets to a quiet latency.
    print("\n| model | threads | ours best wall | ORT best wall | ratio |" +
          (" baseline best wall |" if args.baseline else ""))
    print("|---|---:|---:|---:|---:|" + ("---:|" if args.baseline else ""))
    for m in models:
        for t in threads_of[m]:
            ob = min(r[2] for r in res[(m, t, "ours")])
            rb = min(r[2] for r in res[(m, t, "ort")])
            line = f"| {m} | {t} | {ob:.2f} ms | {rb:.2f} ms | {ob / rb:.2f}x |"
            if args.baseline:
                line += f" {min(r[2] for r in res[(m, t, 'base')]):.2f} ms |"
            print(line)


if __name__ == "__main__":
    main()

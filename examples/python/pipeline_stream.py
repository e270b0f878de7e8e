#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Pipeline a stream of frames with a producer and a consumer thread.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/pipeline_stream.py \\
        examples/small_cnn.onnx --frames 200 --stages 2

The producer submits random frames as fast as the input rings take them; the
consumer takes results in order as they finish and checks a sample against
the reference interpreter. Both threads run Python while the stages run C:
the binding releases the GIL around every blocking call."""
import argparse
import threading
import time

import numpy as np

import vkpipe


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    ap.add_argument("--frames", type=int, default=200)
    ap.add_argument("--policy", default="auto")
    ap.add_argument("--stages", type=int, default=0)
    a = ap.parse_args()

    model = vkpipe.load(a.model)
    plan = model.partition(policy=a.policy, stages=a.stages)
    print(plan)
    rng = np.random.default_rng(0)
    frames = [{s.name: rng.standard_normal(s.shape).astype(s.dtype) for s in model.inputs}
              for _ in range(min(a.frames, 16))]

    with plan.pipeline() as pipe:
        def produce():
            for i in range(a.frames):
                pipe.submit(frames[i % len(frames)])
            pipe.end_input()

        checked = []

        def consume():
            for frame in pipe.results():
                out = frame.result()          # raises this frame's error only
                if frame.seq <= 2:            # check a sample against "ref"
                    want = model.run(frames[(frame.seq - 1) % len(frames)], target="ref")
                    for name, value in want.items():
                        np.testing.assert_allclose(out[name], value, rtol=1e-3, atol=1e-3)
                    checked.append(frame.seq)

        t0 = time.perf_counter()
        threads = [threading.Thread(target=consume), threading.Thread(target=produce)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        dt = time.perf_counter() - t0
        stats = pipe.stats()
    print(f"{stats['frames_finished']} frames in {dt:.3f} s: {a.frames / dt:.1f} frames/s, "
          f"latency mean {stats['latency_mean_ms']:.3f} ms; "
          f"frames {checked} match the reference interpreter")
    for s in stats["stages"]:
        print(f"  {s['name']:<8} {s['target']:<7} busy {s['busy_ms']:8.2f} ms  "
              f"waiting for input {s['wait_input_ms']:8.2f} ms")


if __name__ == "__main__":
    main()

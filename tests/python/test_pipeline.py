# SPDX-License-Identifier: Apache-2.0
"""Pipelines from Python: infer, submit/result, the ordered iterator, a
producer and a consumer thread (10,000 frames, order and exactly-once),
per-frame errors, closing with frames in flight, stats and traces."""
import json
import os
import threading
import time
import unittest

import numpy as np

import vkpipe
from testlib import read_bytes, Mlp, TempDirTest, rng, write_div


class PipelineTest(TempDirTest):
    def setUp(self):
        super().setUp()
        self.mlp = Mlp(self.dir)
        self.model = vkpipe.load(self.mlp.path)

    def check(self, x, got):
        want = self.mlp.reference(x)
        for name in ("h", "y"):
            np.testing.assert_allclose(got[name], want[name], rtol=1e-4, atol=1e-4)

    def test_infer_on_pipelined_stages(self):
        policies = ["ref", "cpu"] + [d.target for d in vkpipe.devices()
                                     if d.target == "vulkan" and d.available]
        for policy in policies:
            with self.model.pipeline(policy=policy, stages=2) as pipe:
                self.assertEqual(len(pipe.plan.stages), 2)
                self.assertEqual(pipe.inputs, self.model.inputs)
                self.assertEqual(pipe.outputs, ["h", "y"])
                for i in range(3):
                    x = self.mlp.input(i)
                    self.check(x, pipe.infer(x=x))
                self.check(x, pipe.infer({"x": x}))
                with self.assertRaisesRegex(vkpipe.InvalidArgumentError, "missing input"):
                    pipe.infer()
                with self.assertRaisesRegex(vkpipe.InvalidArgumentError, "unknown input.*'z'"):
                    pipe.submit({"x": x}, z=x)
                with self.assertRaisesRegex(vkpipe.InvalidArgumentError, "'x'.*float64"):
                    pipe.infer(x=x.astype(np.float64))

    def test_submit_results_in_order(self):
        with self.model.pipeline(policy="ref", stages=2, ring_depth=4) as pipe:
            xs = [self.mlp.input(i) for i in range(20)]
            frames = [pipe.submit(x=x) for x in xs]
            self.assertEqual([f.seq for f in frames], list(range(1, 21)))
            # Ask for the last one first: earlier ones are kept for their handles.
            self.check(xs[-1], frames[-1].result(timeout=30))
            for x, f in zip(xs, frames):
                self.check(x, f.result())
                self.assertTrue(f.done())
                self.assertIsNone(f.exception())
                self.assertGreater(f.latency_ms, 0)
            self.assertIn("done", repr(frames[0]))
            # Inputs are copied at submit: reusing the array is safe.
            buf = self.mlp.input(0)
            f1 = pipe.submit(x=buf)
            buf[:] = 0
            self.check(self.mlp.input(0), f1.result())
            # infer after the frames are collected.
            self.check(xs[0], pipe.infer(x=xs[0]))

    def test_iterator_yields_unclaimed_frames_in_order(self):
        with self.model.pipeline(policy="ref", stages=2) as pipe:
            xs = [self.mlp.input(i) for i in range(10)]
            frames = [pipe.submit(x=x) for x in xs]
            frames[3].result()  # claimed by its handle: the iterator skips it
            pipe.end_input()
            seen = [(f.seq, f.result()) for f in pipe.results()]
            self.assertEqual([s for s, _ in seen], [1, 2, 3, 5, 6, 7, 8, 9, 10])
            for seq, out in seen:
                self.check(xs[seq - 1], out)

    def test_producer_consumer_threads_exactly_once(self):
        n = 10_000
        with self.model.pipeline(policy="ref", stages=2, ring_depth=4) as pipe:
            base = self.mlp.input(0)
            errors = []

            def produce():
                try:
                    for i in range(n):
                        base[0, 0] = i * 1e-3  # each frame's input differs
                        pipe.submit(x=base)
                finally:
                    pipe.end_input()

            seqs = []
            firsts = []

            def consume():
                try:
                    for frame in pipe.results():
                        seqs.append(frame.seq)
                        firsts.append(frame.result()["y"][0, 0])
                except BaseException as e:  # reported below
                    errors.append(e)

            consumer = threading.Thread(target=consume)
            producer = threading.Thread(target=produce)
            consumer.start()
            producer.start()
            producer.join(120)
            consumer.join(120)
            self.assertFalse(producer.is_alive() or consumer.is_alive(), "deadlock")
            self.assertEqual(errors, [])
            self.assertEqual(seqs, list(range(1, n + 1)))
            # Each result belongs to its own frame: recompute a sample.
            for i in (0, 1, n // 2, n - 1):
                x = base.copy()
                x[0, 0] = i * 1e-3
                np.testing.assert_allclose(firsts[i], self.mlp.reference(x)["y"][0, 0],
                                           rtol=1e-4, atol=1e-4)
            stats = pipe.stats()
            self.assertEqual(stats["frames_run"], n)
            self.assertEqual(stats["frames_finished"], n)
            self.assertEqual(stats["frames_failed"], 0)

    def test_map_streams_in_order(self):
        with self.model.pipeline(policy="ref", stages=2, ring_depth=3) as pipe:
            xs = [self.mlp.input(i) for i in range(300)]
            outs = list(pipe.map({"x": x} for x in xs))
            self.assertEqual(len(outs), 300)
            for x, out in zip(xs, outs):
                self.check(x, out)
            # Cut short: the frames left in flight are taken, the pipeline is clean.
            for i, out in enumerate(pipe.map({"x": x} for x in xs)):
                if i == 5:
                    break
            self.check(xs[0], pipe.infer(x=xs[0]))
            self.assertEqual(list(pipe.map([])), [])
            f = pipe.submit(x=xs[0])
            with self.assertRaises(vkpipe.StateError):
                next(pipe.map([{"x": xs[0]}]))
            f.result()
            with self.assertRaisesRegex(vkpipe.InvalidArgumentError, "missing input"):
                list(pipe.map([{"x": xs[0]}, {}]))
            self.check(xs[1], pipe.infer(x=xs[1]))
            # While a map is suspended, other calls are refused, not deadlocked.
            g = pipe.map({"x": x} for x in xs)
            self.check(xs[0], next(g))
            with self.assertRaises(vkpipe.StateError):
                pipe.infer(x=xs[0])
            with self.assertRaises(vkpipe.StateError):
                pipe.submit(x=xs[0])
            with self.assertRaises(vkpipe.StateError):
                next(pipe.map([{"x": xs[0]}]))
            g.close()
            self.check(xs[2], pipe.infer(x=xs[2]))

    def test_close_while_map_is_suspended(self):
        pipe = self.model.pipeline(policy="ref", stages=2)
        g = pipe.map({"x": self.mlp.input(i)} for i in range(1000))
        next(g)
        pipe.close()  # from the thread that holds the generator: no deadlock
        with self.assertRaises(vkpipe.CancelledError):
            next(g)
        self.assertTrue(pipe.closed)

    def test_map_frame_error(self):
        model = vkpipe.load(write_div(self.dir))
        one = np.ones(4, np.int32)
        items = [{"a": one * 6, "b": one * (0 if i == 3 else 2), "c": np.ones(4, np.float32)}
                 for i in range(8)]
        with model.pipeline(policy="ref") as pipe:
            got = []
            with self.assertRaises(vkpipe.Error):
                for out in pipe.map(items):
                    got.append(out["q"])
            self.assertEqual(len(got), 3)
            np.testing.assert_array_equal(got[0], one * 3)
            out = pipe.infer(items[0])
            np.testing.assert_array_equal(out["q"], one * 3)

    def test_frame_errors_stay_on_their_frame(self):
        model = vkpipe.load(write_div(self.dir))
        r = rng(7)
        with model.pipeline(policy="ref") as pipe:
            frames, inputs = [], []
            for i in range(6):
                a = r.integers(-50, 50, 4, dtype=np.int32)
                b = r.integers(1, 9, 4, dtype=np.int32)
                if i == 2:
                    b[1] = 0
                c = r.standard_normal(4).astype(np.float32)
                inputs.append((a, b, c))
                frames.append(pipe.submit(a=a, b=b, c=c))
            for i, (f, (a, b, c)) in enumerate(zip(frames, inputs)):
                if i == 2:
                    with self.assertRaises(vkpipe.Error) as cm:
                        f.result()
                    self.assertIn("q", str(cm.exception))  # names the node
                    self.assertIsInstance(f.exception(), vkpipe.Error)
                    continue
                out = f.result()
                want = np.trunc(a / b).astype(np.int32)
                np.testing.assert_array_equal(out["q"], want)
                np.testing.assert_allclose(out["d"], c * 2)
            self.assertEqual(pipe.stats()["frames_failed"], 1)
            with self.assertRaises(vkpipe.Error):
                pipe.infer(a=np.zeros(4, np.int32), b=np.zeros(4, np.int32),
                           c=np.zeros(4, np.float32))
            out = pipe.infer(a=np.full(4, 9, np.int32), b=np.full(4, 2, np.int32),
                             c=np.ones(4, np.float32))
            np.testing.assert_array_equal(out["q"], np.full(4, 4, np.int32))

    def test_close_with_frames_in_flight(self):
        for _ in range(5):
            pipe = self.model.pipeline(policy="ref", stages=2, ring_depth=2)
            frames = [pipe.submit(x=self.mlp.input(i)) for i in range(30)]
            frames[0].result()
            pipe.close()
            pipe.close()  # idempotent
            self.assertTrue(pipe.closed)
            for f in frames[1:]:
                try:
                    f.result(timeout=10)
                except vkpipe.CancelledError:
                    pass
                self.assertTrue(f.done())
            with self.assertRaises(vkpipe.StateError):
                pipe.infer(x=self.mlp.input())
            with self.assertRaises(vkpipe.StateError):
                pipe.submit(x=self.mlp.input())
            with self.assertRaises(vkpipe.StateError):
                pipe.stats()
        # Dropped without close, frames in flight: freed by the destructor.
        pipe = self.model.pipeline(policy="ref", stages=2)
        for i in range(10):
            pipe.submit(x=self.mlp.input(i))
        del pipe

    def test_close_while_a_consumer_waits(self):
        pipe = self.model.pipeline(policy="ref")
        got = []
        t = threading.Thread(target=lambda: got.extend(pipe.results()))
        t.start()
        pipe.submit(x=self.mlp.input())
        pipe.close()
        t.join(30)
        self.assertFalse(t.is_alive())

    def test_result_timeout_and_infer_with_frames_in_flight(self):
        with self.model.pipeline(policy="ref") as pipe:
            f = pipe.submit(x=self.mlp.input())
            with self.assertRaises(vkpipe.StateError):
                pipe.infer(x=self.mlp.input())
            pipe.drain(timeout=30)
            self.check(self.mlp.input(), f.result(timeout=0))
            with self.assertRaises(vkpipe.InvalidArgumentError):
                pipe.drain(timeout=-1)
            g = pipe.submit(x=self.mlp.input())
            with self.assertRaises(vkpipe.InvalidArgumentError):
                g.result(timeout=-1)
            g.result()

    def test_stats_and_trace(self):
        with self.model.pipeline(policy="ref", stages=2, trace_capacity=64) as pipe:
            for i in range(5):
                pipe.infer(x=self.mlp.input(i))
            stats = pipe.stats()
            self.assertEqual(stats["frames_run"], 5)
            self.assertEqual([s["frames"] for s in stats["stages"]], [5, 5])
            self.assertGreater(stats["latency_mean_ms"], 0)
            path = os.path.join(self.dir, "trace.json")
            self.assertEqual(pipe.trace(path), 10)
            events = [e for e in json.loads(read_bytes(path))["traceEvents"] if e["ph"] == "X"]
            self.assertEqual(len(events), 10)
        with self.model.pipeline(policy="ref") as pipe:
            with self.assertRaises(vkpipe.StateError):
                pipe.trace(os.path.join(self.dir, "t.json"))

    def test_pipeline_options(self):
        for opts in ({"sequential": True}, {"ring_depth": 1}, {"threads": 2}):
            with self.subTest(**opts):
                with vkpipe.Pipeline(self.model, policy="cpu", stages=2, **opts) as pipe:
                    x = self.mlp.input()
                    self.check(x, pipe.infer(x=x))
        with self.assertRaises(vkpipe.InvalidArgumentError):
            vkpipe.Pipeline(self.model, ring_depth=1000)
        with self.assertRaises(vkpipe.InvalidArgumentError):
            vkpipe.Pipeline(self.model.partition(), stages=2)
        with vkpipe.Pipeline(self.mlp.path, policy="ref") as pipe:
            self.check(self.mlp.input(), pipe.infer(x=self.mlp.input()))

    def test_gil_released_while_blocked(self):
        # One thread blocks inside the library (get_output with nothing in
        # flight); the main thread must run Python meanwhile.
        with self.model.pipeline(policy="ref") as pipe:
            started, finished = threading.Event(), threading.Event()

            def wait():
                started.set()
                pipe._native.get_output(2.0)
                finished.set()

            t = threading.Thread(target=wait)
            t.start()
            started.wait()
            time.sleep(0.1)  # the other thread is now in get_output
            work = sum(range(10000))
            ran_while_blocked = not finished.is_set()
            t.join()
            self.assertEqual(work, 49995000)
            self.assertTrue(ran_while_blocked, "the GIL was held during get_output")

    def test_one_producer_at_a_time_in_c(self):
        # Bypassing the Python lock: the C layer refuses a second producer
        # rather than breaking the C API's one-producer rule.
        with self.model.pipeline(policy="ref") as pipe:
            errors, x = [], {"x": self.mlp.input()}

            def produce():
                for _ in range(300):
                    try:
                        pipe._native.submit_named(x)
                    except vkpipe.StateError as e:
                        errors.append(e)

            threads = [threading.Thread(target=produce) for _ in range(3)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            pipe.drain(timeout=60)
            taken = 0
            while pipe._native.get_output(0) is not None:
                taken += 1
            self.assertEqual(taken + len(errors), 900)
            for e in errors:
                self.assertIn("another thread", str(e))

    def test_close_during_drain(self):
        pipe = self.model.pipeline(policy="ref", stages=2)
        for i in range(50):
            pipe.submit(x=self.mlp.input(i))
        failures = []

        def drain():
            try:
                pipe.drain()
            except vkpipe.CancelledError:
                pass
            except BaseException as e:
                failures.append(e)

        t = threading.Thread(target=drain)
        t.start()
        pipe.close()
        t.join(30)
        self.assertFalse(t.is_alive())
        self.assertEqual(failures, [])

if __name__ == "__main__":
    unittest.main()

# SPDX-License-Identifier: Apache-2.0
"""Every call of the vkpipe Python API and its error paths: loading,
checking, running on one target, partitioning, plans, artifacts, devices,
calibration. Outputs are checked against NumPy on random inputs."""
import json
import os
import unittest

import numpy as np

import vkpipe
from testlib import read_bytes, Mlp, TempDirTest, write_div, write_graph


class LoadTest(TempDirTest):
    def test_json_model_description(self):
        mlp = Mlp(self.dir)
        model = vkpipe.load(mlp.path)
        self.assertEqual(model.name, "mlp")
        self.assertEqual(model.inputs, [vkpipe.TensorSpec("x", "float32", (2, 16))])
        self.assertEqual([o.name for o in model.outputs], ["h", "y"])
        self.assertEqual(len(model.nodes), 5)
        self.assertFalse(model.is_artifact)
        self.assertIn("mlp", repr(model))

    def test_onnx_model(self):
        from onnx import TensorProto, helper, numpy_helper
        r = np.random.default_rng(3)
        w = r.standard_normal((6, 4)).astype(np.float32)
        b = r.standard_normal(4).astype(np.float32)
        graph = helper.make_graph(
            [helper.make_node("MatMul", ["x", "w"], ["m"]),
             helper.make_node("Add", ["m", "b"], ["a"]),
             helper.make_node("Relu", ["a"], ["y"])],
            "tiny",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 6])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])],
            [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
        path = os.path.join(self.dir, "tiny.onnx")
        with open(path, "wb") as f:
            f.write(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
                    .SerializeToString())
        model = vkpipe.load(path, dims={"batch": 3})
        self.assertEqual(model.inputs, [vkpipe.TensorSpec("x", "float32", (3, 6))])
        x = r.standard_normal((3, 6)).astype(np.float32)
        np.testing.assert_allclose(model.run(x=x)["y"], np.maximum(x @ w + b, 0),
                                   rtol=1e-5, atol=1e-5)
        with self.assertRaises(vkpipe.Error) as cm:
            vkpipe.load(path)  # the batch size is missing
        self.assertIn("batch", str(cm.exception))
        # The batch varying at run time up to 4: one model, batches 1 and 4.
        varying = vkpipe.load(path, max_dims={"batch": 4})
        self.assertEqual(varying.inputs, [vkpipe.TensorSpec("x", "float32", (4, 6))])
        for n in (1, 4):
            x = r.standard_normal((n, 6)).astype(np.float32)
            y = varying.run(x=x)["y"]
            self.assertEqual(y.shape, (n, 4))
            np.testing.assert_allclose(y, np.maximum(x @ w + b, 0), rtol=1e-5, atol=1e-5)
        with self.assertRaises(vkpipe.InvalidArgumentError) as cm:
            varying.run(x=np.zeros((5, 6), np.float32))  # past the bound
        self.assertIn("'x'", str(cm.exception))

    def test_shape_bindings(self):
        path = write_graph(self.dir, "sym", [("x", "float32", ("batch", 4))], [],
                           [("r", "relu", ["x"], ["y"], None)],
                           [("y", "float32", None)])
        with self.assertRaises(vkpipe.InvalidArgumentError) as cm:
            vkpipe.load(path)
        self.assertIn("batch", str(cm.exception))
        self.assertEqual(vkpipe.load(path, dims={"batch": 3}).inputs[0].shape, (3, 4))
        self.assertEqual(vkpipe.load(path, shapes={"x": [5, 4]}).inputs[0].shape, (5, 4))
        with self.assertRaises(vkpipe.Error):
            vkpipe.load(path, dims={"nosuch": 3})

    def test_load_errors(self):
        with self.assertRaises(vkpipe.Error) as cm:
            vkpipe.load(os.path.join(self.dir, "missing.json"))
        self.assertIn("missing.json", str(cm.exception))
        self.assertTrue(cm.exception.code)
        bad = os.path.join(self.dir, "bad.json")
        with open(bad, "w") as f:
            f.write("{ not json")
        with self.assertRaises(vkpipe.ParseError):
            vkpipe.load(bad)
        with self.assertRaises(TypeError):
            vkpipe.load(path=None)  # type: ignore[arg-type]
        with self.assertRaises(TypeError):
            vkpipe.load(Mlp(self.dir).path, dims={"batch": "two"})

    def test_exception_families(self):
        self.assertTrue(issubclass(vkpipe.InvalidArgumentError, ValueError))
        self.assertTrue(issubclass(vkpipe.NotFoundError, LookupError))
        self.assertTrue(issubclass(vkpipe.IOError, OSError))
        self.assertTrue(issubclass(vkpipe.UnsupportedError, NotImplementedError))
        self.assertTrue(issubclass(vkpipe.TimeoutError, TimeoutError))
        for cls in (vkpipe.ParseError, vkpipe.DeviceError, vkpipe.StateError,
                    vkpipe.CancelledError, vkpipe.OutOfMemoryError, vkpipe.InternalError):
            self.assertTrue(issubclass(cls, vkpipe.Error))


class RunTest(TempDirTest):
    def test_run_on_every_target_matches_numpy(self):
        mlp = Mlp(self.dir)
        model = vkpipe.load(mlp.path)
        x = mlp.input()
        want = mlp.reference(x)
        targets = [d.target for d in vkpipe.devices() if d.available]
        self.assertIn("ref", targets)
        for target in targets:
            got = model.run(x=x, target=target)
            for name in ("h", "y"):
                np.testing.assert_allclose(got[name], want[name], rtol=1e-4, atol=1e-4,
                                           err_msg=f"{target}:{name}")

    def test_input_errors_name_the_input(self):
        model = vkpipe.load(Mlp(self.dir).path)
        x = Mlp(self.dir).input()
        cases = [
            ({"x": x.astype(np.float64)}, vkpipe.InvalidArgumentError, "dtype float64"),
            ({"x": x[:1]}, vkpipe.InvalidArgumentError, "shape [1, 16]"),
            ({"x": np.ones((16, 2), np.float32).T},
             vkpipe.InvalidArgumentError, "C-contiguous"),
            ({"x": x.astype(">f4")}, vkpipe.InvalidArgumentError, "byte order"),
            ({"x": x.tolist()}, TypeError, "numpy.ndarray"),
            ({"x": np.array(["a"] * 32).reshape(2, 16)}, vkpipe.InvalidArgumentError, "no vkpipe"),
            ({}, vkpipe.InvalidArgumentError, "missing input"),
            ({"x": x, "z": x}, vkpipe.InvalidArgumentError, "unknown input"),
        ]
        for inputs, exc, text in cases:
            with self.subTest(text=text):
                with self.assertRaises(exc) as cm:
                    model.run(inputs)
                self.assertIn(text, str(cm.exception))
                if exc is vkpipe.InvalidArgumentError and "input" not in text:
                    self.assertIn("'x'", str(cm.exception))

    def test_unknown_target(self):
        model = vkpipe.load(Mlp(self.dir).path)
        with self.assertRaises(vkpipe.Error) as cm:
            model.run(x=Mlp(self.dir).input(), target="npu")
        self.assertIn("npu", str(cm.exception))
        with self.assertRaises(vkpipe.Error):
            model.check("npu")

    def test_check(self):
        model = vkpipe.load(Mlp(self.dir).path)
        model.check()
        model.check("ref")
        model.check("cpu")


class PartitionTest(TempDirTest):
    def test_policies_and_plan_inspection(self):
        mlp = Mlp(self.dir)
        model = vkpipe.load(mlp.path)
        plan = model.partition(policy="cpu", stages=2)
        self.assertEqual(len(plan.stages), 2)
        self.assertTrue(all(s.target == "cpu" for s in plan.stages))
        self.assertEqual(sorted(n for s in plan.stages for n in s.nodes),
                         sorted(n for n, _ in model.nodes))
        self.assertEqual(plan.inputs, model.inputs)
        self.assertEqual(plan.outputs, ["h", "y"])
        self.assertGreater(plan.bottleneck_ms, 0)
        self.assertEqual(len(plan.stage_costs), 2)
        self.assertIn("stage", repr(plan))
        auto = model.partition()
        self.assertGreaterEqual(len(auto.stages), 1)
        manual = model.partition(policy="cpu", assign={"fc2*": "ref"}, keep_islands=True)
        targets = {n: s.target for s in manual.stages for n in s.nodes}
        self.assertEqual(targets["fc2"], "ref")
        self.assertEqual(targets["fc1"], "cpu")
        self.assertTrue(all(s.replicas == 1 for s in plan.stages))
        # Copies: every stage twice, the plan says so and runs like one copy.
        copies = model.partition(policy="cpu", stages=1, replicas=2)
        self.assertEqual([s.replicas for s in copies.stages], [2])
        pipe = copies.pipeline()
        xs = [mlp.input(salt) for salt in range(6)]
        frames = [pipe.submit(x=x) for x in xs]
        for x, frame in zip(xs, frames):
            got, want = frame.result(timeout=60), mlp.reference(x)
            for k in want:
                np.testing.assert_allclose(got[k], want[k], rtol=1e-4, atol=1e-4)
        pipe.close()
        with self.assertRaises(vkpipe.UnsupportedError):
            model.partition(policy="vulkan", stages=1, replicas=2)

    @unittest.skipUnless(any(d.target == "vulkan" and d.available for d in vkpipe.devices()),
                         "no Vulkan device")
    def test_fallback_reasons(self):
        # vulkan has no max_unpool kernel: that node falls back to cpu, and
        # both check() and the plan say why.
        path = write_graph(
            self.dir, "max_unpool",
            [("a", "float32", (1, 1, 2, 2)), ("i", "int64", (1, 1, 2, 2)),
             ("c", "float32", (4,))],
            [("two", np.full(4, 2.0, np.float32))],
            [("q", "max_unpool", ["a", "i"], ["q"],
              {"kernel_shape": {"ints": [2, 2]}, "strides": {"ints": [2, 2]}}),
             ("d", "mul", ["c", "two"], ["d"], None)],
            [("q", "float32", (1, 1, 4, 4)), ("d", "float32", (4,))])
        model = vkpipe.load(path)
        with self.assertRaises(vkpipe.UnsupportedError) as cm:
            model.check("vulkan")
        self.assertIn("'q'", str(cm.exception))
        plan = model.partition(policy="vulkan")
        self.assertEqual([(f.node, f.instead_of) for f in plan.fallbacks], [("q", "vulkan")])
        self.assertTrue(plan.fallbacks[0].reason)
        self.assertIn("fallback: q not on vulkan", repr(plan))
        targets = {n: s.target for s in plan.stages for n in s.nodes}
        self.assertEqual(targets, {"q": "cpu", "d": "vulkan"})
        gen = np.random.default_rng()
        a = gen.standard_normal((1, 1, 2, 2)).astype(np.float32)
        # Each element lands at a distinct flat offset of the 4 x 4 output,
        # inside its own 2 x 2 window (as MaxPool's indices would be).
        rows, cols = np.meshgrid(np.arange(2), np.arange(2), indexing="ij")
        pick = gen.integers(0, 2, (2, 2, 2))
        idx = ((rows * 2 + pick[0]) * 4 + cols * 2 + pick[1]).astype(np.int64)[None, None]
        c = gen.standard_normal(4).astype(np.float32)
        with plan.pipeline() as pipe:
            out = pipe.infer(a=a, i=idx, c=c)
        want = np.zeros(16, np.float32)
        want[idx.ravel()] = a.ravel()
        np.testing.assert_allclose(out["q"], want.reshape(1, 1, 4, 4), rtol=0, atol=0)
        np.testing.assert_allclose(out["d"], c * 2)

    def test_plan_save_and_json(self):
        model = vkpipe.load(Mlp(self.dir).path)
        plan = model.partition(policy="ref", stages=2)
        doc = json.loads(plan.to_json())
        self.assertEqual(len(doc["stages"]), 2)
        path = os.path.join(self.dir, "plan.json")
        plan.save(path)
        self.assertEqual(json.loads(read_bytes(path))["stages"], doc["stages"])

    def test_profile_argument(self):
        model = vkpipe.load(Mlp(self.dir).path)
        plan = model.partition(profile={"targets": {}})
        self.assertGreaterEqual(len(plan.stages), 1)
        with self.assertRaises(vkpipe.ParseError):
            model.partition(profile={"targets": 3})
        with self.assertRaises(FileNotFoundError):
            model.partition(profile=os.path.join(self.dir, "none.json"))

    def test_profile_from_environment(self):
        # Without profile=, partition() plans with $VKPIPE_PROFILE as the
        # tools do (a file, or "default"); unset, the machine's cached
        # profile (not measured here: the suite runs with "default").
        model = vkpipe.load(Mlp(self.dir).path)
        slow = os.path.join(self.dir, "slow.json")
        with open(slow, "w", encoding="utf-8") as f:
            json.dump({"targets": {"cpu": {"gflops": 0.001, "gbps": 0.001}}}, f)
        old = os.environ.get("VKPIPE_PROFILE")
        try:
            os.environ["VKPIPE_PROFILE"] = slow
            from_env = model.partition(policy="cpu").bottleneck_ms
            os.environ["VKPIPE_PROFILE"] = "default"
            default = model.partition(policy="cpu").bottleneck_ms
            os.environ["VKPIPE_PROFILE"] = os.path.join(self.dir, "none.json")
            with self.assertRaises(vkpipe.IOError):
                model.partition(policy="cpu")
        finally:
            if old is None:
                os.environ.pop("VKPIPE_PROFILE", None)
            else:
                os.environ["VKPIPE_PROFILE"] = old
        self.assertEqual(model.partition(policy="cpu", profile="default").bottleneck_ms, default)
        self.assertEqual(model.partition(policy="cpu", profile=slow).bottleneck_ms, from_env)
        self.assertGreater(from_env, 100 * default)

    def test_partition_errors(self):
        model = vkpipe.load(Mlp(self.dir).path)
        with self.assertRaises(vkpipe.Error) as cm:
            model.partition(policy="npu")
        self.assertIn("npu", str(cm.exception))
        with self.assertRaises(vkpipe.InvalidArgumentError):
            model.partition(stages=-1)
        with self.assertRaises(TypeError):
            model.partition(assign={"fc1": 3})


class ArtifactTest(TempDirTest):
    def test_build_load_and_run(self):
        mlp = Mlp(self.dir)
        model = vkpipe.load(mlp.path)
        path = os.path.join(self.dir, "mlp.vkp")
        plan = model.build(path, policy="cpu", stages=2)
        self.assertEqual(len(plan.stages), 2)
        art = vkpipe.load(path)
        self.assertTrue(art.is_artifact)
        self.assertEqual(art.inputs, model.inputs)
        self.assertEqual([s.name for s in art.partition().stages],
                         [s.name for s in plan.stages])
        with self.assertRaises(vkpipe.InvalidArgumentError):
            art.partition(policy="ref")
        with self.assertRaises(vkpipe.StateError):
            art.run(x=mlp.input())
        with self.assertRaises(vkpipe.InvalidArgumentError):
            vkpipe.load(path, dims={"batch": 1})
        x = mlp.input(5)
        with art.pipeline() as pipe:
            got = pipe.infer(x=x)
        np.testing.assert_allclose(got["y"], mlp.reference(x)["y"], rtol=1e-4, atol=1e-4)

    def test_corrupt_artifact(self):
        mlp = Mlp(self.dir)
        path = os.path.join(self.dir, "mlp.vkp")
        vkpipe.load(mlp.path).build(path, policy="ref")
        data = bytearray(read_bytes(path))
        data[len(data) // 2] ^= 0xFF
        with open(path, "wb") as f:
            f.write(data[: len(data) - 7])
        with self.assertRaises(vkpipe.Error):
            vkpipe.load(path)


class NativeLayerTest(TempDirTest):
    """The extension itself (vkpipe._vkpipe) raises, never crashes, on
    arguments the Python layer would not pass."""

    def test_garbage_arguments(self):
        from vkpipe import _vkpipe
        mlp = Mlp(self.dir)
        graph = _vkpipe.load_graph(mlp.path)
        plan, _ = _vkpipe.partition(graph, policy="ref", stages=2)
        pipe = _vkpipe.Pipeline(plan)
        x = mlp.input()
        calls = [
            lambda: _vkpipe.load_graph(123),
            lambda: _vkpipe.load_graph(mlp.path, [("batch",)]),
            lambda: _vkpipe.load_graph(mlp.path, None, [("x", [1] * 9)]),
            lambda: _vkpipe.load_graph(mlp.path, None, [("x", ["a"])]),
            lambda: _vkpipe.partition(None),
            lambda: _vkpipe.partition(graph, assigns=[("a",)]),
            lambda: _vkpipe.partition(graph, profile_json="{"),
            lambda: _vkpipe.Pipeline(None),
            lambda: _vkpipe.Pipeline(plan, ring_depth=-1),
            lambda: _vkpipe.Graph(),
            lambda: graph.run("ref", [x, x]),
            lambda: graph.run("ref", 5),
            lambda: graph.check(None),
            lambda: plan.build(os.path.join(self.dir, "no", "such", "dir.vkp")),
            lambda: plan.save(os.path.join(self.dir, "no", "such", "plan.json")),
            lambda: pipe.submit(5),
            lambda: pipe.submit([]),
            lambda: pipe.submit_named([x]),
            lambda: pipe.submit_named({"x": x, 3: x}),
            lambda: pipe.infer([None]),
            lambda: pipe.get_output("soon"),
            lambda: pipe.get_output(-1.0),
            lambda: pipe.drain(float("nan")),
            lambda: _vkpipe.calibrate(repeats=-3),
            lambda: _vkpipe.load_artifact(mlp.path),
        ]
        for i, call in enumerate(calls):
            with self.subTest(call=i):
                with self.assertRaises((vkpipe.Error, TypeError, ValueError, OverflowError)):
                    call()
        self.assertEqual(pipe.infer([x])[1].shape, (2, 8))  # still usable
        pipe.close()
        with self.assertRaises(vkpipe.StateError):
            pipe.get_output(0)
        with self.assertRaises(vkpipe.StateError):
            pipe.trace()


class DevicesTest(unittest.TestCase):
    def test_devices(self):
        devs = vkpipe.devices()
        names = [d.target for d in devs]
        self.assertIn("ref", names)
        self.assertIn("cpu", names)
        for d in devs:
            self.assertIsInstance(d.device, str)
            if not d.available:
                self.assertTrue(d.reason)

    def test_calibrate(self):
        with self.assertRaises(vkpipe.InvalidArgumentError):
            vkpipe.calibrate(repeats=-1)
        import tempfile
        import warnings
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "profile.json")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                prof = vkpipe.calibrate(path, matmul_size=16, elementwise=4096, repeats=1)
            self.assertIn("targets", prof)
            self.assertEqual(json.loads(read_bytes(path)), prof)


if __name__ == "__main__":
    unittest.main()

# SPDX-License-Identifier: Apache-2.0
"""Tensors across the boundary: every dtype round trip, DLPack producers in
(NumPy, a bare producer, PyTorch when installed), outputs out through
DLPack, zero-copy outputs, no references kept on inputs."""
import sys
import unittest

import numpy as np

import vkpipe
from testlib import Mlp, TempDirTest, rng, write_identity

try:
    import torch  # type: ignore
except ImportError:  # Debian's python3-torch is optional
    torch = None

# vkpipe dtype -> the NumPy dtype that carries it (bfloat16 as raw uint16 bits)
DTYPES = {
    "float32": np.float32, "float16": np.float16, "float64": np.float64,
    "int64": np.int64, "int32": np.int32, "int16": np.int16, "int8": np.int8,
    "uint64": np.uint64, "uint32": np.uint32, "uint16": np.uint16, "uint8": np.uint8,
    "bool": np.bool_, "bfloat16": np.uint16,
}


def random_array(dtype, shape, salt=0):
    r = rng(salt)
    if dtype == np.bool_:
        return r.integers(0, 2, shape).astype(np.bool_)
    if np.issubdtype(dtype, np.floating):
        return r.standard_normal(shape).astype(dtype)
    info = np.iinfo(dtype)
    return r.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


class Producer:
    """Only __dlpack__: what a framework other than NumPy hands over."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, stream=None):
        return self.array.__dlpack__()

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


class DtypeTest(TempDirTest):
    def test_round_trip_every_dtype(self):
        for name, npdtype in DTYPES.items():
            with self.subTest(dtype=name):
                model = vkpipe.load(write_identity(self.dir, name))
                x = random_array(npdtype, (3, 5), salt=len(name))
                with model.pipeline(policy="ref") as pipe:
                    y = pipe.infer(x=x)["y"]
                    self.assertEqual(y.dtype, np.dtype(npdtype))
                    np.testing.assert_array_equal(y, x)
                    if name in ("bool", "bfloat16"):
                        continue  # NumPy 1.24 exports neither through DLPack
                    y2 = pipe.submit(x=Producer(x)).result()["y"]
                    np.testing.assert_array_equal(y2, x)

    def test_dtype_mismatch_is_not_converted(self):
        model = vkpipe.load(write_identity(self.dir, "int32"))
        with model.pipeline(policy="ref") as pipe:
            with self.assertRaises(vkpipe.InvalidArgumentError) as cm:
                pipe.infer(x=np.zeros((3, 5), np.int64))
            self.assertIn("'x'", str(cm.exception))
            with self.assertRaises(vkpipe.InvalidArgumentError):
                pipe.infer(x=Producer(np.zeros((3, 5), np.float32)))
            with self.assertRaises(vkpipe.InvalidArgumentError):
                pipe.infer(x=Producer(np.zeros((3, 4), np.int32)))


class DLPackTest(TempDirTest):
    def setUp(self):
        super().setUp()
        self.mlp = Mlp(self.dir)
        self.model = vkpipe.load(self.mlp.path)

    def test_outputs_own_their_buffers_and_export(self):
        with self.model.pipeline(policy="ref") as pipe:
            x = self.mlp.input()
            out = pipe.infer(x=x)
        y = out["y"]  # outlives the pipeline
        self.assertTrue(y.flags.c_contiguous and y.flags.writeable)
        self.assertIsNotNone(y.base)  # the library's buffer, no copy
        np.testing.assert_allclose(y, self.mlp.reference(x)["y"], rtol=1e-4, atol=1e-4)
        z = np.from_dlpack(y)
        self.assertTrue(np.shares_memory(z, y))
        del out, y
        np.testing.assert_allclose(z, self.mlp.reference(x)["y"], rtol=1e-4, atol=1e-4)

    def test_no_reference_kept_on_inputs(self):
        with self.model.pipeline(policy="ref") as pipe:
            x = self.mlp.input()
            before = sys.getrefcount(x)
            for _ in range(10):
                pipe.infer(x=x)
                pipe.submit(x=x).result()
            self.assertEqual(sys.getrefcount(x), before)

    def test_non_contiguous_dlpack_is_an_error(self):
        with self.model.pipeline(policy="ref") as pipe:
            x = np.ascontiguousarray(self.mlp.input().T).T  # F-order view
            with self.assertRaises(vkpipe.Error) as cm:
                pipe.infer(x=Producer(x))
            self.assertIn("'x'", str(cm.exception))

    def test_bad_dlpack_producer(self):
        class Liar:
            def __dlpack__(self, stream=None):
                return "not a capsule"

        class Raiser:
            def __dlpack__(self, stream=None):
                raise RuntimeError("producer failed")

        with self.model.pipeline(policy="ref") as pipe:
            with self.assertRaises(vkpipe.InvalidArgumentError):
                pipe.infer(x=Liar())
            with self.assertRaisesRegex(RuntimeError, "producer failed"):
                pipe.infer(x=Raiser())

    @unittest.skipIf(torch is None, "PyTorch not installed (Debian: python3-torch)")
    def test_torch_tensors_in_and_out(self):
        x = torch.from_numpy(self.mlp.input())
        with self.model.pipeline(policy="ref") as pipe:
            out = pipe.infer(x=x)
        y = torch.from_dlpack(out["y"])
        np.testing.assert_allclose(y.numpy(), self.mlp.reference(x.numpy())["y"],
                                   rtol=1e-4, atol=1e-4)
        with self.model.pipeline(policy="ref") as pipe:
            with self.assertRaises(vkpipe.Error):
                pipe.infer(x=x.t().contiguous().t())  # strided view
            with self.assertRaises(vkpipe.InvalidArgumentError):
                pipe.infer(x=x.double())


if __name__ == "__main__":
    unittest.main()

# SPDX-License-Identifier: Apache-2.0
"""Real exports built at test time: torchvision (and torch.nn) models with
random weights, exported by torch.onnx at small input sizes, run by vkpipe on
ref, cpu and (for some) vulkan, and compared with PyTorch's own output on the
same fresh random input. Nothing is downloaded. Debian's python3-torch and
python3-torchvision are installed by `scripts/setup.sh --tests`; without them
the tests are skipped. The full-size models are benchmarks
(tools/zoo/export_zoo.py, docs/benchmarks.md), not tests."""
import os
import tempfile
import unittest

import numpy as np

import vkpipe

try:
    import torch  # type: ignore
    import torchvision  # type: ignore
except ImportError:  # optional: scripts/setup.sh --tests installs them
    torch = None
else:
    import warnings
    # The exporter traces; its notes on Python-side asserts are not ours.
    warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)

SEED = int(os.environ.get("VKPIPE_TEST_SEED") or np.random.SeedSequence().entropy % (1 << 31))
RTOL, ATOL = 1e-3, 1e-4


def _randomize_norms(model, gen):
    """BatchNorm running statistics away from the (0, 1) they start at, so
    the folded or computed normalisation is really tested."""
    for m in model.modules():
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
            m.running_mean.copy_(torch.randn(m.running_mean.shape, generator=gen) * 0.1)
            m.running_var.copy_(torch.rand(m.running_var.shape, generator=gen) * 0.5 + 0.75)


class _Audio1d(torch.nn.Module if torch else object):
    """A 1-D audio classifier in the style of M5: Conv1d, BatchNorm1d,
    MaxPool1d, global pooling, LogSoftmax."""

    def __init__(self):
        super().__init__()
        nn = torch.nn
        self.body = nn.Sequential(
            nn.Conv1d(1, 16, 20, stride=4), nn.BatchNorm1d(16), nn.ReLU(), nn.MaxPool1d(4),
            nn.Conv1d(16, 16, 3), nn.BatchNorm1d(16), nn.ReLU(), nn.MaxPool1d(4),
            nn.Conv1d(16, 32, 3, padding=1), nn.BatchNorm1d(32), nn.ReLU())
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        y = self.body(x).mean(dim=-1)
        return torch.log_softmax(self.fc(y), dim=-1)


def _models():
    tv = torchvision.models
    return {
        # name: (constructor, input shape, targets)
        "resnet18": (lambda: tv.resnet18(num_classes=10), (1, 3, 64, 64), ("ref", "cpu", "vulkan")),
        "mobilenet_v3_small": (lambda: tv.mobilenet_v3_small(num_classes=10), (1, 3, 64, 64),
                               ("ref", "cpu", "vulkan")),
        "squeezenet1_1": (lambda: tv.squeezenet1_1(num_classes=10), (1, 3, 64, 64), ("ref", "cpu")),
        "shufflenet_v2_x0_5": (lambda: tv.shufflenet_v2_x0_5(num_classes=10), (1, 3, 64, 64),
                               ("ref", "cpu")),
        "efficientnet_b0": (lambda: tv.efficientnet_b0(num_classes=10), (1, 3, 64, 64), ("ref", "cpu")),
        "lraspp_mobilenet_v3_large": (
            lambda: tv.segmentation.lraspp_mobilenet_v3_large(
                weights=None, weights_backbone=None, num_classes=3),
            (1, 3, 64, 64), ("ref", "cpu")),
        "vit_tiny": (lambda: tv.vision_transformer.VisionTransformer(
            image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=32, mlp_dim=64,
            num_classes=10), (1, 3, 32, 32), ("ref", "cpu")),
        "audio_m5": (_Audio1d, (1, 1, 4000), ("ref", "cpu", "vulkan")),
    }


@unittest.skipIf(torch is None, "PyTorch/torchvision not installed (scripts/setup.sh --tests)")
class TorchvisionExports(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="vkpipe-torchvision-")
        print(f"VKPIPE_TEST_SEED={SEED}")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def export(self, name, dynamic_batch=False):
        make, shape, targets = _models()[name]
        torch.manual_seed(SEED)
        gen = torch.Generator().manual_seed(SEED + 1)
        model = make().eval()
        with torch.no_grad():
            _randomize_norms(model, gen)
        path = os.path.join(self.tmp.name, f"{name}{'_dyn' if dynamic_batch else ''}.onnx")
        kw = {}
        if dynamic_batch:
            kw["dynamic_axes"] = {"input": {0: "batch"}, "output": {0: "batch"}}
        torch.onnx.export(model, torch.randn(*shape), path, input_names=["input"],
                          output_names=["output"], opset_version=17, **kw)
        return model, path, shape, targets

    def check(self, name):
        model, path, shape, targets = self.export(name)
        x = np.random.default_rng(SEED).standard_normal(shape).astype(np.float32)
        with torch.no_grad():
            out = model(torch.from_numpy(x))
        want = (out["out"] if isinstance(out, dict) else out).numpy()
        loaded = vkpipe.load(path)
        scale = max(1.0, float(np.abs(want).max()))
        for target in targets:
            with self.subTest(target=target):
                got = loaded.run({"input": x}, target=target)
                first = got[loaded.outputs[0].name]
                self.assertEqual(first.shape, want.shape)
                np.testing.assert_allclose(first, want, rtol=RTOL, atol=ATOL * scale,
                                           err_msg=f"{name} on {target} (VKPIPE_TEST_SEED={SEED})")

    def test_resnet18(self):
        self.check("resnet18")

    def test_mobilenet_v3_small(self):
        self.check("mobilenet_v3_small")

    def test_squeezenet1_1(self):
        self.check("squeezenet1_1")

    def test_shufflenet_v2_x0_5(self):
        self.check("shufflenet_v2_x0_5")

    def test_efficientnet_b0(self):
        self.check("efficientnet_b0")

    def test_lraspp_mobilenet_v3_large(self):
        self.check("lraspp_mobilenet_v3_large")

    def test_vit_tiny(self):
        self.check("vit_tiny")

    def test_audio_m5(self):
        self.check("audio_m5")

    def test_dynamic_batch(self):
        """A batch axis exported as dynamic: bound at load, and bounded (one
        model for any batch up to 3)."""
        model, path, shape, _ = self.export("resnet18", dynamic_batch=True)
        rng = np.random.default_rng(SEED + 2)
        for batch in (2, 3):
            x = rng.standard_normal((batch,) + shape[1:]).astype(np.float32)
            with torch.no_grad():
                want = model(torch.from_numpy(x)).numpy()
            got = vkpipe.load(path, dims={"batch": batch}).run({"input": x}, target="cpu")
            np.testing.assert_allclose(got["output"], want, rtol=RTOL, atol=ATOL,
                                       err_msg=f"batch {batch} (VKPIPE_TEST_SEED={SEED})")
        bounded = vkpipe.load(path, max_dims={"batch": 3})
        x = rng.standard_normal((1,) + shape[1:]).astype(np.float32)
        with torch.no_grad():
            want = model(torch.from_numpy(x)).numpy()
        got = bounded.run({"input": x}, target="ref")
        np.testing.assert_allclose(got["output"], want, rtol=RTOL, atol=ATOL,
                                   err_msg=f"bounded, batch 1 (VKPIPE_TEST_SEED={SEED})")


if __name__ == "__main__":
    unittest.main()

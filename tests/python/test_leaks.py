# SPDX-License-Identifier: Apache-2.0
"""No leaked references or memory: 100,000 calls through the binding (infer,
submit/result, errors), then pipelines and models made and dropped, with the
process's resident memory and Python's object count measured around them."""
import gc
import sys
import unittest

import numpy as np

import vkpipe
from testlib import Mlp, TempDirTest


def rss_kib():
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * 4


class LeakTest(TempDirTest):
    def setUp(self):
        super().setUp()
        self.mlp = Mlp(self.dir, batch=1)
        self.model = vkpipe.load(self.mlp.path)

    def measure(self, fn, n):
        fn(n // 10)  # warm up: caches, allocator pools
        gc.collect()
        objects, rss = len(gc.get_objects()), rss_kib()
        fn(n)
        gc.collect()
        return len(gc.get_objects()) - objects, rss_kib() - rss

    def test_100k_calls(self):
        x = self.mlp.input()
        bad = x.astype(np.float64)
        with self.model.pipeline(policy="ref", stages=2) as pipe:
            def calls(n):
                for i in range(n):
                    if i % 3 == 0:
                        pipe.submit(x=x).result()
                    elif i % 50 == 1:
                        try:
                            pipe.infer(x=bad)
                        except vkpipe.InvalidArgumentError:
                            pass
                    else:
                        pipe.infer(x=x)
            refs = sys.getrefcount(x), sys.getrefcount(bad)
            objects, rss = self.measure(calls, 100_000)
            self.assertEqual((sys.getrefcount(x), sys.getrefcount(bad)), refs)
        self.assertLess(objects, 100, "Python objects leaked")
        # 100,000 frames of a few hundred bytes each would be tens of MiB.
        self.assertLess(rss, 4096, "memory grew by %d KiB" % rss)

    def test_objects_made_and_dropped(self):
        x = self.mlp.input()

        def cycle(n):
            for i in range(max(n, 1)):
                model = vkpipe.load(self.mlp.path)
                plan = model.partition(policy="ref", stages=2)
                with plan.pipeline() as pipe:
                    pipe.submit(x=x)  # left in flight on purpose
                    pipe.infer  # noqa: B018
                pipe2 = plan.pipeline()
                pipe2.infer(x=x)
                del pipe2
                try:
                    model.run(x=x.astype(np.float64))
                except vkpipe.Error:
                    pass
        objects, rss = self.measure(cycle, 300)
        self.assertLess(objects, 100, "Python objects leaked")
        self.assertLess(rss, 8192, "memory grew by %d KiB" % rss)


if __name__ == "__main__":
    unittest.main()

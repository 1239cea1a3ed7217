"""Observers and quantize / fake-quantize: PyTorch 1.13's committed numbers, and equal to `octet observe`."""

import json
import os
import unittest

import numpy as np

import octet
from _common import SOURCE_DIR, TempDirTest, run_cli

OBSERVERS = os.path.join(SOURCE_DIR, "tests", "data", "observers")
FAKE_QUANT = os.path.join(SOURCE_DIR, "tests", "data", "fake_quant")

CLASSES = {
    "minmax": octet.MinMaxObserver,
    "moving_average_minmax": octet.MovingAverageMinMaxObserver,
    "per_channel_minmax": octet.PerChannelMinMaxObserver,
    "moving_average_per_channel_minmax": octet.MovingAveragePerChannelMinMaxObserver,
    "histogram": octet.HistogramObserver,
}


def floats(values):
    return np.array([float(v) for v in values], np.float32)  # "inf" / "nan" strings included


class PyTorchParityTest(unittest.TestCase):
    """Every case of tests/data/observers/manifest.json (PyTorch 1.13's results)."""

    @classmethod
    def setUpClass(cls):
        with open(os.path.join(OBSERVERS, "manifest.json")) as f:
            cls.manifest = json.load(f)
        cls.inputs = {name: [np.load(os.path.join(OBSERVERS, f)) for f in spec["files"]]
                      for name, spec in cls.manifest["inputs"].items()}

    def test_every_case(self):
        checked = errors = 0
        for case in self.manifest["cases"]:
            with self.subTest(case=case["name"]):
                cls = CLASSES[case["observer"]]
                expect = case["expect"]
                if "error" in expect:
                    with self.assertRaises(octet.Error):
                        cls(**case["options"])
                    errors += 1
                    continue
                obs = cls(**case["options"])
                for batch in self.inputs[case["input"]]:
                    self.assertIs(obs(batch), batch)  # PyTorch's forward returns its input
                scale, zero_point = obs.calculate_qparams()
                self.assertEqual(scale.dtype, np.float32)
                self.assertEqual(zero_point.dtype, np.int32)
                np.testing.assert_array_equal(scale, floats(expect["scale"]))
                np.testing.assert_array_equal(zero_point, expect.get("octet_zero_point", expect["zero_point"]))
                np.testing.assert_array_equal(np.atleast_1d(obs.min_val), floats(expect["min_val"]))
                np.testing.assert_array_equal(np.atleast_1d(obs.max_val), floats(expect["max_val"]))
                checked += 1
        self.assertEqual(checked + errors, self.manifest["num_cases"])
        self.assertGreater(checked, 1000)


class ObserverTest(TempDirTest):
    def setUp(self):
        super().setUp()
        rng = np.random.default_rng(20)
        self.batches = [rng.normal(0.3, 1.7, size=(7, 33)).astype(np.float32) for _ in range(4)]

    def test_equals_octet_observe(self):
        files = []
        for k, b in enumerate(self.batches):
            files.append(os.path.join(self.tmp, "b%d.npy" % k))
            np.save(files[-1], b)
        for name, cls, kwargs, flags in [
            ("minmax", octet.MinMaxObserver, {"dtype": "qint8", "qscheme": "per_tensor_symmetric"},
             ["--dtype", "qint8", "--qscheme", "per_tensor_symmetric"]),
            ("histogram", octet.HistogramObserver, {"reduce_range": True}, ["--reduce-range"]),
            ("per_channel_minmax", octet.PerChannelMinMaxObserver, {"ch_axis": 1}, ["--ch-axis", "1"]),
            ("percentile", octet.PercentileObserver, {"percentile": 99.0}, ["--percentile", "99"]),
        ]:
            with self.subTest(observer=name):
                obs = cls(**kwargs)
                for b in self.batches:
                    obs.observe(b)
                cli = json.loads(run_cli("observe", "--observer", name, *flags, *files))
                scale, zero_point = obs.calculate_qparams()
                np.testing.assert_array_equal(scale, floats(cli["scale"]))
                np.testing.assert_array_equal(zero_point, cli["zero_point"])
                self.assertEqual(obs.quant_min, cli["quant_min"])
                self.assertEqual(obs.quant_max, cli["quant_max"])

    def test_merge_and_state(self):
        whole = octet.MinMaxObserver(dtype="qint8")
        for b in self.batches:
            whole(b)
        left, right = octet.MinMaxObserver(dtype="qint8"), octet.MinMaxObserver(dtype="qint8")
        for b in self.batches[:2]:
            left(b)
        for b in self.batches[2:]:
            right(b)
        left.merge(right)
        for a, b in zip(left.calculate_qparams(), whole.calculate_qparams()):
            np.testing.assert_array_equal(a, b)
        self.assertEqual(left.num_batches, 4)
        state = json.loads(json.dumps(whole.state()))  # JSON-ready
        restored = octet.observer_from_state(state)
        self.assertIsInstance(restored, octet.MinMaxObserver)
        np.testing.assert_array_equal(restored.calculate_qparams()[0], whole.calculate_qparams()[0])
        with self.assertRaises(octet.Error):
            left.merge(octet.MinMaxObserver(dtype="quint8"))  # other options
        clone = whole.clone()
        whole.reset()
        self.assertFalse(whole.has_observations)
        self.assertTrue(clone.has_observations)

    def test_torch_style_arguments_and_errors(self):
        class FakeTorchDtype:  # torch.qint8 prints as "torch.qint8"
            def __str__(self):
                return "torch.qint8"

        obs = octet.MinMaxObserver(dtype=FakeTorchDtype(), qscheme="torch.per_tensor_symmetric")
        self.assertEqual((obs.quant_min, obs.quant_max), (-128, 127))
        with self.assertRaises(octet.Error) as e:
            octet.MinMaxObserver(bins=10)  # another observer's option
        self.assertIn("'bins'", str(e.exception))
        with self.assertRaises(TypeError):
            octet.MinMaxObserver(no_such_option=1)
        with self.assertRaises(octet.Error):
            octet.MinMaxObserver(qscheme="per_channel_affine")
        bad = self.batches[0].copy()
        bad[1, 2] = np.inf
        with self.assertRaises(octet.Error) as e:
            octet.MinMaxObserver().observe(bad, "conv1.weight")
        self.assertIn("conv1.weight", str(e.exception))
        skipping = octet.MinMaxObserver(skip_non_finite=True)
        skipping(bad)
        self.assertEqual(skipping.num_skipped, 1)


class QuantizeOpsTest(unittest.TestCase):
    def test_quantize_per_tensor(self):
        x = np.array([-1.0, -0.26, 0.0, 0.25, 0.75, 1.25, 1000.0, -100.0], np.float32)
        q = octet.quantize_per_tensor(x, 0.5, 3, "quint8")
        self.assertEqual(q.dtype, np.uint8)
        # q = clamp(zp + rne(x / s)): ties to even (0.25 / 0.5 = 0.5 -> 0, 0.75 / 0.5 = 1.5 -> 2, 1.25 -> 2).
        np.testing.assert_array_equal(q, [1, 2, 3, 3, 5, 5, 255, 0])
        np.testing.assert_array_equal(octet.dequantize(q, 0.5, 3), (q.astype(np.float32) - 3) * 0.5)
        s = octet.quantize_per_tensor(x, 0.5, 0, "qint8")
        self.assertEqual(s.dtype, np.int8)
        np.testing.assert_array_equal(s, [-2, -1, 0, 0, 2, 2, 127, -128])

    def test_per_channel(self):
        x = np.arange(-6, 6, dtype=np.float32).reshape(3, 4) / 3
        q = octet.quantize_per_channel(x, [0.1, 0.2, 0.4], [0, 1, -1], 0, "qint8")
        ref = np.clip(np.round(x / np.array([[0.1], [0.2], [0.4]], np.float32)) + [[0], [1], [-1]], -128, 127)
        np.testing.assert_array_equal(q, ref.astype(np.int8))

    def test_fake_quantize_equals_pytorch(self):
        with open(os.path.join(FAKE_QUANT, "manifest.json")) as f:
            manifest = json.load(f)
        steps = 0
        for case in manifest["cases"]:
            if case["kind"] != "fake_quantize":
                continue
            o = case["options"]
            tensors = np.load(os.path.join(FAKE_QUANT, case["tensors"]))
            per_channel = o["qscheme"].startswith("per_channel")
            # The module's effective range: reduce_range narrows quant_min / quant_max, as in PyTorch.
            ranged = octet.MinMaxObserver(dtype=o["dtype"], quant_min=o.get("quant_min"),
                                          quant_max=o.get("quant_max"), reduce_range=o.get("reduce_range", False))
            qmin, qmax = ranged.quant_min, ranged.quant_max
            for k, step in enumerate(case["steps"]):
                if not step["fake_quant"]:
                    continue
                with self.subTest(case=case["name"], step=k):
                    x = tensors[k, 0].reshape(case["shape"])
                    scale = np.array(step["expect"]["scale"], np.float32)
                    zp = np.array(step["expect"]["zero_point"]).astype(np.int64)
                    if per_channel:
                        y = octet.fake_quantize_per_channel_affine(x, scale, zp, o.get("ch_axis", 0), qmin,
                                                                   qmax)
                    else:
                        y = octet.fake_quantize_per_tensor_affine(x, float(scale[0]), int(zp[0]), qmin, qmax)
                    np.testing.assert_array_equal(y.reshape(-1), tensors[k, 2])
                    steps += 1
        self.assertGreater(steps, 50)


if __name__ == "__main__":
    unittest.main()

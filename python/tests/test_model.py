"""Loading and running models: outputs equal octet run's, zero-copy outputs, threads, errors."""

import os
import threading
import unittest

import numpy as np

import octet
from _common import MODELS, TempDirTest, digits_cnn, run_cli


class ModelTest(TempDirTest):
    def test_run_equals_octet_run(self):
        model = octet.load(digits_cnn())
        self.assertEqual(model.inputs, ["image"])
        x = np.load(os.path.join(MODELS, "digits_cnn.input0.npy"))
        out = model.run({"image": x})
        self.assertEqual(list(out), model.outputs)
        y = out[model.outputs[0]]
        self.assertEqual(y.dtype, np.float32)
        self.assertEqual(y.shape, (32, 10))
        # The committed output came from the exporting framework: close, not equal.
        np.testing.assert_allclose(y, np.load(os.path.join(MODELS, "digits_cnn.output0.npy")), rtol=1e-4, atol=1e-4)
        # The command runs the same kernels: equal bit for bit.
        x_file = os.path.join(self.tmp, "x.npy")
        np.save(x_file, x)
        run_cli("run", digits_cnn(), "--input", "image=" + x_file, "--output-dir", self.tmp)
        files = [f for f in os.listdir(self.tmp) if f != "x.npy"]
        self.assertEqual(len(files), 1)
        np.testing.assert_array_equal(y, np.load(os.path.join(self.tmp, files[0])))

    def test_outputs_are_views_of_octet_buffers(self):
        model = octet.load(digits_cnn())
        y = model.run({"image": np.zeros((2, 1, 8, 8), np.float32)})[model.outputs[0]]
        self.assertFalse(y.flags.owndata)  # the array views the tensor octet computed (no copy)
        self.assertTrue(y.flags.c_contiguous)
        y[...] = 1.0  # writable, and no other array shares it
        again = model.run({"image": np.zeros((2, 1, 8, 8), np.float32)})[model.outputs[0]]
        self.assertFalse(np.array_equal(again, y))

    def test_non_contiguous_and_new_shapes(self):
        model = octet.load(digits_cnn())
        x = np.load(os.path.join(MODELS, "digits_cnn.input0.npy"))
        strided = x[::2]  # a view with strides: copied to a dense tensor on the way in
        self.assertFalse(strided.flags.c_contiguous)
        a = model.run({"image": strided})[model.outputs[0]]
        b = model.run({"image": np.ascontiguousarray(strided)})[model.outputs[0]]
        np.testing.assert_array_equal(a, b)
        self.assertEqual(a.shape, (16, 10))
        full = model.run({"image": x})[model.outputs[0]]
        np.testing.assert_array_equal(full[::2], a)

    def test_four_threads_give_identical_results(self):
        model = octet.load(digits_cnn())
        x = np.load(os.path.join(MODELS, "digits_cnn.input0.npy"))
        expected = model.run({"image": x})[model.outputs[0]]
        self.assertGreater(len(np.unique(expected)), 100)  # not a constant output
        results = [[] for _ in range(4)]
        errors = []

        def work(k):
            try:
                for _ in range(25):
                    results[k].append(model.run({"image": x})[model.outputs[0]])
            except Exception as e:  # pragma: no cover - reported below
                errors.append(e)

        threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        for k in range(4):
            self.assertEqual(len(results[k]), 25)
            for y in results[k]:
                np.testing.assert_array_equal(y, expected)

    def test_nodes_and_kernels(self):
        model = octet.load(digits_cnn())
        ops = [op for _, op in model.nodes]
        self.assertIn("Conv", ops)
        with self.assertRaises(octet.Error):
            model.kernels()  # nothing ran yet
        model.run({"image": np.zeros((1, 1, 8, 8), np.float32)})
        kernels = model.kernels()
        self.assertEqual(sorted(kernels), sorted(name for name, _ in model.nodes))
        info = octet.kernel_info()
        self.assertEqual(info["version"], octet.__version__)
        self.assertIn("scalar", info["isas_compiled"])

    def test_scalar_isa_gives_the_same_float_outputs_shape(self):
        model = octet.load(digits_cnn(), isa="scalar")
        y = model.run({"image": np.zeros((3, 1, 8, 8), np.float32)})[model.outputs[0]]
        self.assertEqual(y.shape, (3, 10))


class ErrorTest(TempDirTest):
    def test_missing_file(self):
        missing = os.path.join(self.tmp, "missing.onnx")
        with self.assertRaises(octet.Error) as e:
            octet.load(missing)
        self.assertIn(missing, str(e.exception))
        self.assertIsInstance(e.exception, RuntimeError)
        self.assertTrue(e.exception.code)

    def test_corrupt_octet_file(self):
        path = os.path.join(self.tmp, "bad.octet")
        with open(path, "wb") as f:
            f.write(b"\x89OCT\r\n\x1a\n" + b"\0" * 10)
        with self.assertRaises(octet.Error) as e:
            octet.load(path)
        self.assertIn("bad.octet", str(e.exception))

    def test_bad_inputs(self):
        model = octet.load(digits_cnn())
        with self.assertRaises(octet.Error) as e:
            model.run({})
        self.assertIn("'image' is not given", str(e.exception))
        with self.assertRaises(octet.Error) as e:
            model.run({"image": np.zeros((1, 1, 8, 8), np.float32), "other": np.zeros(1, np.float32)})
        self.assertIn("no input named 'other'", str(e.exception))
        with self.assertRaises(octet.Error) as e:
            model.run({"image": np.zeros((1, 1, 8, 8), np.float64)})
        self.assertIn("float64", str(e.exception))
        self.assertIn("astype", str(e.exception))
        with self.assertRaises(octet.Error) as e:
            model.run({"image": np.zeros((1, 2, 8, 8), np.float32)})
        self.assertIn(digits_cnn(), str(e.exception))
        with self.assertRaises(octet.Error):
            model.run({"image": "not an array"})

    def test_bad_isa(self):
        with self.assertRaises(octet.Error) as e:
            octet.load(digits_cnn(), isa="no-such-isa")
        self.assertIn("no-such-isa", str(e.exception))


if __name__ == "__main__":
    unittest.main()

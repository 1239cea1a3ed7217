"""octet.quantize from Python iterables: the same int8 model as `octet quantize`, saving, errors."""

import os
import unittest
import warnings

import numpy as np

import octet
from _common import MODELS, TempDirTest, batches, calib_images, digits_cnn, run_cli


def test_images():
    return np.load(os.path.join(MODELS, "digits_test_x.npy")).reshape(-1, 1, 8, 8)


class QuantizeTest(TempDirTest):
    def test_static_equals_the_command(self):
        x = calib_images()
        # A generator: quantize may iterate only once.
        q = octet.quantize(digits_cnn(), calib=({"image": b} for b in batches(x, 32)), backend="x86")
        self.assertTrue(q.is_quantized)
        self.assertIn("QConv", [op for _, op in q.nodes])
        calib_file = os.path.join(self.tmp, "calib.npy")
        np.save(calib_file, x)
        cli_model = os.path.join(self.tmp, "cli.octet")
        run_cli("quantize", digits_cnn(), "--calib", "image=" + calib_file, "--calib-batch", "32", "--no-guard",
                "-o", cli_model)
        cli = octet.load(cli_model)
        test = test_images()
        ours = q.run({"image": test})[q.outputs[0]]
        theirs = cli.run({"image": test})[cli.outputs[0]]
        np.testing.assert_array_equal(ours, theirs)
        # And the int8 model is the float model, approximately: the same digit for nearly every image.
        f = octet.load(digits_cnn()).run({"image": test})
        agree = np.mean(np.argmax(f[q.outputs[0]], 1) == np.argmax(ours, 1))
        self.assertGreater(agree, 0.95)

    def test_calib_forms_and_save(self):
        x = calib_images()
        labels = np.zeros(len(x), np.int64)
        pairs = [(b, labels[:len(b)]) for b in batches(x, 64)]  # what a DataLoader over a TensorDataset yields
        a = octet.quantize(octet.load(digits_cnn()), calib=pairs)
        b = octet.quantize(digits_cnn(), calib=batches(x, 64))  # bare arrays for a one-input model
        test = test_images()[:50]
        ya = a.run({"image": test})[a.outputs[0]]
        np.testing.assert_array_equal(ya, b.run({"image": test})[b.outputs[0]])
        path = os.path.join(self.tmp, "m.octet")
        a.save(path)
        loaded = octet.load(path)
        self.assertTrue(loaded.is_quantized)
        self.assertEqual(loaded.metadata["mode"], "static")
        np.testing.assert_array_equal(loaded.run({"image": test})[loaded.outputs[0]], ya)
        onnx_path = os.path.join(self.tmp, "m.onnx")
        a.save_onnx(onnx_path)
        try:
            import onnx  # python3-onnx (scripts/install_deps.sh); optional here
        except ImportError:
            onnx = None
        if onnx is not None:
            exported = onnx.load(onnx_path)
            onnx.checker.check_model(exported)
            self.assertIn("QuantizeLinear", [n.op_type for n in exported.graph.node])
        else:
            self.assertGreater(os.path.getsize(onnx_path), 1000)

    def test_dynamic_and_qconfig_mapping(self):
        x = calib_images()
        d = octet.quantize(digits_cnn(), mode="dynamic")
        self.assertTrue(any(op.startswith("Dynamic") for _, op in d.nodes))
        mapping = octet.QConfigMapping().set_global(octet.get_default_qconfig("qnnpack"))
        conv_nodes = [n for n, op in octet.load(digits_cnn()).nodes if op == "Conv"]
        mapping.set_module_name(conv_nodes[0], None)
        q = octet.quantize(digits_cnn(), calib=batches(x, 128), qconfig_mapping=mapping)
        ops = dict(q.nodes)
        self.assertEqual(ops.get(conv_nodes[0]), "Conv")  # kept float
        self.assertIn("QConv", ops.values())
        # skip= does the same through name scopes.
        s = octet.quantize(digits_cnn(), calib=batches(x, 128), backend="qnnpack", skip=[conv_nodes[0]])
        test = test_images()[:20]
        np.testing.assert_array_equal(s.run({"image": test})[s.outputs[0]], q.run({"image": test})[q.outputs[0]])
        custom = octet.QConfig(activation=octet.MinMaxObserver.with_args(dtype="quint8"),
                               weight=octet.PerChannelMinMaxObserver.with_args(dtype="qint8",
                                                                               qscheme="per_channel_symmetric"))
        self.assertIn("MinMaxObserver", repr(custom))
        m = octet.quantize(digits_cnn(), calib=batches(x, 128),
                           qconfig_mapping=octet.QConfigMapping().set_global(custom))
        self.assertIn("QConv", [op for _, op in m.nodes])

    def test_errors(self):
        with self.assertRaises(octet.Error) as e:
            octet.quantize(digits_cnn())
        self.assertIn("calibration data", str(e.exception))
        with self.assertRaises(octet.Error) as e:
            octet.quantize(digits_cnn(), calib=[])
        self.assertIn("no batches", str(e.exception))
        with self.assertRaises(octet.Error) as e:
            octet.quantize(digits_cnn(), calib=[np.zeros((2, 1, 8, 8)), np.zeros((2, 1, 8, 8))])
        self.assertIn("batch 0", str(e.exception))
        self.assertIn("float64", str(e.exception))
        with self.assertRaises(octet.Error) as e:
            octet.quantize(digits_cnn(), calib=[np.zeros((2, 1, 8, 8), np.float32)], backend="nope")
        self.assertIn("nope", str(e.exception))
        with self.assertRaises(octet.Error) as e:
            octet.quantize(digits_cnn(), mode="fast")
        self.assertIn("fast", str(e.exception))
        with self.assertRaises(octet.Error) as e:
            octet.quantize(digits_cnn(), calib=[calib_images()[:4]], skip=["no.such.node"])
        self.assertIn("no.such.node", str(e.exception))

        def failing():
            yield calib_images()[:4]
            raise KeyError("from the data loader")

        with self.assertRaises(KeyError):  # the iterable's own exception comes through
            octet.quantize(digits_cnn(), calib=failing())
        nan = calib_images()[:4].copy()
        nan[0, 0, 0, 0] = np.nan
        with self.assertRaises(octet.Error) as e:
            octet.quantize(digits_cnn(), calib=[nan])
        self.assertIn("NaN", str(e.exception))


if __name__ == "__main__":
    unittest.main()

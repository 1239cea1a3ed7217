"""Shared paths and helpers of the octet Python tests (run by ctest's `python` entry)."""

import os
import subprocess
import tempfile
import unittest

import numpy as np

SOURCE_DIR = os.environ.get("OCTET_SOURCE_DIR",
                            os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
MODELS = os.path.join(SOURCE_DIR, "tests", "data", "models")
OCTET = os.environ.get("OCTET_BINARY", os.path.join(SOURCE_DIR, "build", "release", "tools", "octet", "octet"))


def digits_cnn():
    return os.path.join(MODELS, "digits_cnn.onnx")


def calib_images():
    """The bundled calibration digits as the CNN's NCHW input."""
    return np.load(os.path.join(MODELS, "digits_calib_x.npy")).reshape(-1, 1, 8, 8)


def batches(x, size):
    return [x[i:i + size] for i in range(0, len(x), size)]


def run_cli(*args):
    """Runs the octet command; the test is skipped when it was not built."""
    if not os.path.exists(OCTET):
        raise unittest.SkipTest("the octet command is not built (%s)" % OCTET)
    result = subprocess.run([OCTET, *args], capture_output=True, text=True)
    if result.returncode != 0:
        raise AssertionError("octet %s failed (%d): %s" % (" ".join(args), result.returncode, result.stderr))
    return result.stdout


class TempDirTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

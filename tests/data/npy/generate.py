# Writes the small NumPy-made .npy files that tests/io/npy_test.cc reads; run: /usr/bin/python3 generate.py
#
# The test hard-codes the same values, so a change here needs the same change there. Files written by NumPy's own
# writer (np.save / numpy.lib.format.write_array) are what octet must read exactly; the supported version 1.0 ones
# are also what octet's writer must reproduce byte for byte. Tested with NumPy 1.24.
import os

import numpy as np
from numpy.lib import format as npy_format

HERE = os.path.dirname(os.path.abspath(__file__))


def save(name, array, version=None, allow_pickle=False):
    path = os.path.join(HERE, name)
    with open(path, "wb") as f:
        if version is None:
            np.save(f, array, allow_pickle=allow_pickle)
        else:
            npy_format.write_array(f, array, version=version, allow_pickle=allow_pickle)


def main():
    # Readable by octet.
    specials = [0.5, -0.0, np.inf, -np.inf, np.nan, np.finfo(np.float32).tiny / 4, np.finfo(np.float32).max,
                -1.25, 3.0e-3]
    save("f32_3x3.npy", np.array(specials, dtype=np.float32).reshape(3, 3))
    save("u8_5.npy", np.array([0, 1, 127, 128, 255], dtype=np.uint8))
    save("s8_2x2x2.npy", np.array([-128, -1, 0, 1, 2, 63, 126, 127], dtype=np.int8).reshape(2, 2, 2))
    save("s32_scalar.npy", np.array(-123456789, dtype=np.int32))
    save("s32_3x0.npy", np.zeros((3, 0), dtype=np.int32))
    save("s32_2x3.npy", np.array([[-2**31, -1, 0], [1, 65536, 2**31 - 1]], dtype=np.int32))
    save("s64_4.npy", np.array([-2**31, 2**31 - 1, 0, 42], dtype=np.int64))
    save("f32_v2_2x2.npy", np.array([[1.0, -2.0], [0.25, 1.0e6]], dtype=np.float32), version=(2, 0))
    save("u8_v3_2x3.npy", np.arange(6, dtype=np.uint8).reshape(2, 3) * 40, version=(3, 0))
    # Rejected by octet, each for its own reason.
    save("s64_out_of_range.npy", np.array([[1, 2], [-3, 2**31]], dtype=np.int64))
    save("f32_fortran_2x3.npy", np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3)))
    save("f32_big_endian_4.npy", np.arange(4, dtype=">f4"))
    save("f64_3.npy", np.array([1.0, 2.0, 3.0], dtype=np.float64))
    save("bool_3.npy", np.array([True, False, True]))
    save("str_2.npy", np.array(["ab", "c"]))
    save("object_2.npy", np.array([1, "x"], dtype=object), allow_pickle=True)


if __name__ == "__main__":
    main()

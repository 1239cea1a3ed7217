"""Reference data for octet's dynamic quantization tests (tests/ops/dynamic_qparams_test.cc).

Run with /usr/bin/python3 (torch 1.13) from this folder: writes choose_qparams.json.
Each case is a float32 tensor's range and what PyTorch 1.13 chooses for it as the activation qparams of a dynamic
op: torch._choose_qparams_per_tensor(x, reduce_range) (ChooseQuantizationParams(min, max, 0, 255, ...)), and for
the smaller tensors torch.quantize_per_tensor_dynamic(x, torch.quint8, reduce_range)'s integers.
"""
import json

import numpy as np
import torch


def case(x, reduce_range, with_values):
    x = torch.tensor(np.asarray(x, dtype=np.float32))
    scale, zero_point = torch._choose_qparams_per_tensor(x, reduce_range)
    c = {
        "min": float(x.min()),
        "max": float(x.max()),
        "reduce_range": reduce_range,
        "scale": scale,  # double, as ChooseQuantizationParams returns it
        "zero_point": int(zero_point),
    }
    if with_values:
        q = torch.quantize_per_tensor_dynamic(x, torch.quint8, reduce_range)
        c["x"] = [float(v) for v in x.tolist()]
        c["q"] = [int(v) for v in q.int_repr().tolist()]
        c["q_scale"] = q.q_scale()
        c["q_zero_point"] = q.q_zero_point()
    return c


def main():
    rng = np.random.default_rng(20261121)
    tensors = [
        [0.0, 0.0, 0.0],
        [1e-6, 2e-6, -3e-6],  # scale below fp16's smallest normal: widened
        [1e-7, 5e-7],  # one-sided tiny
        [-4e-7, -1e-8],
        [-1.0, 2.0, 0.3],
        [0.5, 3.0],  # all positive: min extended to 0
        [-7.5, -0.25],  # all negative
        [-1e30, 1e30],
        [3.0e38, -3.0e38],
    ]
    for _ in range(120):
        n = int(rng.integers(1, 40))
        kind = rng.integers(0, 4)
        if kind == 0:
            x = rng.normal(rng.normal(0, 2), 10 ** rng.uniform(-6, 3), n)
        elif kind == 1:
            x = rng.uniform(-(10 ** rng.uniform(-4, 2)), 10 ** rng.uniform(-4, 2), n)
        elif kind == 2:
            x = np.abs(rng.normal(0, 10 ** rng.uniform(-3, 2), n))
        else:
            x = -np.abs(rng.laplace(0, 10 ** rng.uniform(-3, 2), n))
        tensors.append(x)
    cases = []
    for i, x in enumerate(tensors):
        for rr in (False, True):
            cases.append(case(x, rr, with_values=len(np.atleast_1d(x)) <= 40 and i % 3 == 0))
    with open("choose_qparams.json", "w") as f:
        # One case per line.
        f.write('{"torch": %s, "cases": [\n' % json.dumps(torch.__version__))
        f.write(",\n".join(json.dumps(c) for c in cases))
        f.write("\n]}\n")


if __name__ == "__main__":
    main()

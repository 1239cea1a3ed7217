#!/usr/bin/python3
"""Generates octet's fake-quantize (QAT) reference data from PyTorch 1.13: tests/data/fake_quant/manifest.json.

Run with Debian's python3-torch from the repository root:

    /usr/bin/python3 tests/data/fake_quant/generate.py

Deterministic (fixed numpy seeds, one torch thread). tests/quant/qat/fake_quantize_module_test.cc (tag
[qat_fake_quant]) reads the manifest; torch is never needed to build or test octet.

Each case builds one PyTorch module -- FakeQuantize ("fake_quantize"), FusedMovingAvgObsFakeQuantize
("fused_moving_avg_obs") or _LearnableFakeQuantize ("learnable") -- from octet's observer options (the names of
observers/observer_options.h; torch gets the same keyword arguments), and runs a few training steps. A step sets
the module's flags (observer, fake-quant, and for "learnable" the mode: static_estimate / param_learning /
static_observation), for "learnable" in param-learning mode sets the parameters to `scale_in` / `zero_point_in`
first, runs forward on x, backward with dy, and records x, dy, the forward output y and the input gradient dx in
the case's .npy (float32, [steps, 4 (x, dy, y, dx), elements], each tensor of the case's shape, row-major), and in
the manifest:
  scale, zero_point             the module's scale / zero_point after the forward (buffers or parameters)
  dscale, dzero_point           "learnable" in param-learning mode: the parameters' gradients
  qparams_scale, qparams_zero_point   calculate_qparams() after the step
Later steps may build x from the current qparams so that x * (1/scale) lands exactly on k + 0.5 (ties) and on the
clamp edges quant_min - 0.5 and quant_max + 0.5 (relative to the zero point); the generator keeps only values whose
float32 product is exactly the tie it aims at.

Floats are float32 values written as JSON numbers (the double that holds each float32 exactly).
"""

import json
import os
import platform

import numpy as np
import torch
from torch.ao import quantization as tq
from torch.ao.quantization._learnable_fake_quantize import _LearnableFakeQuantize

HERE = os.path.dirname(os.path.abspath(__file__))
F32 = np.float32
TORCH_DTYPES = {"quint8": torch.quint8, "qint8": torch.qint8}
TORCH_QSCHEMES = {
    "per_tensor_affine": torch.per_tensor_affine,
    "per_tensor_symmetric": torch.per_tensor_symmetric,
    "per_channel_affine": torch.per_channel_affine,
    "per_channel_symmetric": torch.per_channel_symmetric,
}
SHAPE = [4, 3, 5]


def jfl(t):
    a = np.asarray(t.detach().numpy() if isinstance(t, torch.Tensor) else t, dtype=np.float32).reshape(-1)
    assert np.all(np.isfinite(a)), a
    return [float(v) for v in a]


def per_channel(options):
    return options.get("qscheme", "per_tensor_affine").startswith("per_channel")


def torch_kwargs(options):
    kw = {}
    for key, value in options.items():
        if key == "dtype":
            kw["dtype"] = TORCH_DTYPES[value]
        elif key == "qscheme":
            kw["qscheme"] = TORCH_QSCHEMES[value]
        else:
            kw[key] = value
    return kw


def make_module(kind, options, use_grad_scaling):
    observer = tq.MovingAveragePerChannelMinMaxObserver if per_channel(options) else tq.MovingAverageMinMaxObserver
    kw = torch_kwargs(options)
    if kind == "fake_quantize":
        return tq.FakeQuantize(observer=observer, **kw)
    if kind == "fused_moving_avg_obs":
        return tq.FusedMovingAvgObsFakeQuantize(observer=observer, **kw)
    qmin, qmax = kw.pop("quant_min"), kw.pop("quant_max")
    channel_len = SHAPE[options.get("ch_axis", 0)] if per_channel(options) else -1
    return _LearnableFakeQuantize(observer=observer, quant_min=qmin, quant_max=qmax, channel_len=channel_len,
                                  use_grad_scaling=use_grad_scaling, **kw)


def current_qparams(kind, module):
    """Scale and integer zero point per channel that the next fake-quant forward uses."""
    scale = module.scale.detach().numpy().astype(F32).reshape(-1)
    zp = module.zero_point.detach().numpy().reshape(-1)
    if kind == "learnable":
        zp = np.clip(np.round(zp.astype(F32)), module.quant_min, module.quant_max)
    return scale, zp.astype(np.int64)


def tie_input(rng, kind, module, options):
    """x with x * f32(1/scale) == k + 0.5 exactly, or == quant_min - zp - 0.5 / quant_max - zp + 0.5 (the clamp
    edges), per channel of SHAPE; other elements random."""
    scale, zp = current_qparams(kind, module)
    qmin, qmax = module.quant_min, module.quant_max
    x = (rng.standard_normal(SHAPE) * 3.0).astype(F32)
    axis = options.get("ch_axis", 0) if per_channel(options) else None
    for idx in np.ndindex(*SHAPE):
        c = idx[axis] if axis is not None else 0
        s, z = scale[c], int(zp[c])
        inv = F32(1.0) / F32(s)
        r = rng.integers(0, 4)
        if r == 0:
            target = F32(qmin - z) - F32(0.5)
        elif r == 1:
            target = F32(qmax - z) + F32(0.5)
        else:
            target = F32(int(rng.integers(qmin - z - 3, qmax - z + 3))) + F32(0.5)
        cand = F32(target * F32(s))
        if F32(cand * inv) == target:
            x[idx] = cand
    return x


def random_input(rng, step):
    scale = [1.0, 2.5, 0.7, 4.0, 1.3][step % 5]
    shift = [0.0, 0.5, -0.3, 1.0, -1.0][step % 5]
    return ((rng.standard_normal(SHAPE) * scale) + shift).astype(F32)


def set_mode(kind, module, step):
    if kind == "learnable":
        mode = step["mode"]
        {"static_estimate": module.enable_static_estimate, "param_learning": module.enable_param_learning,
         "static_observation": module.enable_static_observation}[mode]()
    else:
        (module.enable_observer if step["observer"] else module.disable_observer)()
        (module.enable_fake_quant if step["fake_quant"] else module.disable_fake_quant)()


def run_case(name, kind, options, plan, seed, use_grad_scaling=False, lr=2.0 ** -10):
    rng = np.random.default_rng(seed)
    module = make_module(kind, options, use_grad_scaling)
    module.train()
    steps = []
    tensors = []
    for i, step in enumerate(plan):
        step = dict(step)
        set_mode(kind, module, step)
        src = step.pop("input")
        if src == "random":
            x = random_input(rng, i)
        elif src == "zeros":
            x = np.zeros(SHAPE, dtype=F32)
        elif src == "positive":
            x = np.abs(random_input(rng, i)) + F32(0.25)
        elif src == "negative":
            x = -np.abs(random_input(rng, i)) - F32(0.25)
        else:
            assert src == "ties"
            x = tie_input(rng, kind, module, options)
        perturb = step.pop("zero_point_offset", None)
        learning = kind == "learnable" and step["mode"] == "param_learning"
        if learning:
            with torch.no_grad():
                if "scale_in" in step:
                    module.scale.copy_(torch.tensor(step.pop("scale_in"), dtype=torch.float32))
                if perturb is not None:
                    module.zero_point.add_(F32(perturb))
            step["scale_in"] = jfl(module.scale)
            step["zero_point_in"] = jfl(module.zero_point)
            module.scale.grad = None
            module.zero_point.grad = None
        dy = rng.standard_normal(SHAPE).astype(F32)
        xt = torch.tensor(x, requires_grad=True)
        y = module(xt)
        y.backward(torch.tensor(dy))
        tensors.append(np.stack([x.reshape(-1), dy.reshape(-1), y.detach().numpy().reshape(-1),
                                 xt.grad.numpy().reshape(-1)]).astype(F32))
        record = {}
        record["scale"] = jfl(module.scale)
        record["zero_point"] = jfl(module.zero_point.detach().to(torch.float32))
        if learning:
            record["dscale"] = jfl(module.scale.grad)
            record["dzero_point"] = jfl(module.zero_point.grad)
            with torch.no_grad():  # plain SGD with a power-of-two rate: p - lr * g, one rounding
                module.scale.sub_(module.scale.grad * lr)
                module.zero_point.sub_(module.zero_point.grad * lr)
            record["scale_after"] = jfl(module.scale)
            record["zero_point_after"] = jfl(module.zero_point)
        qs, qz = module.calculate_qparams()
        record["qparams_scale"] = jfl(qs)
        record["qparams_zero_point"] = [int(v) for v in qz.reshape(-1)]
        step["expect"] = record
        steps.append(step)
    file = name.replace("/", "__") + ".npy"
    np.save(os.path.join(HERE, file), np.stack(tensors))
    return {"name": name, "kind": kind, "options": options, "use_grad_scaling": use_grad_scaling, "lr": lr,
            "shape": SHAPE, "tensors": file, "steps": steps}


def observer_plan():
    on = {"observer": True, "fake_quant": True}
    return [dict(on, input="random"), dict(on, input="random"), dict(on, input="random"),
            {"observer": False, "fake_quant": True, "input": "ties"},
            {"observer": False, "fake_quant": True, "input": "ties"},
            {"observer": True, "fake_quant": False, "input": "random"},
            dict(on, input="ties")]


def learnable_plan():
    return [{"mode": "static_estimate", "input": "random"},
            {"mode": "static_estimate", "input": "random"},
            {"mode": "param_learning", "input": "random"},
            {"mode": "param_learning", "input": "ties"},
            {"mode": "param_learning", "input": "ties", "zero_point_offset": 0.5},
            {"mode": "param_learning", "input": "random", "zero_point_offset": -0.5},
            {"mode": "param_learning", "input": "random", "zero_point_offset": 0.25},
            {"mode": "static_observation", "input": "random"},
            {"mode": "static_estimate", "input": "ties"}]


CONFIGS = [
    ("u8_affine", {"dtype": "quint8", "qscheme": "per_tensor_affine", "quant_min": 0, "quant_max": 255}),
    ("u8_affine_reduce", {"dtype": "quint8", "qscheme": "per_tensor_affine", "quant_min": 0, "quant_max": 255,
                          "reduce_range": True}),
    ("s8_affine", {"dtype": "qint8", "qscheme": "per_tensor_affine", "quant_min": -128, "quant_max": 127}),
    ("s8_symmetric", {"dtype": "qint8", "qscheme": "per_tensor_symmetric", "quant_min": -128, "quant_max": 127}),
    ("u8_symmetric", {"dtype": "quint8", "qscheme": "per_tensor_symmetric", "quant_min": 0, "quant_max": 255}),
    ("u8_affine_4bit_c05", {"dtype": "quint8", "qscheme": "per_tensor_affine", "quant_min": 0, "quant_max": 15,
                            "averaging_constant": 0.5}),
    ("s8_pc_symmetric", {"dtype": "qint8", "qscheme": "per_channel_symmetric", "quant_min": -128, "quant_max": 127,
                         "ch_axis": 0}),
    ("u8_pc_affine", {"dtype": "quint8", "qscheme": "per_channel_affine", "quant_min": 0, "quant_max": 255,
                      "ch_axis": 0, "averaging_constant": 0.25}),
    ("s8_pc_affine_reduce", {"dtype": "qint8", "qscheme": "per_channel_affine", "quant_min": -128, "quant_max": 127,
                             "ch_axis": 0, "reduce_range": True}),
]
# Channel axes other than 0 (FusedMovingAvgObsFakeQuantize refuses them).
AXIS_CONFIGS = [
    ("s8_pc_symmetric_axis1", {"dtype": "qint8", "qscheme": "per_channel_symmetric", "quant_min": -128,
                               "quant_max": 127, "ch_axis": 1}),
    ("u8_pc_affine_axis2", {"dtype": "quint8", "qscheme": "per_channel_affine", "quant_min": 0,
                                "quant_max": 255, "ch_axis": 2}),
]


def main():
    torch.set_num_threads(1)
    for f in os.listdir(HERE):
        if f.endswith(".npy"):
            os.remove(os.path.join(HERE, f))
    cases = []
    seed = 1000
    for kind in ("fake_quantize", "fused_moving_avg_obs", "learnable"):
        configs = CONFIGS + (AXIS_CONFIGS if kind != "fused_moving_avg_obs" else [])
        for cname, options in configs:
            seed += 1
            if kind == "learnable":
                cases.append(run_case(f"{kind}/{cname}", kind, options, learnable_plan(), seed))
                if cname in ("u8_affine", "s8_pc_symmetric"):
                    seed += 1
                    cases.append(run_case(f"{kind}/{cname}/grad_scaling", kind, options, learnable_plan(), seed,
                                          use_grad_scaling=True))
            else:
                cases.append(run_case(f"{kind}/{cname}", kind, options, observer_plan(), seed))
    # One-sided and all-zero data (fused: ChooseQuantizationParams' 0.1 fallback for the all-zero range).
    for kind in ("fake_quantize", "fused_moving_avg_obs"):
        for cname, options in (CONFIGS[0], CONFIGS[3], CONFIGS[6]):
            seed += 1
            plan = [{"observer": True, "fake_quant": True, "input": "zeros"},
                    {"observer": True, "fake_quant": True, "input": "positive"},
                    {"observer": True, "fake_quant": True, "input": "negative"}]
            cases.append(run_case(f"{kind}/{cname}/zeros_one_sided", kind, options, plan, seed))
    # Learnable with a scale below eps (clamped to eps in param learning).
    seed += 1
    plan = [{"mode": "static_estimate", "input": "random"},
            {"mode": "param_learning", "input": "random", "scale_in": [1e-9]}]
    cases.append(run_case("learnable/u8_affine/tiny_scale", "learnable", CONFIGS[0][1], plan, seed))

    manifest = {
        "generator": "tests/data/fake_quant/generate.py",
        "torch_version": torch.__version__,
        "numpy_version": np.__version__,
        "python": platform.python_version(),
        "cases": cases,
    }
    with open(os.path.join(HERE, "manifest.json"), "w") as f:
        json.dump(manifest, f, separators=(",", ":"))
        f.write("\n")
    steps = sum(len(c["steps"]) for c in cases)
    print(f"{len(cases)} cases, {steps} steps")


if __name__ == "__main__":
    main()

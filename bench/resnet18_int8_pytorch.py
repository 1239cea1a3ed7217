#!/usr/bin/python3
"""ResNet-18 int8 at batch 1: octet's int8 path against octet's float path and PyTorch 1.13's quantized ResNet-18
on the onednn engine, measured in one run (issue 7's speed target: >= 3x octet float, >= 1.0x PyTorch).

    /usr/bin/python3 bench/resnet18_int8_pytorch.py --octet build/release/tools/octet/octet [--threads 1]
        [--models /tmp/octet_large_models] [--rounds 5] [--json out.json]

The model is torchvision's resnet18 with seeded random weights and BatchNorm statistics, from
tests/data/models/generate.py (its --large ONNX file, written here when missing; PyTorch gets the same module). Both sides calibrate static PTQ on the same 8 seeded
random batches (N(0,1) images) with their onednn defaults (HistogramObserver activations, per-channel symmetric
weights), then time batch-1 inference on a fixed image:
  * PyTorch: FX prepare_fx / convert_fx with get_default_qconfig_mapping("onednn"), torch.backends.quantized.engine
    = "onednn", torch.set_num_threads(threads); the median over --iterations calls after warm-up.
  * octet: `octet quantize --backend onednn` once, then `octet bench model --json` on the .octet and on the float
    ONNX file (its median over repetitions; Compile is outside the timing).
The three timings are interleaved in --rounds rounds, so machine noise hits them alike; the ratios are computed per
round and their medians printed. Also printed: the int8 logits' SQNR against float, for each side.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "data", "models"))
import generate  # noqa: E402  (the test models' generator: the same seeded weights on both sides)


def calibration_batches():
    g = torch.Generator().manual_seed(7)
    return [torch.randn(1, 3, 224, 224, generator=g) for _ in range(8)]


def sqnr(x, y):
    x = np.asarray(x, dtype=np.float64).ravel()
    y = np.asarray(y, dtype=np.float64).ravel()
    return 20 * np.log10(np.linalg.norm(x) / max(np.linalg.norm(x - y), 1e-30))


def pytorch_int8(model, batches):
    from torch.ao.quantization import get_default_qconfig_mapping
    from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx

    torch.backends.quantized.engine = "onednn"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prepared = prepare_fx(model, get_default_qconfig_mapping("onednn"), example_inputs=(batches[0],))
        with torch.no_grad():
            for b in batches:
                prepared(b)
        return convert_fx(prepared)


def time_pytorch(model, x, iterations):
    with torch.no_grad():
        for _ in range(3):
            model(x)
        times = []
        for _ in range(iterations):
            start = time.perf_counter()
            model(x)
            times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def time_octet(octet, model_path, threads, repetitions):
    out = subprocess.run([octet, "bench", "model", model_path, "--json", "--threads", str(threads), "--repetitions",
                          str(repetitions)], check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])["us"]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--octet", required=True, help="the octet command")
    parser.add_argument("--models", default=os.environ.get("OCTET_LARGE_MODELS", "/tmp/octet_large_models"))
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--repetitions", type=int, default=5)
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args()

    torch.set_num_threads(args.threads)
    model = generate.seeded_large_model("resnet18")
    float_onnx = os.path.join(args.models, "resnet18.onnx")
    if not os.path.exists(float_onnx):
        generate.large(args.models)
        torch.set_num_threads(args.threads)
    batches = calibration_batches()
    image = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(3))

    qmodel = pytorch_int8(model, batches)
    with torch.no_grad():
        float_logits = model(image).numpy()
        torch_logits = qmodel(image).numpy()

    with tempfile.TemporaryDirectory() as tmp:
        calib = os.path.join(tmp, "calib.npy")
        np.save(calib, torch.cat(batches).numpy())
        np.save(os.path.join(tmp, "image.npy"), image.numpy())
        int8_model = os.path.join(tmp, "resnet18_int8.octet")
        subprocess.run([args.octet, "quantize", float_onnx, "--mode", "static", "--backend", "onednn", "--calib",
                        f"image={calib}", "--calib-batch", "1", "-o", int8_model], check=True)
        subprocess.run([args.octet, "run", int8_model, "--input", f"image={os.path.join(tmp, 'image.npy')}",
                        "--output-dir", tmp], check=True, capture_output=True)
        octet_logits = np.load(os.path.join(tmp, "logits.npy"))

        rows = []
        for r in range(args.rounds):
            t_torch = time_pytorch(qmodel, image, args.iterations)
            t_int8 = time_octet(args.octet, int8_model, args.threads, args.repetitions)
            t_float = time_octet(args.octet, float_onnx, args.threads, args.repetitions)
            rows.append({"round": r, "pytorch_onednn_int8_us": t_torch, "octet_int8_us": t_int8,
                         "octet_float_us": t_float, "vs_octet_float": t_float / t_int8, "vs_pytorch": t_torch / t_int8})
            print(f"round {r}: pytorch onednn int8 {t_torch:9.0f} us  octet int8 {t_int8:9.0f} us  octet float "
                  f"{t_float:9.0f} us  int8 speed-up vs octet float {t_float / t_int8:5.2f}x  vs pytorch "
                  f"{t_torch / t_int8:5.2f}x", flush=True)

    summary = {
        "threads": args.threads,
        "torch": torch.__version__,
        "median_vs_octet_float": statistics.median(r["vs_octet_float"] for r in rows),
        "median_vs_pytorch": statistics.median(r["vs_pytorch"] for r in rows),
        "sqnr_db_octet_int8": sqnr(float_logits, octet_logits),
        "sqnr_db_pytorch_int8": sqnr(float_logits, torch_logits),
        "rounds": rows,
    }
    print(f"median speed-up of octet int8: {summary['median_vs_octet_float']:.2f}x over octet float (target 3.0), "
          f"{summary['median_vs_pytorch']:.2f}x over PyTorch onednn int8 (target 1.0); logits SQNR vs float: octet "
          f"{summary['sqnr_db_octet_int8']:.1f} dB, PyTorch {summary['sqnr_db_pytorch_int8']:.1f} dB")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summary, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

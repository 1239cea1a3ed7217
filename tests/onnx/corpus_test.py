#!/usr/bin/python3
"""The third-party-style corpus (tests/data/models/corpus, made by make_corpus.py) through `octet run`, against the
ONNX Runtime outputs committed beside it (ort_reference.js): every output of every model must be within 1e-4
relative L2 (||octet - ort|| / ||ort||) with the shape ORT gave.

Usage: corpus_test.py OCTET CORPUS_DIR   prints one line per model and exits 1 on any failure (numpy only).
"""
import json
import os
import subprocess
import sys
import tempfile

TOLERANCE = 1e-4


def main():
    octet, corpus = sys.argv[1], sys.argv[2]
    try:
        import numpy as np
    except ImportError as e:
        print("SKIPPED: %s" % e)
        return 77
    with open(os.path.join(corpus, "manifest.json")) as f:
        manifest = json.load(f)
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, io in sorted(manifest.items()):
            out_dir = os.path.join(tmp, name)
            args = [octet, "run", os.path.join(corpus, name + ".onnx"), "--output-dir", out_dir]
            for k, input_name in enumerate(io["inputs"]):
                args += ["--input", "%s=%s" % (input_name, os.path.join(corpus, "%s.input%d.npy" % (name, k)))]
            r = subprocess.run(args, capture_output=True, text=True, timeout=120)
            if r.returncode != 0:
                print("FAILED: %s: octet run exited %d: %s" % (name, r.returncode, r.stderr.strip()[-400:]))
                failures += 1
                continue
            # octet names each output's file after the value (made safe for a file name) and prints "NAME: ... -> FILE".
            files = {}
            for line in r.stdout.splitlines():
                for output_name in io["outputs"]:
                    if line.startswith(output_name + ": ") and " -> " in line:
                        files[output_name] = line.rsplit(" -> ", 1)[1].strip()
            worst = 0.0
            problems = []
            for k, output_name in enumerate(io["outputs"]):
                reference = os.path.join(corpus, "%s.ort%d.npy" % (name, k))
                if not os.path.exists(reference):
                    problems.append("no ORT output %s (run ort_reference.js)" % os.path.basename(reference))
                    continue
                want = np.load(reference).astype(np.float64)
                path = files.get(output_name, "")
                if not os.path.exists(path):
                    problems.append("no output %s" % output_name)
                    continue
                got = np.load(path).astype(np.float64)
                if got.shape != want.shape:
                    problems.append("%s: shape %s, ORT %s" % (output_name, got.shape, want.shape))
                    continue
                rel = np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-30)
                worst = max(worst, rel)
                if not rel <= TOLERANCE:  # NaN fails too
                    problems.append("%s: relative L2 %.3g" % (output_name, rel))
            if problems:
                print("FAILED: %s: %s" % (name, "; ".join(problems)))
                failures += 1
            else:
                print("ok: %s (%d outputs, worst relative L2 %.2g)" % (name, len(io["outputs"]), worst))
    if failures:
        print("FAILED: %d of %d models" % (failures, len(manifest)))
        return 1
    print("all %d models match ONNX Runtime within %g relative L2" % (len(manifest), TOLERANCE))
    return 0


if __name__ == "__main__":
    sys.exit(main())

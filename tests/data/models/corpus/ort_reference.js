// Writes ONNX Runtime's outputs for the corpus (make_corpus.py): for each model of manifest.json, NAME.ort<k>.npy
// (graph-output order) from NAME.input<k>.npy. Run once when the corpus changes; the test reads the files.
//   ORT_NODE=/path/to/node_modules/onnxruntime-node node ort_reference.js DIR
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require(process.env.ORT_NODE || 'onnxruntime-node');

const {readNpy, writeNpy} = require('../../../onnx/ort_qdq/npy');

// A float32 .npy file as an ORT tensor (the corpus feeds float32 only).
function readInput(file) {
  const a = readNpy(file);
  if (a.type !== 'float32') throw new Error(`${file}: dtype ${a.descr}, the corpus feeds float32 only`);
  return new ort.Tensor('float32', a.data, a.shape);
}

// Writes an ORT float32 output (the corpus compares float32 outputs only).
function writeOutput(file, t) {
  if (t.type !== 'float32') throw new Error(`output of type ${t.type}: the corpus compares float32 outputs only`);
  writeNpy(file, '<f4', t.data, t.dims);
}

async function main() {
  const dir = process.argv[2];
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
  for (const [name, io] of Object.entries(manifest)) {
    const feeds = {};
    io.inputs.forEach((input, k) => { feeds[input] = readInput(path.join(dir, `${name}.input${k}.npy`)); });
    // No graph optimizations: the reference is the model's own arithmetic.
    const s = await ort.InferenceSession.create(path.join(dir, `${name}.onnx`),
                                                {graphOptimizationLevel: 'disabled', intraOpNumThreads: 1});
    const out = await s.run(feeds);
    io.outputs.forEach((o, k) => writeOutput(path.join(dir, `${name}.ort${k}.npy`), out[o]));
    console.log(`${name}: ${io.outputs.map((o) => `${o} [${out[o].dims}]`).join(', ')}`);
  }
}

main().catch((e) => { console.error(e.message || e); process.exit(1); });

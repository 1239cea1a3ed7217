// Writes the reference outputs of the corpus (make_corpus.py) with ONNX Runtime, graph optimizations off, so that
// tests/onnx/corpus_models_test.cc compares octet with ONNX Runtime without needing it at test time.
//
//   NODE_PATH=~/.cache/octet/onnxruntime-node-1.30/node_modules node tests/data/models/corpus/ort_reference.js
//
// For each NAME.onnx here it feeds NAME.input<k>.npy to the model's inputs in order and writes NAME.output<k>.npy.
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');
const {readNpy, writeNpy} = require('../../../onnx/ort_qdq/npy');

const kDescr = {float32: '<f4', int32: '<i4', uint8: '|u1', int8: '|i1'};

async function main() {
  const here = __dirname;
  const models = fs.readdirSync(here).filter(f => f.endsWith('.onnx')).sort();
  for (const file of models) {
    const name = file.slice(0, -5);
    const session = await ort.InferenceSession.create(path.join(here, file),
                                                      {graphOptimizationLevel: 'disabled', intraOpNumThreads: 1});
    const feeds = {};
    session.inputNames.forEach((input, k) => {
      const a = readNpy(path.join(here, `${name}.input${k}.npy`));
      feeds[input] = new ort.Tensor(a.type, a.data, a.shape);
    });
    const results = await session.run(feeds);
    session.outputNames.forEach((output, k) => {
      const t = results[output];
      if (!(t.type in kDescr)) throw new Error(`${file}: output '${output}' has type ${t.type}, not written`);
      writeNpy(path.join(here, `${name}.output${k}.npy`), kDescr[t.type], t.data, t.dims);
    });
    console.log(`${name}: ${session.outputNames.length} output(s) written`);
  }
}

main().catch(e => { console.error(`FAILED: ${e.message}`); process.exitCode = 1; });

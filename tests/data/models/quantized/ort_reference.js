// Writes the reference outputs of the quantized test models (make_quantized.py) from ONNX Runtime with graph
// optimizations off, where it runs each QuantizeLinear, DequantizeLinear, QLinearConv, ... as written.
//
//   NODE_PATH=~/.cache/octet/onnxruntime-node-1.30/node_modules node ort_reference.js FOLDER
//
// For every FOLDER/NAME.onnx: reads NAME.input0.npy, writes NAME.output0.npy (float32).
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');
const {readNpy, writeNpy} = require('../../../onnx/ort_qdq/npy');

async function main() {
  const dir = process.argv[2];
  for (const file of fs.readdirSync(dir).filter(f => f.endsWith('.onnx')).sort()) {
    const name = file.slice(0, -'.onnx'.length);
    const model = path.join(dir, file);
    const options = {graphOptimizationLevel: 'disabled', intraOpNumThreads: 1};
    const session = await ort.InferenceSession.create(model, options);
    const x = readNpy(path.join(dir, `${name}.input0.npy`));
    const feeds = {[session.inputNames[0]]: new ort.Tensor('float32', x.data, x.shape)};
    const out = (await session.run(feeds))[session.outputNames[0]];
    writeNpy(path.join(dir, `${name}.output0.npy`), '<f4', out.data, out.dims);
    console.log(`${name}: output ${out.dims.join('x')}`);
  }
}

main().catch(e => {
  console.error(e);
  process.exit(1);
});

// Writes the graph ONNX Runtime runs after its graph optimizations (all levels, CPU execution provider, 1 thread):
// onnxruntime-node's session option optimizedModelFilePath saves it as an ONNX model. ort_fusion_check.py reads it.
//
//   node optimize_model.js MODEL.onnx OPTIMIZED.onnx
'use strict';
const ort = require('onnxruntime-node');

async function main() {
  const [model, optimized] = process.argv.slice(2);
  if (!model || !optimized) throw new Error('usage: node optimize_model.js MODEL.onnx OPTIMIZED.onnx');
  await ort.InferenceSession.create(model, {
    graphOptimizationLevel: 'all',
    optimizedModelFilePath: optimized,
    intraOpNumThreads: 1,
    executionProviders: ['cpu'],
  });
}

main().catch(e => { console.error(`FAILED: ${e.message}`); process.exitCode = 1; });

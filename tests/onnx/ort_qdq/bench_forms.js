// Times ONNX Runtime (onnxruntime-node, graph optimizations all, 1 thread) on several models of one input, in
// interleaved rounds so that load from other processes hits them alike; prints each model's median and minimum
// per-run time and the first model's median over its own (ratio > 1: faster than the first). Issue 23's study of
// the digits CNN's export forms (conv_as_gemm.py) against the float model; no test depends on its figures.
//
//   node bench_forms.js INPUT.npy BATCH ROUNDS FIRST.onnx OTHER.onnx ...
//
// INPUT.npy: float32 rows, repeated to BATCH along the first axis; the model's input shape is [BATCH, rest of the
// .npy's shape].
'use strict';
const ort = require('onnxruntime-node');
const {readNpy} = require('./npy');

async function main() {
  const [input, batchArg, roundsArg, ...models] = process.argv.slice(2);
  if (!input || models.length === 0) throw new Error('usage: node bench_forms.js INPUT.npy BATCH ROUNDS MODEL.onnx ...');
  const batch = Number(batchArg), rounds = Number(roundsArg);
  const {data: rows, shape} = readNpy(input);
  const per = shape.slice(1).reduce((a, b) => a * b, 1);
  const x = new Float32Array(batch * per);
  for (let i = 0; i < x.length; ++i) x[i] = rows[i % rows.length];
  const runs = [];
  for (const m of models) {
    const s = await ort.InferenceSession.create(
        m, {intraOpNumThreads: 1, interOpNumThreads: 1, graphOptimizationLevel: 'all', executionMode: 'sequential'});
    const feeds = {[s.inputNames[0]]: new ort.Tensor('float32', x, [batch, ...shape.slice(1)])};
    for (let i = 0; i < 5; ++i) await s.run(feeds);
    runs.push({m, s, feeds, ms: []});
  }
  const reps = Math.max(1, Math.round(2000 / batch));  // ~2000 images per timed sample
  for (let r = 0; r < rounds; ++r) {
    for (const e of runs) {
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < reps; ++i) await e.s.run(e.feeds);
      e.ms.push(Number(process.hrtime.bigint() - t0) / 1e6 / reps);
    }
  }
  const median = (v) => v.slice().sort((a, b) => a - b)[v.length >> 1];
  const base = median(runs[0].ms);
  for (const e of runs) {
    const med = median(e.ms);
    console.log(`${e.m}: batch ${batch}: median ${med.toFixed(4)} ms, min ${Math.min(...e.ms).toFixed(4)} ms, ` +
                `${(base / med).toFixed(2)}x the first`);
  }
}

main().catch((e) => { console.error(`FAILED: ${e.message}`); process.exitCode = 1; });

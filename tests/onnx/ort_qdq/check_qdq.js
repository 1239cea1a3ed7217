// Runs an ONNX QDQ model that octet exported in ONNX Runtime (onnxruntime-node) and compares its outputs with the
// outputs octet computed for the same inputs, in LSBs of the output's quantization scale.
//
//   node check_qdq.js MODEL.onnx OCTET_OUTPUT_DIR NAME=INPUT.npy ... [--min-fraction 0.999] [--optimized require|report]
//
// Two sessions: graph optimizations off, where ONNX Runtime computes each DequantizeLinear, float operator and
// QuantizeLinear as written (the export's meaning; always required), and all optimizations on, where it fuses the
// QDQ groups into its int8 kernels. Those are exact only on some CPUs (see run_ort_qdq_test.sh), so with
// `--optimized report` their figures are printed but not required.
//
// octet's outputs are dequantized int8 values, s * (q - zp): they lie on a lattice of step s, which is recovered
// from the outputs themselves (the smallest gap between distinct values, checked to divide every gap), so the
// script needs no parser for ONNX. A comparison passes when at least --min-fraction of the elements of every output
// are within one LSB; prints the figures either way.
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');
const {readNpy} = require('./npy');

// The lattice step of dequantized values, or throws when they are not on one.
function latticeStep(values, name) {
  const sorted = Float64Array.from(new Set(values)).sort();
  if (sorted.length < 2) throw new Error(`output '${name}': fewer than two distinct values, no LSB to measure`);
  let step = Infinity;
  for (let i = 1; i < sorted.length; ++i) step = Math.min(step, sorted[i] - sorted[i - 1]);
  for (let i = 1; i < sorted.length; ++i) {
    const k = (sorted[i] - sorted[0]) / step;
    if (Math.abs(k - Math.round(k)) > 1e-2) {
      throw new Error(`output '${name}': values are not on a lattice of step ${step} (not dequantized int8?)`);
    }
  }
  return step;
}

// Runs `model` with the given graph optimization level and compares every output with octet's; returns whether all
// outputs pass.
async function compare(model, outDir, feeds, level, label, required, minFraction) {
  const session = await ort.InferenceSession.create(model, {graphOptimizationLevel: level, intraOpNumThreads: 1});
  const results = await session.run(feeds);
  let ok = true;
  for (const name of session.outputNames) {
    const ours = readNpy(path.join(outDir, `${name}.npy`));
    const theirs = results[name].data;
    if (theirs.length !== ours.data.length) throw new Error(`output '${name}': ${theirs.length} vs ${ours.data.length} elements`);
    const lsb = latticeStep(ours.data, name);
    let within = 0, maxLsb = 0;
    for (let i = 0; i < theirs.length; ++i) {
      const d = Math.abs(theirs[i] - ours.data[i]) / lsb;
      maxLsb = Math.max(maxLsb, d);
      if (d <= 1.001) ++within;
    }
    const fraction = within / theirs.length;
    const pass = fraction >= minFraction;
    if (required) ok = ok && pass;
    const verdict = required ? (pass ? 'ok' : 'FAILED') : `not required (${pass ? 'agrees' : 'disagrees'})`;
    console.log(`  ${label}: ${path.basename(model)} output '${name}': ${theirs.length} elements, ` +
                `LSB ${lsb.toPrecision(6)}, ${(100 * fraction).toFixed(3)}% within 1 LSB of octet ` +
                `(need ${(100 * minFraction).toFixed(1)}%), max ${maxLsb.toFixed(2)} LSB: ${verdict}`);
  }
  return ok;
}

async function main() {
  const args = process.argv.slice(2);
  let minFraction = 0.999;
  let optimized = 'require';
  const mi = args.indexOf('--min-fraction');
  if (mi >= 0) { minFraction = Number(args[mi + 1]); args.splice(mi, 2); }
  const oi = args.indexOf('--optimized');
  if (oi >= 0) { optimized = args[oi + 1]; args.splice(oi, 2); }
  if (optimized !== 'require' && optimized !== 'report') throw new Error(`--optimized must be require or report`);
  if (args.length < 3) throw new Error('usage: node check_qdq.js MODEL.onnx OCTET_OUTPUT_DIR NAME=INPUT.npy ...');
  const [model, outDir, ...inputArgs] = args;
  const feeds = {};
  for (const a of inputArgs) {
    const eq = a.indexOf('=');
    const t = readNpy(a.slice(eq + 1));
    feeds[a.slice(0, eq)] = new ort.Tensor(t.type, t.data, t.shape);
  }
  let ok = await compare(model, outDir, feeds, 'disabled', 'optimizations off (the export as written)', true,
                         minFraction);
  ok = await compare(model, outDir, feeds, 'all', 'optimizations on (fused int8 kernels)', optimized === 'require',
                     minFraction) && ok;
  process.exitCode = ok ? 0 : 1;
}

main().catch(e => { console.error(`FAILED: ${e.message}`); process.exitCode = 1; });

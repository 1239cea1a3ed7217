// Writes ONNX Runtime's outputs for the corpus (make_corpus.py): for each model of manifest.json, NAME.ort<k>.npy
// (graph-output order) from NAME.input<k>.npy. Run once when the corpus changes; the test reads the files.
//   ORT_NODE=/path/to/node_modules/onnxruntime-node node ort_reference.js DIR
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require(process.env.ORT_NODE || 'onnxruntime-node');

// A little-endian float32 .npy file as an ORT tensor.
function readNpy(file) {
  const b = fs.readFileSync(file);
  const major = b[6];
  const hlen = major === 1 ? b.readUInt16LE(8) : b.readUInt32LE(8);
  const off = (major === 1 ? 10 : 12) + hlen;
  const header = b.toString('latin1', major === 1 ? 10 : 12, off);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  if (descr !== '<f4') throw new Error(`${file}: dtype ${descr}, the corpus feeds float32 only`);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').map((s) => s.trim()).filter((s) => s).map(Number);
  const data = new Float32Array(b.buffer.slice(b.byteOffset + off, b.byteOffset + b.length));
  return new ort.Tensor('float32', data, shape);
}

// An ORT float32 tensor as .npy (version 1.0) bytes.
function npyBytes(t) {
  if (t.type !== 'float32') throw new Error(`output of type ${t.type}: the corpus compares float32 outputs only`);
  const dims = t.dims.length === 1 ? `${t.dims[0]},` : t.dims.join(', ');
  let header = `{'descr': '<f4', 'fortran_order': False, 'shape': (${dims}), }`;
  header += ' '.repeat(64 - ((10 + header.length + 1) % 64)) + '\n';
  const pre = Buffer.alloc(10);
  pre.write('\x93NUMPY', 0, 'latin1');
  pre[6] = 1;
  pre[7] = 0;
  pre.writeUInt16LE(header.length, 8);
  return Buffer.concat([pre, Buffer.from(header, 'latin1'), Buffer.from(t.data.buffer, t.data.byteOffset,
                                                                            t.data.byteLength)]);
}

async function main() {
  const dir = process.argv[2];
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
  for (const [name, io] of Object.entries(manifest)) {
    const feeds = {};
    io.inputs.forEach((input, k) => { feeds[input] = readNpy(path.join(dir, `${name}.input${k}.npy`)); });
    // No graph optimizations: the reference is the model's own arithmetic.
    const s = await ort.InferenceSession.create(path.join(dir, `${name}.onnx`),
                                                {graphOptimizationLevel: 'disabled', intraOpNumThreads: 1});
    const out = await s.run(feeds);
    io.outputs.forEach((o, k) => fs.writeFileSync(path.join(dir, `${name}.ort${k}.npy`), npyBytes(out[o])));
    console.log(`${name}: ${io.outputs.map((o) => `${o} [${out[o].dims}]`).join(', ')}`);
  }
}

main().catch((e) => { console.error(e.message || e); process.exit(1); });

// Minimal .npy reading and writing (little-endian C-order float32, uint8, int8, int32) for the ONNX Runtime checks.
'use strict';
const fs = require('fs');

const kTypes = {'<f4': ['float32', Float32Array], '|u1': ['uint8', Uint8Array], '|i1': ['int8', Int8Array],
                '<i4': ['int32', Int32Array]};

function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.toString('latin1', 1, 6) !== 'NUMPY') throw new Error(`${file}: not a .npy file`);
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', start, start + headerLen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').map(s => s.trim()).filter(s => s).map(Number);
  if (/'fortran_order':\s*True/.test(header)) throw new Error(`${file}: Fortran order is not supported`);
  const count = shape.reduce((a, b) => a * b, 1);
  const body = buf.subarray(start + headerLen);
  if (!(descr in kTypes)) throw new Error(`${file}: dtype ${descr} is not supported`);
  const [type, Ctor] = kTypes[descr];
  const data = new Ctor(count);
  Buffer.from(data.buffer).set(body.subarray(0, count * Ctor.BYTES_PER_ELEMENT));
  return {type, descr, data, shape};
}

function writeNpy(file, descr, data, shape) {
  const dims = shape.length === 1 ? `${shape[0]},` : shape.join(', ');
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${dims}), }`;
  header += ' '.repeat(64 - ((10 + header.length + 1) % 64)) + '\n';
  const prefix = Buffer.alloc(10);
  prefix.write('\x93NUMPY', 0, 'latin1');
  prefix[6] = 1;
  prefix[7] = 0;
  prefix.writeUInt16LE(header.length, 8);
  fs.writeFileSync(file, Buffer.concat([prefix, Buffer.from(header, 'latin1'),
                                       Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}

module.exports = {readNpy, writeNpy};

// As a program: node npy.js reshape IN.npy OUT.npy D0,D1,... (same element count).
if (require.main === module) {
  const [cmd, input, output, dims] = process.argv.slice(2);
  if (cmd !== 'reshape' || !dims) throw new Error('usage: node npy.js reshape IN.npy OUT.npy D0,D1,...');
  const t = readNpy(input);
  const shape = dims.split(',').map(Number);
  if (shape.reduce((a, b) => a * b, 1) !== t.data.length) throw new Error(`${input}: cannot reshape to [${dims}]`);
  writeNpy(output, t.descr, t.data, shape);
}

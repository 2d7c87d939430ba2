// NumPy .npy files for ort_run.js: the subset graphjit's runtime/npy.h reads and writes
// (versions 1-3, C order, little-endian f4 / f8 / i8), as typed arrays.
'use strict';

const fs = require('fs');

const DTYPES = {
  '<f4': {type: 'float32', array: Float32Array},
  '<f8': {type: 'float64', array: Float64Array},
  '<i8': {type: 'int64', array: BigInt64Array},
};
const DESCR = {float32: '<f4', float64: '<f8', int64: '<i8'};
const MAGIC = Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]);  // \x93NUMPY

// {type, data, shape} of the .npy file `file`; throws an Error naming the file and what
// was expected.
function read(file) {
  let bytes;
  try {
    bytes = fs.readFileSync(file);
  } catch (e) {
    throw new Error(`cannot read ${file}: ${e.code || e.message}`);
  }
  const bad = (what) => new Error(`${file}: not a .npy file graphjit reads: ${what}`);
  if (bytes.length < 10 || !bytes.subarray(0, 6).equals(MAGIC)) throw bad('no \\x93NUMPY magic');
  const major = bytes[6];
  let headerLen, start;
  if (major === 1) {
    headerLen = bytes.readUInt16LE(8);
    start = 10;
  } else if (major === 2 || major === 3) {
    if (bytes.length < 12) throw bad('truncated header');
    headerLen = bytes.readUInt32LE(8);
    start = 12;
  } else {
    throw bad(`format version ${major} (expected 1, 2 or 3)`);
  }
  if (start + headerLen > bytes.length) throw bad('truncated header');
  const header = bytes.toString(major === 3 ? 'utf8' : 'latin1', start, start + headerLen);
  const descr = /'descr'\s*:\s*'([^']*)'/.exec(header);
  const order = /'fortran_order'\s*:\s*(True|False)/.exec(header);
  const shape = /'shape'\s*:\s*\(([^)]*)\)/.exec(header);
  if (!descr || !order || !shape) throw bad(`header '${header.trim()}'`);
  const dtype = DTYPES[descr[1]];
  if (!dtype) throw bad(`dtype '${descr[1]}' (expected <f4, <f8 or <i8)`);
  if (order[1] === 'True') throw bad('Fortran order (expected C order)');
  const dims = shape[1].split(',').map((s) => s.trim()).filter((s) => s.length > 0).map(Number);
  if (dims.some((d) => !Number.isInteger(d) || d < 0)) throw bad(`shape (${shape[1]})`);
  const count = dims.reduce((a, b) => a * b, 1);
  const offset = start + headerLen;
  const need = count * dtype.array.BYTES_PER_ELEMENT;
  if (bytes.length - offset !== need) {
    throw bad(`${bytes.length - offset} data bytes for shape [${dims}] (expected ${need})`);
  }
  // A copy: the file buffer's offset need not be aligned for the typed array.
  const data = new dtype.array(count);
  Buffer.from(data.buffer).set(bytes.subarray(offset, offset + need));
  return {type: dtype.type, data, shape: dims};
}

// Writes `data` (a typed array of `type`) with `shape` as a version 1.0 .npy file.
function write(file, type, data, shape) {
  const descr = DESCR[type];
  if (!descr) throw new Error(`${file}: cannot write a ${type} tensor as .npy`);
  const dims = shape.length === 1 ? `${shape[0]},` : shape.join(', ');
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${dims}), }`;
  // The header is padded with spaces so the data starts on a 64-byte boundary.
  const total = Math.ceil((10 + header.length + 1) / 64) * 64;
  header = header.padEnd(total - 10 - 1, ' ') + '\n';
  const prefix = Buffer.alloc(10);
  MAGIC.copy(prefix);
  prefix[6] = 1;
  prefix[7] = 0;
  prefix.writeUInt16LE(header.length, 8);
  const body = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  fs.writeFileSync(file, Buffer.concat([prefix, Buffer.from(header, 'latin1'), body]));
}

module.exports = {read, write};

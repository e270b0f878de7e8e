// SPDX-License-Identifier: Apache-2.0
// Runs every model of a zoo exported by export_zoo.py in ONNX Runtime (CPU,
// one thread) on its saved inputs and writes the reference outputs that
// run_zoo.py compares vkpipe against. onnxruntime-node ships a CPU build:
//
//   (mkdir -p /tmp/ort && cd /tmp/ort && npm install --ignore-scripts onnxruntime-node)
//   NODE_PATH=/tmp/ort/node_modules node tools/zoo/ort_run.js MANIFEST_DIR [--only NAME,...]
//
// Writes MANIFEST_DIR/NAME/ort/<output>.npy (characters other than
// A-Z a-z 0-9 . _ - in an output name become '_', as 'vkpipe run' does) and
// MANIFEST_DIR/ort.json: per model "ok" with each output's file, dtype and
// shape and the best wall time of 3 runs after a warm-up, or "failed" with the
// reason. One model's failure never stops the others.
const ort = require('onnxruntime-node');
const fs = require('fs');
const path = require('path');

// .npy descr <-> ONNX Runtime tensor type and typed array.
const DTYPES = [
  {descr: '<f4', ort: 'float32', array: Float32Array},
  {descr: '<i8', ort: 'int64', array: BigInt64Array},
  {descr: '<i4', ort: 'int32', array: Int32Array},
  {descr: '|b1', ort: 'bool', array: Uint8Array},
  {descr: '|u1', ort: 'uint8', array: Uint8Array},
  {descr: '|i1', ort: 'int8', array: Int8Array},
];

// Reads a C-order little-endian .npy (format 1.x or 2.x) into an ort.Tensor.
function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(`${file}: not a .npy file`);
  const major = buf[6];
  const headerLength = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const dataStart = (major === 1 ? 10 : 12) + headerLength;
  const header = buf.toString('latin1', major === 1 ? 10 : 12, dataStart);
  const descr = /'descr':\s*'([^']+)'/.exec(header);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header);
  if (!descr || !shape || /'fortran_order':\s*True/.test(header))
    throw new Error(`${file}: unsupported .npy header ${header.trim()}`);
  const dtype = DTYPES.find((d) => d.descr === descr[1]);
  if (!dtype) throw new Error(`${file}: unsupported dtype ${descr[1]}`);
  const dims = shape[1].split(',').map((s) => s.trim()).filter((s) => s).map(Number);
  // Copy into a fresh buffer: typed arrays need an aligned offset.
  const bytes = Uint8Array.prototype.slice.call(buf, dataStart);
  const count = dims.reduce((a, b) => a * b, 1);
  const data = new dtype.array(bytes.buffer, 0, count);
  return new ort.Tensor(dtype.ort, data, dims);
}

// Writes an ort.Tensor as a format 1.0 .npy.
function writeNpy(file, tensor) {
  const dtype = DTYPES.find((d) => d.ort === tensor.type);
  if (!dtype) throw new Error(`output dtype ${tensor.type} is not supported by the .npy writer`);
  const dims = tensor.dims.map(String);
  const shape = dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(', ')})`;
  let header = `{'descr': '${dtype.descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n';  // 64-byte aligned data
  const prefix = Buffer.alloc(10);
  prefix.write('\x93NUMPY', 0, 'latin1');
  prefix[6] = 1;
  prefix[7] = 0;
  prefix.writeUInt16LE(header.length, 8);
  const data = tensor.data;
  fs.writeFileSync(file, Buffer.concat([
    prefix, Buffer.from(header, 'latin1'),
    Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}

const safeName = (name) => name.replace(/[^A-Za-z0-9._-]/g, '_');

async function runModel(dir, model) {
  const session = await ort.InferenceSession.create(path.join(dir, model.file), {
    intraOpNumThreads: 1, interOpNumThreads: 1,
    executionMode: 'sequential', graphOptimizationLevel: 'all'});
  const feeds = {};
  for (const input of model.inputs) feeds[input.name] = readNpy(path.join(dir, input.file));
  let results = await session.run(feeds);  // warm-up, and the outputs kept
  let bestMs = Infinity;
  for (let i = 0; i < 3; ++i) {
    const t0 = process.hrtime.bigint();
    results = await session.run(feeds);
    bestMs = Math.min(bestMs, Number(process.hrtime.bigint() - t0) / 1e6);
  }
  fs.mkdirSync(path.join(dir, model.dir, 'ort'), {recursive: true});
  const outputs = {};
  for (const name of session.outputNames) {
    const file = path.join(model.dir, 'ort', safeName(name) + '.npy');
    writeNpy(path.join(dir, file), results[name]);
    outputs[name] = {file, dtype: results[name].type, shape: results[name].dims};
  }
  await session.release();
  return {status: 'ok', ms: bestMs, outputs};
}

(async () => {
  const args = process.argv.slice(2);
  const onlyAt = args.indexOf('--only');
  const only = onlyAt >= 0 ? args.splice(onlyAt, 2)[1].split(',').filter((s) => s) : [];
  if (args.length !== 1) {
    console.error('usage: node tools/zoo/ort_run.js MANIFEST_DIR [--only NAME,...]');
    process.exit(2);
  }
  const dir = args[0];
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
  const reportFile = path.join(dir, 'ort.json');
  const report = only.length && fs.existsSync(reportFile) ?
      JSON.parse(fs.readFileSync(reportFile, 'utf8')) : {models: {}};
  report.onnxruntime = require('onnxruntime-node/package.json').version;
  report.threads = 1;
  for (const model of manifest.models) {
    if (only.length && !only.includes(model.name)) continue;
    if (model.status !== 'ok') {
      report.models[model.name] = {status: 'skipped', reason: 'export failed'};
      continue;
    }
    let result;
    try {
      result = await runModel(dir, model);
      console.log(`${model.name}: ok, ${result.ms.toFixed(1)} ms`);
    } catch (err) {
      const reason = String(err && err.message ? err.message : err).split('\n')[0];
      result = {status: 'failed', reason};
      console.log(`${model.name}: failed: ${reason}`);
    }
    report.models[model.name] = result;
  }
  fs.writeFileSync(reportFile, JSON.stringify(report, null, 1) + '\n');
  const all = Object.values(report.models);
  console.log(`${all.filter((r) => r.status === 'ok').length} of ${all.length} models ` +
              `ran in ONNX Runtime ${report.onnxruntime}; results in ${reportFile}`);
})();

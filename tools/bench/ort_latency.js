// SPDX-License-Identifier: Apache-2.0
// ONNX Runtime CPU latency of a model, measured like bench_cpu_model (wall
// time and process CPU time per run, best and median), for the comparison in
// docs/benchmarks.md. onnxruntime-node ships a CPU build:
//
//   (cd /tmp/ort && npm install --ignore-scripts onnxruntime-node)
//   NODE_PATH=/tmp/ort/node_modules node tools/bench/ort_latency.js \
//       MODEL.onnx x.npy|DIR [THREADS] [RUNS]
//
// With a directory (a tools/zoo/export_zoo.py model folder), every
// DIR/input_NAME.npy feeds the input NAME (float32 or int64).
//
// Writes the output as MODEL.onnx.ort.bin (raw float32) for comparison.
const ort = require('onnxruntime-node');
const fs = require('fs');

function loadNpy(path) {  // float32 or int64, C order, little-endian, format 1.0
  const buf = fs.readFileSync(path);
  const headerLength = buf.readUInt16LE(8);
  const header = buf.toString('latin1', 10, 10 + headerLength);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',')
                    .map((d) => d.trim()).filter((d) => d).map(Number);
  const raw = buf.subarray(10 + headerLength);
  const data = Uint8Array.from(raw).buffer;  // aligned copy
  if (/'descr':\s*'<i8'/.test(header))
    return new ort.Tensor('int64', new BigInt64Array(data), shape);
  return new ort.Tensor('float32', new Float32Array(data), shape);
}

(async () => {
  const model = process.argv[2], npy = process.argv[3];
  const threads = +process.argv[4] || 1, runs = +process.argv[5] || 20;
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: threads, interOpNumThreads: 1,
    executionMode: 'sequential', graphOptimizationLevel: 'all'});
  const feeds = {};
  if (fs.statSync(npy).isDirectory()) {
    for (const name of session.inputNames) feeds[name] = loadNpy(`${npy}/input_${name}.npy`);
  } else {
    feeds[session.inputNames[0]] = loadNpy(npy);
  }
  let out = await session.run(feeds);  // warm-up
  const wall = [], cpu = [];
  for (let i = 0; i < runs; ++i) {
    const t0 = process.hrtime.bigint(), c0 = process.cpuUsage();
    out = await session.run(feeds);
    wall.push(Number(process.hrtime.bigint() - t0) / 1e6);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1e3);
  }
  wall.sort((a, b) => a - b);
  cpu.sort((a, b) => a - b);
  const y = out[session.outputNames[0]].data;
  fs.writeFileSync(model + '.ort.bin', Buffer.from(y.buffer, y.byteOffset, y.byteLength));
  console.log(`${model}: onnxruntime threads ${threads}; wall best ` +
              `${wall[0].toFixed(3)} ms, median ${wall[runs >> 1].toFixed(3)} ms; ` +
              `cpu time best ${cpu[0].toFixed(3)} ms, median ` +
              `${cpu[runs >> 1].toFixed(3)} ms (${runs} runs)`);
})();

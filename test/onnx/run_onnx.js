// Runs an ONNX model with ONNX Runtime (npm's onnxruntime-node, CPU) over rows of features and
// prints its outputs as JSON, one array per row: test/scripts/onnx_roundtrip.sh compares them with
// hopper's predictions. Usage: node run_onnx.js MODEL.onnx ROWS.json (ROWS: [[f1, f2, ...], ...]).
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');

async function main() {
    const [model, rowsFile] = process.argv.slice(2);
    const rows = JSON.parse(fs.readFileSync(rowsFile, 'utf8'));
    const session = await ort.InferenceSession.create(fs.readFileSync(model));
    const width = rows[0].length;
    const data = Float32Array.from(rows.flat());
    const feeds = {[session.inputNames[0]]: new ort.Tensor('float32', data, [rows.length, width])};
    const result = await session.run(feeds);
    const out = result[session.outputNames[0]];
    const k = out.dims[1];
    const answer = [];
    for (let r = 0; r < rows.length; ++r) answer.push(Array.from(out.data.slice(r * k, (r + 1) * k)));
    process.stdout.write(JSON.stringify(answer) + '\n');
}
main().catch((e) => { process.stderr.write(String(e && e.stack || e) + '\n'); process.exit(1); });

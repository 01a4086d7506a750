// Runs an ONNX model with ONNX Runtime (npm's onnxruntime-node, CPU) over rows of features and
// prints its outputs as JSON, one array per row: test/scripts/onnx_roundtrip.sh compares them with
// hopper's predictions. Usage: node run_onnx.js MODEL.onnx ROWS.json, ROWS either [[f1, f2, ...], ...]
// (the one input of a model on feature rows) or {"column": [v1, v2, ...], ...} (the named inputs of a
// model with a feature recipe: strings for categorical columns, "" for NULL; numbers with null for
// NULL, as NaN; arrays for array columns).
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');

async function main() {
    const [model, rowsFile] = process.argv.slice(2);
    const rows = JSON.parse(fs.readFileSync(rowsFile, 'utf8'));
    const session = await ort.InferenceSession.create(fs.readFileSync(model));
    const feeds = {};
    let n;
    if (Array.isArray(rows)) {
        n = rows.length;
        feeds[session.inputNames[0]] = new ort.Tensor('float32', Float32Array.from(rows.flat()), [n, rows[0].length]);
    } else {
        for (const [name, values] of Object.entries(rows)) {
            n = values.length;
            if (values.some((v) => typeof v === 'string')) {
                feeds[name] = new ort.Tensor('string', values.map((v) => (v === null ? '' : v)), [n, 1]);
            } else if (values.some((v) => Array.isArray(v))) {
                feeds[name] = new ort.Tensor('float32', Float32Array.from(values.flat()), [n, values[0].length]);
            } else {
                feeds[name] = new ort.Tensor('float32', Float32Array.from(values.map((v) => (v === null ? NaN : v))), [n, 1]);
            }
        }
    }
    const result = await session.run(feeds);
    const out = result[session.outputNames[0]];
    const k = out.dims[1];
    const answer = [];
    for (let r = 0; r < n; ++r) answer.push(Array.from(out.data.slice(r * k, (r + 1) * k)));
    process.stdout.write(JSON.stringify(answer) + '\n');
}
main().catch((e) => { process.stderr.write(String(e && e.stack || e) + '\n'); process.exit(1); });

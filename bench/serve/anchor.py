#!/usr/bin/python3
"""Anchors of bench/serve/run.sh: the same model outside PostgreSQL.

  anchor.py torch MODEL_JSON LABELS_FILE   PyTorch's forward pass over the rows of table t: the whole
                                           path (binary COPY out of PostgreSQL through psql, parsing,
                                           forward, argmax) and the forward pass alone; one thread (one backend)
  anchor.py serve MODEL_JSON PORT          a Flask model service (POST /predict {"features": [...]})
  anchor.py client PORT SECONDS            one keep-alive client scoring rows of t one request each

MODEL_JSON holds what hopper.model_weights gives for the registered version (layer by layer: a dense
layer's weights units x inputs column-major, then its biases), the layer widths and the
normalizing_const the version was trained with. Debian's packages: python3-torch, python3-flask,
python3-threadpoolctl, python3-numpy (run with /usr/bin/python3).
"""
import http.client
import json
import os
import statistics
import sys
import time

import numpy as np
import torch
from threadpoolctl import threadpool_info, threadpool_limits

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from anchor import copy_out  # noqa: E402  (bench/anchor.py)


def load_model(path):
    m = json.load(open(path))
    w = np.asarray(m["weights"], dtype=np.float32)
    dims = m["dims"]
    layers, off = [], 0
    for i, (fan_in, units) in enumerate(zip(dims, dims[1:])):
        lin = torch.nn.Linear(fan_in, units)
        # Column-major units x inputs is row-major inputs x units: transposed into PyTorch's (out, in).
        lin.weight.data = torch.from_numpy(w[off:off + fan_in * units].reshape(fan_in, units).T.copy())
        off += fan_in * units
        lin.bias.data = torch.from_numpy(w[off:off + units].copy())
        off += units
        layers += [lin, torch.nn.ReLU() if i < len(dims) - 2 else torch.nn.Softmax(dim=1)]
    if off != len(w):
        sys.exit(f"anchor: {len(w)} weights, the architecture {dims} has {off}")
    return torch.nn.Sequential(*layers).eval(), float(m["normalizing_const"])


def copy_rows(sql):
    """Rows of one real[] column through COPY ... TO STDOUT (FORMAT binary) (psql), as float32: the
    fastest way out (text is about twice as slow: float4out, then parsing)."""
    return copy_out(sql, "binary")[0]


def one_thread():
    torch.set_num_threads(1)
    return threadpool_limits(limits=1)


def blas_line():
    for p in threadpool_info():
        if p["user_api"] == "blas":
            return (f"{p['internal_api']} {p.get('version')}, kernel {p.get('architecture')}, "
                    f"{p['num_threads']} thread")
    return "no BLAS loaded"


def torch_anchor(model_json, labels_file):
    model, nc = load_model(model_json)
    with one_thread(), torch.no_grad():
        # The whole path: data in PostgreSQL to classes in Python.
        whole = []
        for _ in range(3):
            t0 = time.perf_counter()
            x = torch.from_numpy(copy_rows("SELECT features FROM t ORDER BY id"))
            classes = model(x / nc).argmax(dim=1)
            whole.append(time.perf_counter() - t0)
        # The forward pass alone (scaling, both layers, argmax) over the rows already in memory.
        alone = []
        for _ in range(10):
            t0 = time.perf_counter()
            classes = model(x / nc).argmax(dim=1)
            alone.append(time.perf_counter() - t0)
        blas = blas_line()
    hopper = np.loadtxt(labels_file, dtype=np.int64)
    differ = int((classes.numpy() != hopper).sum())
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread; {blas}")
    print(f"whole_ms {statistics.median(whole) * 1000:.0f}")
    print(f"forward_ms {statistics.median(alone) * 1000:.1f}")
    print(f"rows {len(x)} differ {differ}")


def serve(model_json, port):
    from flask import Flask, jsonify, request
    from werkzeug.serving import WSGIRequestHandler

    model, nc = load_model(model_json)
    torch.set_num_threads(1)
    app = Flask("hopper-bench-serve")

    @app.post("/predict")
    def predict():
        x = torch.tensor([request.get_json()["features"]], dtype=torch.float32)
        with torch.no_grad():
            return jsonify({"class": str(int(model(x / nc).argmax(dim=1)[0]))})

    WSGIRequestHandler.protocol_version = "HTTP/1.1"  # keep-alive
    with threadpool_limits(limits=1):
        app.run(host="127.0.0.1", port=port, threaded=False)


def client(port, seconds):
    rows = copy_rows("SELECT features FROM t ORDER BY id LIMIT 1000").tolist()
    conn = http.client.HTTPConnection("127.0.0.1", port)
    headers = {"Content-Type": "application/json"}

    def ask(features):
        conn.request("POST", "/predict", json.dumps({"features": features}), headers)
        r = conn.getresponse()
        body = r.read()
        if r.status != 200:
            sys.exit(f"anchor: HTTP {r.status}: {body[:200]}")
        return json.loads(body)["class"]

    for i in range(200):  # warm-up
        ask(rows[i % len(rows)])
    lat, i = [], 0
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        t0 = time.perf_counter_ns()
        ask(rows[i % len(rows)])
        lat.append((time.perf_counter_ns() - t0) / 1000)
        i += 1
    lat.sort()
    print(f"{len(lat)} requests, p50 {lat[len(lat) // 2]:.0f} us, p99 {lat[int(len(lat) * 0.99)]:.0f} us, "
          f"mean {sum(lat) / len(lat):.0f} us")


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "torch":
        torch_anchor(sys.argv[2], sys.argv[3])
    elif mode == "serve":
        serve(sys.argv[2], int(sys.argv[3]))
    elif mode == "client":
        client(int(sys.argv[2]), float(sys.argv[3]))
    else:
        sys.exit(f"anchor: unknown mode {mode}")

#!/usr/bin/python3
"""Runs the CNN benchmark cases and writes the report. Called by bench/cnn/run.sh once the build, the
cluster and the packed data (cnn_packed_1/2, cnn_test_packed_1/2) are ready; not meant to be run alone.

  bench_cnn.py --work DIR --build DIR --out FILE --epochs E --fm-iterations I [--only a,b]

Cases, one run each (a CNN epoch takes tens of seconds on one core):
  floor   hopper_conv_bench (bench/conv.cpp): one training step of the network at batch 128 and the
          GEMM floor of its products (the conv layers' im2col GEMMs and the dense layer's)
  core    hopper_core_alone: the core's Trainer on in-memory arrays packed as hopper.preprocess packs
          them (what hopper costs without PostgreSQL)
  fit     CALL hopper.fit(... E iterations, validation_table => the test set) with the defaults
          (metrics every iteration), 1 segment, one process: the CALL's wall time, and the training
          time alone from <output>_summary
  torch   bench/cnn/python_cnn.py, one thread
  fm-1    CALL hopper.fit_multiple of the four configurations in CONFIGS, I iterations, 1 segment
  fm-2    the same on 2 segments (2 processes)
Results: DIR/cnn_results.jsonl (one line per case), the report printed and written to FILE.
"""
import argparse
import datetime
import json
import os
import platform
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from anchor import anchor_env  # noqa: E402
BENCH = os.path.dirname(HERE)
PY = "/usr/bin/python3"
DATA = os.environ.get("BENCH_DATA", "/usr/share/datasets/fashion-mnist")
SAMPLES = 60000


def keras_layer(cls, **cfg):
    return {"class_name": cls, "config": cfg}


def simple_convnet(batch_norm=False):
    """The Keras example's model as model.to_json() writes it (Keras 2 form); with batch_norm, each
    Conv2D (without bias) is followed by BatchNormalization and the relu."""
    layers = [keras_layer("InputLayer", batch_input_shape=[None, 28, 28, 1], dtype="float32", name="input")]
    for i, filters in enumerate((32, 64), 1):
        if batch_norm:
            layers += [keras_layer("Conv2D", name=f"conv{i}", filters=filters, kernel_size=[3, 3], strides=[1, 1],
                                   padding="valid", data_format="channels_last", dilation_rate=[1, 1], groups=1,
                                   activation="linear", use_bias=False,
                                   kernel_initializer={"class_name": "GlorotUniform", "config": {"seed": None}}),
                       keras_layer("BatchNormalization", name=f"bn{i}", axis=-1, momentum=0.99, epsilon=0.001),
                       keras_layer("Activation", name=f"relu{i}", activation="relu")]
        else:
            layers.append(keras_layer("Conv2D", name=f"conv{i}", filters=filters, kernel_size=[3, 3], strides=[1, 1],
                                      padding="valid", data_format="channels_last", dilation_rate=[1, 1], groups=1,
                                      activation="relu", use_bias=True,
                                      kernel_initializer={"class_name": "GlorotUniform", "config": {"seed": None}},
                                      bias_initializer={"class_name": "Zeros", "config": {}}))
        layers.append(keras_layer("MaxPooling2D", name=f"pool{i}", pool_size=[2, 2], strides=[2, 2], padding="valid",
                                  data_format="channels_last"))
    layers += [keras_layer("Flatten", name="flatten", data_format="channels_last"),
               keras_layer("Dropout", name="dropout", rate=0.5),
               keras_layer("Dense", name="dense", units=10, activation="softmax", use_bias=True)]
    return json.dumps({"class_name": "Sequential", "config": {"name": "simple_convnet", "layers": layers},
                       "keras_version": "2.15.0", "backend": "tensorflow"})


ARCH = simple_convnet()
ADAM = "Adam(lr=0.001)"
# fit_multiple: model_id 1 = the simple convnet, 2 = with batch normalization.
CONFIGS = [(1, ADAM), (1, "Adam(lr=0.003)"), (1, "SGD(lr=0.05, momentum=0.9)"), (2, ADAM)]


def compile_params(opt):
    return f"loss='categorical_crossentropy', optimizer='{opt}', metrics=['accuracy']"


p = argparse.ArgumentParser()
p.add_argument("--work", required=True)
p.add_argument("--build", required=True)
p.add_argument("--out", required=True)
p.add_argument("--epochs", type=int, default=10)
p.add_argument("--fm-iterations", type=int, default=2)
p.add_argument("--commit", default="")
p.add_argument("--only", default="")
args = p.parse_args()
E, I = args.epochs, args.fm_iterations
RESULTS = os.path.join(args.work, "cnn_results.jsonl")


def loadavg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def log(msg):
    print(f"[{datetime.datetime.now():%H:%M:%S} load {loadavg():.1f}] {msg}", file=sys.stderr, flush=True)


def psql(sql):
    return subprocess.run(["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-c", sql], check=True,
                          capture_output=True, text=True).stdout.strip()


def run_json(cmd, env=None):
    """Runs cmd under /usr/bin/time; returns (its last stdout line as JSON, max RSS in MB)."""
    rss_file = os.path.join(args.work, "cnn_maxrss.txt")
    out = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss_file] + cmd, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{out.stderr[-3000:]}")
    with open(rss_file) as f:
        rss = int(f.read().strip().splitlines()[-1]) / 1024.0
    return json.loads(out.stdout.strip().splitlines()[-1]), rss


def floor_case():
    out = subprocess.run([os.path.join(args.build, "hopper_conv_bench"), "--reps", "9"], capture_output=True,
                         text=True, check=True).stdout
    m = re.search(r"one training step: ([\d.]+) ms \(([\d.]+) GFLOP/s\); its GEMMs alone: ([\d.]+) ms \(([\d.]+) GFLOP/s\)",
                  out)
    steps = -(-SAMPLES // 128)
    return {"step_ms": float(m.group(1)), "step_gflops": float(m.group(2)), "gemm_ms": float(m.group(3)),
            "gemm_gflops": float(m.group(4)), "epoch_seconds_at_step": float(m.group(1)) * steps / 1000,
            "epoch_seconds_at_floor": float(m.group(3)) * steps / 1000, "raw": out}


def core_case():
    d, rss = run_json([os.path.join(args.build, "hopper_core_alone"), "--data", DATA, "--epochs", str(E),
                       "--arch", ARCH, "--compile", compile_params(ADAM), "--fit", "batch_size=128",
                       "--buffer-size", "128", "--threads", "1"])
    return {"epoch_seconds": sum(d["epoch_seconds"]) / E, "cpu_seconds_per_epoch": sum(d["epoch_cpu_seconds"]) / E,
            "test_accuracy": d["test_accuracy"][0], "peak_rss_mb": rss}


def hopper_run(sql):
    out = subprocess.run([PY, os.path.join(BENCH, "hopper_run.py"), "--output", "bench_cnn_out", "--sql", sql],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"hopper run failed:\n{out.stderr[-3000:]}")
    d = json.loads(out.stdout.strip().splitlines()[-1])
    d["curves"] = json.loads(psql(
        "SELECT pg_catalog.json_agg(json_build_object('mst_key', mst_key, 'compile_params', compile_params,"
        " 'model_id', model_id, 'iters', metrics_iters, 'test_accuracy', validation_metrics,"
        " 'training_accuracy', training_metrics) ORDER BY mst_key) FROM bench_cnn_out_info"))
    return d


def one_process(segments):
    s = [f"SET hopper.parallel_segments = {segments}"]
    if segments == 1:
        s += ["SET max_parallel_workers_per_gather = 0", "SET max_parallel_maintenance_workers = 0"]
    return "; ".join(s)


def fit_case():
    arch = ARCH.replace("'", "''")
    return hopper_run(f"{one_process(1)}; CALL hopper.fit('cnn_packed_1', 'bench_cnn_out', '{arch}',"
                      f" $${compile_params(ADAM)}$$, 'batch_size=128', {E}, validation_table => 'cnn_test_packed_1')")


def torch_case():
    env = anchor_env(1)
    d, rss = run_json([PY, os.path.join(HERE, "python_cnn.py"), "--epochs", str(E), "--threads", "1", "--data", DATA],
                      env=env)
    d["peak_rss_mb"] = rss
    return d


def fm_case(segments):
    def run():
        return hopper_run(f"{one_process(segments)}; CALL hopper.fit_multiple('cnn_packed_{segments}', 'bench_cnn_out',"
                          f" 'cnn_mst', {I}, validation_table => 'cnn_test_packed_{segments}')")
    return run


def prepare_selection():
    psql("SET client_min_messages = warning; DROP TABLE IF EXISTS cnn_arch, cnn_mst, cnn_mst_summary")
    for name, bn in (("simple convnet", False), ("simple convnet + batch normalization", True)):
        arch = simple_convnet(bn).replace("'", "''")
        psql(f"SELECT hopper.load_model_arch('cnn_arch', '{arch}', '{name}')")
    plain = [opt for mid, opt in CONFIGS if mid == 1]
    psql("SELECT hopper.load_model_selection_table('cnn_arch', 'cnn_mst', ARRAY[1], ARRAY["
         + ", ".join(f"$${compile_params(o)}$$" for o in plain) + "], ARRAY['batch_size=128'])")
    for mid, opt in CONFIGS:
        if mid != 1:
            psql(f"INSERT INTO cnn_mst (model_id, compile_params, fit_params) VALUES ({mid}, $${compile_params(opt)}$$,"
                 " 'batch_size=128')")


CASES = [("floor", floor_case), ("core", core_case), ("fit", fit_case), ("torch", torch_case),
         ("fm-1", fm_case(1)), ("fm-2", fm_case(2))]
if args.only:
    keep = set(args.only.split(","))
    CASES = [c for c in CASES if c[0] in keep]


def machine():
    meta = {"date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), "host": platform.node().split(".")[0],
            "commit": args.commit, "epochs": E, "fm_iterations": I}
    with open("/proc/cpuinfo") as f:
        meta["cpu"] = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "?")
    meta["cores"] = os.cpu_count()
    meta["postgres"] = subprocess.run(["postgres", "--version"], capture_output=True, text=True).stdout.strip()
    meta["gcc"] = subprocess.run(["g++", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    return meta


def main():
    meta = machine()
    meta["load_start"] = loadavg()
    if any(c[0].startswith("fm") for c in CASES):
        prepare_selection()
    results = {}
    with open(RESULTS, "a") as log_file:
        for cid, fn in CASES:
            log(f"{cid} ...")
            load_before = loadavg()
            r = fn()
            r["load"] = max(load_before, loadavg())
            results[cid] = r
            log_file.write(json.dumps({"case": cid, "meta": meta, "result": r}) + "\n")
            log(f"{cid} done")
    meta["load_end"] = loadavg()
    report = render(meta, results)
    print(report)
    with open(args.out, "w") as f:
        f.write(report)
    log(f"report written to {args.out}")


def fmt(x, digits=2):
    return "-" if x is None else f"{x:.{digits}f}"


def render(meta, r):
    out = [f"# CNN benchmark: the Keras simple convnet on Fashion-MNIST ({meta['date']}, {meta['host']})", "",
           f"- machine: {meta['cpu']}, {meta['cores']} cores (shared: load {meta['load_start']:.1f} at the start, "
           f"{meta['load_end']:.1f} at the end); {meta['postgres']}; {meta['gcc']}",
           f"- commit {meta['commit']}; `bash bench/cnn/run.sh` with BENCH_CNN_EPOCHS={meta['epochs']}, "
           f"BENCH_CNN_FM_ITERATIONS={meta['fm_iterations']}; one run per case",
           "- network: 28x28x1 -> Conv2D 32 3x3 relu -> MaxPooling 2 -> Conv2D 64 3x3 relu -> MaxPooling 2 -> Flatten "
           "-> Dropout 0.5 -> Dense 10 softmax (34,826 parameters), float32, minibatch 128, Adam lr 0.001, one thread",
           "- s/epoch: wall seconds of one pass over the 60,000 training images (hopper fit: the CALL's wall time over "
           "the epochs, with the defaults: test-set evaluation after every epoch included; 'training only' is "
           "training_seconds + hop_seconds of the summary). CPU s/epoch: CPU time of the processes doing the work "
           "(hopper fit: of the whole CALL, evaluations included; PyTorch: of its training loop, its per-epoch test "
           "evaluation excluded), the better estimate on a busy machine: wall time waits for a core.", ""]
    if "floor" in r:
        f = r["floor"]
        out += [f"GEMM floor (hopper_conv_bench, batch 128, median of 9): one training step {f['step_ms']:.2f} ms "
                f"({f['step_gflops']:.1f} GFLOP/s); its GEMMs alone {f['gemm_ms']:.2f} ms ({f['gemm_gflops']:.1f} "
                f"GFLOP/s). 469 steps: {f['epoch_seconds_at_step']:.1f} s/epoch at the step's speed, "
                f"{f['epoch_seconds_at_floor']:.1f} s/epoch at the GEMM floor.", ""]
    out += ["| one thread, 1 model | s/epoch (wall) | training only | CPU s/epoch | test accuracy after each epoch | "
            "peak RSS MB | load |", "|---|---|---|---|---|---|---|"]
    if "core" in r:
        c = r["core"]
        out.append(f"| hopper core alone (C++, in memory) | {fmt(c['epoch_seconds'])} | - | {fmt(c['cpu_seconds_per_epoch'])} "
                   f"| {c['test_accuracy']:.4f} (last) | {c['peak_rss_mb']:.0f} | {c['load']:.1f} |")
    if "fit" in r:
        h = r["fit"]
        its = h["num_iterations"]
        acc = h["curves"][0]["test_accuracy"] or []
        out.append(f"| **hopper fit**, 1 segment | **{fmt(h['wall_client_seconds'] / its)}** | {fmt(h['epoch_seconds'][0])} "
                   f"| {fmt(h['cpu_seconds'] / its)} "
                   f"| {', '.join(f'{a:.4f}' for a in acc)} | {h['peak_rss_mb']:.0f} | {h['load']:.1f} |")
    if "torch" in r:
        t = r["torch"]
        out.append(f"| PyTorch {t['versions']['torch']} CPU (mkldnn {t['versions']['mkldnn']}) | "
                   f"{fmt(sum(t['epoch_seconds']) / len(t['epoch_seconds']))} | (same) | "
                   f"{fmt(sum(t['epoch_cpu_seconds']) / len(t['epoch_cpu_seconds']))} | "
                   f"{', '.join(f'{a:.4f}' for a in t['test_accuracy'])} | {t['peak_rss_mb']:.0f} | {t['load']:.1f} |")
    fms = [k for k in ("fm-1", "fm-2") if k in r]
    if fms:
        out += ["", f"fit_multiple of four configurations, {meta['fm_iterations']} iteration(s) (one iteration = every "
                "configuration trains one epoch), test accuracy at the end:", "",
                "| configuration | " + " | ".join(f"{k[3:]} segment(s)" for k in fms) + " |",
                "|---|" + "---|" * len(fms)]
        names = {1: "simple convnet", 2: "simple convnet + batch normalization"}
        for i, (mid, opt) in enumerate(CONFIGS):
            cells = []
            for k in fms:
                m = next(c for c in r[k]["curves"] if c["model_id"] == mid and f"'{opt}'" in c["compile_params"])
                cells.append(fmt((m["test_accuracy"] or [None])[-1], 4))
            out.append(f"| {i + 1}: {names[mid]}, {opt} | " + " | ".join(cells) + " |")
        out += ["", "| fit_multiple, 4 models | s/iteration (wall, CALL) | training + hops | CPU s/iteration | "
                "peak RSS MB | load |", "|---|---|---|---|---|---|"]
        for k in fms:
            h = r[k]
            its = h["num_iterations"]
            out.append(f"| {k[3:]} segment(s) | {fmt(h['wall_client_seconds'] / its)} | {fmt(h['epoch_seconds'][0])} | "
                       f"{fmt(h['cpu_seconds'] / its)} | {h['peak_rss_mb']:.0f} | {h['load']:.1f} |")
    out.append("")
    return "\n".join(out)


main()

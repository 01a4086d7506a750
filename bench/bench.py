#!/usr/bin/python3
"""Runs the benchmark cases and writes the report. Called by bench/run.sh once the build, the private
cluster and the packed data are ready (see bench/README.md); not meant to be run alone.

  bench.py --work DIR --build DIR --out FILE --epochs E --runs R [--quick] [--profile]

Every case is run R times, interleaved (run 1 of every case, then run 2, ...), so that a change in
the machine's load hits all systems alike. Results: DIR/results.jsonl (one line per run), the
report printed and written to FILE.
"""
import argparse
import datetime
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from anchor import anchor_env  # noqa: E402
ROOT = os.path.dirname(HERE)
PY = "/usr/bin/python3"
DATA = os.environ.get("BENCH_DATA", "/usr/share/datasets/fashion-mnist")
SAMPLES = 60000
PARAMS = 784 * 128 + 128 + 128 * 10 + 10  # 101,770
STEPS_PER_EPOCH = 235  # hopper packs 60,000 rows into 235 buffers of 255-256 rows, one step each
ARCH = ('{"input_dim": 784, "layers": [{"units": 128, "activation": "relu"},'
        ' {"units": 10, "activation": "softmax"}]}')
SGD = "SGD(lr=0.01, momentum=0.9)"
ADAM = "Adam(lr=0.001)"
# fit_multiple's four configurations (and the core alone's four-model runs): the same architecture
# and batch size, so every model costs the same per epoch.
CONFIGS = [SGD, "SGD(lr=0.03, momentum=0.9)", ADAM, "Adam(lr=0.003)"]
# The scaling table's points (thousands of rows, configurations, segments): one factor at a time
# around (60k, 4, 2). bench/run.sh packs the replicated tables and the larger model selection tables.
SCALING = os.environ.get("BENCH_SCALING", "1") == "1"
# (thousands of rows, configurations, segments): the grid -- rows 60k/600k x configurations 4/16
# x segments 1/2 -- then one factor further each (240k rows, 32 configurations, 4 segments).
SCALING_POINTS = [(60, 4, 1), (60, 4, 2), (60, 16, 1), (60, 16, 2), (600, 4, 1), (600, 4, 2), (600, 16, 1),
                  (600, 16, 2), (240, 4, 2), (60, 32, 2), (60, 4, 4)]


def compile_params(opt):
    return f"loss='categorical_crossentropy', optimizer='{opt}', metrics=['accuracy']"


p = argparse.ArgumentParser()
p.add_argument("--work", required=True)
p.add_argument("--build", required=True)
p.add_argument("--out", required=True)
p.add_argument("--epochs", type=int, default=10)
p.add_argument("--runs", type=int, default=3)
p.add_argument("--quick", action="store_true")
p.add_argument("--profile", action="store_true")
p.add_argument("--commit", default="")
p.add_argument("--only", default="", help="comma-separated case ids (for trying things out)")
p.add_argument("--report-only", action="store_true", help="re-render the report from DIR's saved results")
args = p.parse_args()
E, R = args.epochs, args.runs
# Paired runs: how many of each side, and their iterations (the first of each is told apart).
PAIRS = int(os.environ.get("BENCH_PAIRS", "2" if args.quick else "8"))
PAIR_ITERATIONS = 6
PAIR_CALL_EPOCHS = 5  # issue 29, item 1: "5 epochs of Fashion-MNIST"
CORE = os.path.join(args.build, "hopper_core_alone")
GEMM = os.path.join(args.build, "hopper_gemm_bench")
RESULTS = os.path.join(args.work, "results.jsonl")
STATE = os.path.join(args.work, "state.json")


def loadavg():
    with open("/proc/loadavg") as f:
        return [float(x) for x in f.read().split()[:3]]


def log(msg):
    print(f"[{datetime.datetime.now():%H:%M:%S} load {loadavg()[0]:.1f}] {msg}", file=sys.stderr, flush=True)


def run_timed(cmd, env=None):
    """Runs cmd under /usr/bin/time; returns (parsed JSON stdout, max RSS in MB)."""
    rss_file = os.path.join(args.work, "maxrss.txt")
    out = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss_file] + cmd, capture_output=True, text=True,
                         env=env)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{out.stderr[-3000:]}")
    with open(rss_file) as f:
        rss = int(f.read().strip().splitlines()[-1]) / 1024.0
    return json.loads(out.stdout.strip().splitlines()[-1]), rss


def core_case(opts, threads, epochs=None):
    def run():
        cmd = [CORE, "--data", DATA, "--epochs", str(epochs or E), "--threads", str(threads)]
        for o in opts:
            cmd += ["--compile", compile_params(o)]
        d, rss = run_timed(cmd)
        return {"epoch_seconds": d["epoch_seconds"], "cpu_seconds_per_epoch": statistics.mean(d["epoch_cpu_seconds"]),
                "epoch_cpu_seconds": d["epoch_cpu_seconds"],
                "test_accuracy": max(d["test_accuracy"]), "per_model": dict(zip(opts, d["test_accuracy"])),
                "peak_rss_mb": rss}
    return run


def python_case(system, opt, threads, epochs=None):
    def run():
        env = anchor_env(threads)
        d, rss = run_timed([PY, os.path.join(HERE, "python_mlp.py"), system, "--optimizer", opt, "--epochs", str(epochs or E),
                            "--threads", str(threads), "--data", DATA], env=env)
        return {"epoch_seconds": d["epoch_seconds"], "cpu_seconds_per_epoch": statistics.mean(d["epoch_cpu_seconds"]),
                "test_accuracy": d["test_accuracy"], "peak_rss_mb": rss, "versions": d["versions"]}
    return run


def hopper_sql(kind, segments, opt=None, iterations=None, debug_hops=False, packed=None, mst="bench_mst",
               settings=(), evaluate_every=None, validation=True, checkpoint_frequency=None):
    """The SQL of one run. kind "fit": the call a user makes -- hopper.fit with a validation table and
    every other setting at its default (metrics every iteration, running training metrics).
    kind "fit_multiple": metrics once, at the end, unless evaluate_every is given."""
    its = iterations or E
    s = [f"SET hopper.parallel_segments = {segments}"] + list(settings)
    if segments == 1:
        # One process: no parallel query, and no parallel maintenance worker either (one shows up
        # for a moment in every 10-iteration run, outside the training statements).
        s.append("SET max_parallel_workers_per_gather = 0")
        s.append("SET max_parallel_maintenance_workers = 0")
    if debug_hops:
        s.append("SET hopper.debug_hops = on")
    packed = packed or f"fashion_packed_{segments}"
    test = f"fashion_test_packed_{segments}"
    if kind == "fit":
        val = f", validation_table => '{test}'" if validation else ""
        if evaluate_every:
            val += f", metrics_compute_frequency => {evaluate_every}"
        if checkpoint_frequency is not None:
            val += f", checkpoint_frequency => {checkpoint_frequency}"
        s.append(f"CALL hopper.fit('{packed}', 'bench_out', model_arch => '{ARCH}',"
                 f" compile_params => $${compile_params(opt)}$$, fit_params => 'batch_size=256',"
                 f" num_iterations => {its}{val})")
    else:
        every = evaluate_every or its
        val = f" validation_table => '{test}'," if validation else ""
        if checkpoint_frequency is not None:
            val += f" checkpoint_frequency => {checkpoint_frequency},"
        s.append(f"CALL hopper.fit_multiple('{packed}', 'bench_out', '{mst}', {its},{val}"
                 f" metrics_compute_frequency => {every})")
    return "; ".join(s)


# Evaluation's share of an iteration (the "eval" case): (name, kind, settings, validation table). Each
# run evaluates every second iteration (metrics_compute_frequency 2), so that an iteration that
# evaluates sits between two that do not, in the same run, seconds apart: its share is its time over
# the mean of its neighbours' - 1, whatever else the machine is doing over minutes. The user's call
# -- validation table (Fashion-MNIST's 10,000 test images), running training metrics -- evaluated in
# the group of processes that trains the iteration (hopper.overlap_evaluation, the default) or by
# statements after it (off: as before the group evaluated); likewise with exact training metrics (a
# second pass over the 60,000 training rows) and no validation table. Checkpoints only after the last
# iteration (checkpoint_frequency 0): by default they are written when metrics are computed, which
# would count writing them as evaluation.
EVAL_ITERATIONS = 10
EXACT = "SET hopper.training_metrics = exact"
OFF = "SET hopper.overlap_evaluation = off"
EVAL_CASES = [
    ("fit_multiple, validation, statements", "fit_multiple", [OFF], True),
    ("fit_multiple, validation, group", "fit_multiple", [], True),
    ("fit, validation, statements", "fit", [OFF], True),
    ("fit, validation, group", "fit", [], True),
    ("fit_multiple, exact training metrics, statements", "fit_multiple", [EXACT, OFF], False),
    ("fit_multiple, exact training metrics, group", "fit_multiple", [EXACT], False),
]


def evaluation_shares(run, key):
    """An evaluating iteration's time (key: iteration_seconds, iteration_cpu_seconds) over the mean of
    its two neighbours' - 1, for each one with two (iterations 2, 4, ... evaluate; the last evaluates
    too), but the first: the first iteration detoasts the buffers the later ones find in the run's cache."""
    t = run.get(key) or []
    return [t[i] / ((t[i - 1] + t[i + 1]) / 2) - 1 for i in range(3, len(t) - 1, 2)
            if None not in (t[i - 1], t[i], t[i + 1])]


def hopper_once(sql, hops=False, perf=None):
    cmd = [PY, os.path.join(HERE, "hopper_run.py"), "--output", "bench_out", "--sql", sql]
    if hops:
        cmd.append("--hops")
    if perf:
        cmd += ["--perf", perf]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"hopper run failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def reset_buffer_cache():
    """Empties the server's cache of packed buffers (hopper.shared_buffer_cache_mb), as a restart would."""
    subprocess.run(["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-c",
                    "SELECT hopper.shared_buffer_cache_reset()"], check=True, capture_output=True)


def hopper_case(kind, segments, opt=None):
    def run():
        cold = None
        if kind == "fit":
            # First the call on a cold cache (the server's buffer cache emptied, as after a restart:
            # every buffer comes from TOAST), then the same call again in a new session -- what a user
            # gets after preprocess, which keeps the buffers it writes, or after any earlier call. The
            # row's figures are the second's; the first's per-iteration times are in the report too.
            reset_buffer_cache()
            cold = hopper_once(hopper_sql(kind, segments, opt))
        d = hopper_once(hopper_sql(kind, segments, opt))
        if cold:
            d["cold"] = {k: cold[k] for k in ("iterations", "call_seconds", "cpu_seconds", "num_iterations")}
        if kind == "fit":
            # What the user waits for, per epoch: the CALL's wall time (client side, setup, training,
        # metrics every iteration and the outputs included) over the iterations.
            d["call_seconds_per_epoch"] = d["call_seconds"] / d["num_iterations"]
        d["per_model"] = {re.search(r"optimizer='([^']*)'", m["compile_params"]).group(1): m["test_accuracy"]
                          for m in d["models"]}
        return d
    return run


# id, section, system, threads (or segments), optimizer, models, run function
CASES = [
    ("core-sgd", 1, "hopper core alone (C++, in memory)", 1, "SGD+momentum", 1, core_case([SGD], 1)),
    ("fit-sgd", 1, "hopper fit, 1 segment", 1, "SGD+momentum", 1, hopper_case("fit", 1, SGD)),
    ("torch-sgd-1", 1, "PyTorch CPU", 1, "SGD+momentum", 1, python_case("torch", "sgd", 1)),
    ("sklearn-sgd-1", 1, "scikit-learn MLPClassifier", 1, "SGD+momentum", 1, python_case("sklearn", "sgd", 1)),
    ("core-adam", 1, "hopper core alone (C++, in memory)", 1, "Adam", 1, core_case([ADAM], 1)),
    ("fit-adam", 1, "hopper fit, 1 segment", 1, "Adam", 1, hopper_case("fit", 1, ADAM)),
    ("torch-adam-1", 1, "PyTorch CPU", 1, "Adam", 1, python_case("torch", "adam", 1)),
    ("sklearn-adam-1", 1, "scikit-learn MLPClassifier", 1, "Adam", 1, python_case("sklearn", "adam", 1)),
    ("core-4x1", 1, "hopper core alone, 4 models", 1, "4 configs", 4, core_case(CONFIGS, 1)),
    ("fm-1", 1, "hopper fit_multiple, 1 segment", 1, "4 configs", 4, hopper_case("fit_multiple", 1)),
    ("torch-sgd-2", 2, "PyTorch CPU", 2, "SGD+momentum", 1, python_case("torch", "sgd", 2)),
    ("sklearn-sgd-2", 2, "scikit-learn MLPClassifier", 2, "SGD+momentum", 1, python_case("sklearn", "sgd", 2)),
    ("torch-adam-2", 2, "PyTorch CPU", 2, "Adam", 1, python_case("torch", "adam", 2)),
    ("sklearn-adam-2", 2, "scikit-learn MLPClassifier", 2, "Adam", 1, python_case("sklearn", "adam", 2)),
    ("core-4x2", 2, "hopper core alone, 4 models", 2, "4 configs", 4, core_case(CONFIGS, 2)),
    ("fm-2", 2, "hopper fit_multiple, 2 segments", 2, "4 configs", 4, hopper_case("fit_multiple", 2)),
]
if args.only:
    keep = set(args.only.split(","))
    CASES = [c for c in CASES if c[0] in keep]


def categorize(path):
    """perf samples of one recording grouped by where they fall; (categories, top symbols)."""
    # "|" between fields: some dso names have spaces ("[JIT] tid 1234", oneDNN's generated kernels).
    rep = subprocess.run(["perf", "report", "-i", path, "--no-children", "--stdio", "--sort", "dso,symbol",
                          "-g", "none", "--percent-limit", "0.05", "--field-separator", "|"],
                         capture_output=True, text=True).stdout
    cats, top = {}, []
    for line in rep.splitlines():
        f = line.split("|")
        m = re.match(r"\s*([\d.]+)%", f[0]) if len(f) >= 3 and not line.startswith("#") else None
        if not m:
            continue
        pct, dso, sym = float(m.group(1)), f[1].strip(), re.sub(r"^\[.\]\s*", "", f[2].strip())
        if "gebp" in sym or "gemm_pack" in sym or "general_matrix" in sym or "gemv" in sym:
            c = "Eigen matrix products (the small ones; GEMM kernels and packing)"
        elif "read_idx" in sym or "libz" in dso and "crc32" not in sym or sym.startswith("main"):
            c = "reading the idx files (core alone's start-up)"
        elif "dnnl" in dso or dso.startswith("[JIT]"):
            c = "oneDNN matrix products (the large ones)"
        elif "pglz" in sym or "LZ4" in sym:
            c = "compression of model states (pglz/lz4)"
        elif "crc32" in sym:
            c = "model state checksums (crc32)"
        elif dso in ("hopper.so", "hopper_core_alone") or dso.startswith("libm"):
            c = "hopper core, other (activations, loss, optimizer, checks)"
        elif dso == "postgres":
            c = "PostgreSQL (detoasting buffers, executor, locks)"
        elif dso.startswith("libc"):
            c = "libc (memcpy, malloc)"
        elif "kernel" in dso:
            c = "kernel (page faults, scheduling)"
        else:
            c = "other"
        cats[c] = cats.get(c, 0.0) + pct
        if len(top) < 12:
            top.append((pct, dso, sym[:110]))
    rest = 100.0 - sum(cats.values())
    if rest > 0.05:
        cats["symbols under 0.05% each (mostly oneDNN's generated code, spread over many addresses)"] = rest
    return cats, top



# ---------------------------------------------------------------------------------------------
# Measuring.


def shared_memory_pages():
    """The page size of the cluster's shared memory (its buffers and hopper's buffer cache): PostgreSQL
    maps it with huge pages when the kernel has them reserved (huge_pages = try; BENCH_HUGE_PAGES=1),
    else with 4 kB pages, which every process that reads a buffer maps one by one (bench/README.md)."""
    try:
        with open(os.path.join(os.environ["HOPPER_CLUSTER"], "data", "postmaster.pid")) as f:
            pid = f.readline().strip()
        with open(f"/proc/{pid}/maps") as f:
            huge = any("anon_hugepage" in line for line in f)
    except (OSError, KeyError):
        return "?"
    if not huge:
        return "4 kB pages"
    asked = os.environ.get("BENCH_HUGE_PAGES") == "1"
    return "2 MB pages (huge pages" + (", reserved by `BENCH_HUGE_PAGES=1`)" if asked else ", reserved on the machine)")


def measure():
    """Runs everything; returns the state the report is made from (also saved to DIR/state.json)."""

    meta = {"date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), "host": platform.node().split(".")[0],
            "load_start": loadavg(), "epochs": E, "runs": R, "quick": args.quick, "commit": args.commit}
    with open("/proc/cpuinfo") as f:
        info = f.read().splitlines()
    meta["cpu"] = next((l.split(":", 1)[1].strip() for l in info if l.startswith("model name")), platform.processor())
    meta["cpu_family"] = next((l.split(":", 1)[1].strip() for l in info if l.startswith("cpu family")), "?")
    meta["cores"] = os.cpu_count()
    with open("/proc/meminfo") as f:
        meta["mem_gb"] = round(int(f.readline().split()[1]) / 1024 / 1024, 1)
    meta["kernel"] = platform.release()
    meta["gcc"] = subprocess.run(["g++", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    meta["postgres"] = subprocess.run(["postgres", "--version"], capture_output=True, text=True).stdout.strip()
    try:
        macros = open("/usr/include/eigen3/Eigen/src/Core/util/Macros.h").read()
        meta["eigen"] = ".".join(re.search(rf"#define EIGEN_{k}_VERSION (\d+)", macros).group(1)
                                 for k in ("WORLD", "MAJOR", "MINOR"))
    except (OSError, AttributeError):
        meta["eigen"] = "?"
    meta["blas"] = os.path.realpath("/usr/lib/x86_64-linux-gnu/libblas.so.3")
    meta["shared_memory_pages"] = shared_memory_pages()

    log(f"GEMM limit ({GEMM})")
    reps, min_time = (1, 0.1) if args.quick else (3, 0.5)
    # Under anchor_env: the OpenBLAS column is OpenBLAS's best kernel for the CPU's flags (this
    # VM's own detection picked SSE3: 30 GFLOP/s against 137; 2026-11-29).
    g = subprocess.run([GEMM, "--benchmark_format=json", f"--benchmark_repetitions={reps}",
                        "--benchmark_report_aggregates_only=true", f"--benchmark_min_time={min_time}"],
                       capture_output=True, text=True, check=True, env=anchor_env(1))
    gemm = {}
    for b in json.loads(g.stdout)["benchmarks"]:
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        name = b["name"].replace("_median", "")
        scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[b["time_unit"]]
        gemm[name] = {"gflops": b["FLOPS"] / 1e9, "cpu_s": b["cpu_time"] * scale, "real_s": b["real_time"] * scale}

    results = []
    if os.path.exists(RESULTS):
        os.remove(RESULTS)
    for r in range(R):
        for cid, section, system, threads, opt, models, fn in CASES:
            log(f"run {r + 1}/{R}: {cid}")
            l0 = loadavg()[0]
            d = fn()
            d.update({"case": cid, "run": r, "load": (l0 + loadavg()[0]) / 2})
            results.append(d)
            with open(RESULTS, "a") as f:
                f.write(json.dumps(d) + "\n")

    # Model hopping: one run of each fit_multiple with every statement timed (debug_hops).
    hops = {}
    if not args.only or any(c[0].startswith("fm-") for c in CASES):
        for seg in (1, 2):
            log(f"fit_multiple, {seg} segment(s), debug_hops")
            hops[seg] = hopper_once(hopper_sql("fit_multiple", seg, iterations=min(E, 3), debug_hops=True), hops=True)

    # Paired runs (issue 29, items 2 and 3): short runs of the two sides of a ratio, alternated PAIRS
    # times (which side goes first alternates too), each iteration kept. A shared VM slows some
    # seconds of a run by 20-50% and speeds none up, in spells longer than one of the cases above:
    # a spell fell on one side of a ratio in one of three runs and moved it by 10-25%, where short
    # alternated runs pooled read within 1.5% of each other twice (2026-11-29).
    paired = {}
    if not args.only or "pairs" in args.only.split(","):
        for opt, torch_opt, name in ((SGD, "sgd", "SGD+momentum"), (ADAM, "adam", "Adam")):
            hopper_once(hopper_sql("fit", 1, opt, iterations=1))  # the server's cache holds the table
            # Item 1: the whole call with its defaults against PyTorch's loop with the same metrics, s/epoch
            # of each run (the call's wall time over its iterations; PyTorch's mean epoch).
            for p in range(PAIRS):
                log(f"paired run {p + 1}/{PAIRS}: fit and PyTorch, {name}, {PAIR_CALL_EPOCHS} epochs")
                for side in (("fit", "torch") if p % 2 == 0 else ("torch", "fit")):
                    if side == "fit":
                        d = hopper_once(hopper_sql("fit", 1, opt, iterations=PAIR_CALL_EPOCHS))
                        seconds = d["call_seconds"] / d["num_iterations"]
                    else:
                        seconds = statistics.mean(python_case("torch", torch_opt, 1, PAIR_CALL_EPOCHS)()["epoch_seconds"])
                    paired.setdefault(f"call-{side}|{name}", []).append(seconds)
            def core_epochs():
                return core_case([opt], 1, PAIR_ITERATIONS)()["epoch_cpu_seconds"]

            def fit_iterations():
                d = hopper_once(hopper_sql("fit", 1, opt, iterations=PAIR_ITERATIONS))
                return [i["training_cpu"] for i in sorted(d["iterations"], key=lambda i: i["iteration"])]

            for p in range(PAIRS):
                log(f"paired run {p + 1}/{PAIRS}: core alone and fit, {name}")
                sides = {"core": core_epochs, "fit": fit_iterations}
                for side in (("core", "fit") if p % 2 == 0 else ("fit", "core")):
                    paired.setdefault(f"{side}|{name}", []).append(sides[side]())
        for p in range(PAIRS):
            log(f"paired run {p + 1}/{PAIRS}: fit_multiple on 1 and 2 segments")
            runs = {}
            for seg in ((1, 2) if p % 2 == 0 else (2, 1)):
                d = hopper_once(hopper_sql("fit_multiple", seg, iterations=PAIR_ITERATIONS, validation=False))
                runs[seg] = [i["training"] + i["hops"] for i in sorted(d["iterations"], key=lambda i: i["iteration"])]
            for seg in (1, 2):
                paired.setdefault(f"fm|{seg}", []).append(runs[seg])

    # Evaluation's share of an iteration: each call with metrics every iteration against the same call
    # with nothing to evaluate, R times interleaved (EVAL_CASES), on 1 and 2 segments.
    evaluation = {}
    if not args.only or "eval" in args.only.split(","):
        for r in range(R):
            for seg in (1, 2):
                for name, kind, settings, validation in EVAL_CASES:
                    log(f"evaluation run {r + 1}/{R}: {name}, {seg} segment(s)")
                    l0 = loadavg()[0]
                    d = hopper_once(hopper_sql(kind, seg, SGD if kind == "fit" else None, iterations=EVAL_ITERATIONS,
                                               evaluate_every=2, validation=validation, settings=settings,
                                               checkpoint_frequency=0))
                    d["load"] = (l0 + loadavg()[0]) / 2
                    evaluation.setdefault(f"{name}|{seg}", []).append(d)

    # The fixed cost of a hop: fit_multiple on 1,024 rows (4 buffers on 2 segments), where training a
    # model on a segment's 512 rows takes ~2 ms: once with every statement timed (debug_hops, which
    # keeps the two statements per hop), once as runs train without it (one group of processes per
    # iteration, src/pg/training/hop_workers.h).
    tiny = tiny_group = {}
    if not args.only or "tiny" in args.only.split(","):
        log("fixed cost of a hop: fit_multiple on 1,024 rows, debug_hops")
        tiny = hopper_once(hopper_sql("fit_multiple", 2, iterations=10, debug_hops=True, packed="fashion_tiny_packed_2",
                                      validation=False), hops=True)
        log("fixed cost of a hop: fit_multiple on 1,024 rows, one group of processes per iteration")
        tiny_group = hopper_once(hopper_sql("fit_multiple", 2, iterations=10, packed="fashion_tiny_packed_2",
                                            validation=False))

    # Scaling: per-iteration time as rows, configurations and segments grow, one factor at a time
    # around (60,000 rows, 4 configurations, 2 segments); 2 iterations each, metrics at the end.
    scaling = []
    points = [p for p in SCALING_POINTS if not args.quick or (p[0] <= 240 and p[1] <= 16)]
    if SCALING and (not args.only or "scaling" in args.only.split(",")):
        for rows_k, configs, seg in points:
            log(f"scaling: {rows_k}k rows, {configs} configurations, {seg} segment(s)")
            packed = "fashion_packed_%d" % seg if rows_k == 60 else f"fashion_x{rows_k // 60}_packed_{seg}"
            d = hopper_once(hopper_sql("fit_multiple", seg, iterations=2, packed=packed, mst="bench_mst" if configs == 4 else f"bench_mst_{configs}",
                                       validation=False))
            d.update({"rows": rows_k * 1000, "configs": configs, "segments": seg})
            scaling.append(d)

    # Profiles: a hopper fit backend and the core alone, same work (SGD, E epochs).
    profiles = {}
    perf_ok = args.profile and shutil.which("perf") and subprocess.run(
        ["perf", "stat", "-e", "instructions", "true"], capture_output=True).returncode == 0
    if args.profile and not perf_ok:
        log("perf is not usable here: no profiles (see bench/README.md for callgrind)")
    if perf_ok:
        log("profile: hopper fit backend (perf)")
        pf = os.path.join(args.work, "perf.fit.data")
        hopper_once(hopper_sql("fit", 1, SGD), perf=pf)
        log("profile: core alone (perf)")
        pc = os.path.join(args.work, "perf.core.data")
        subprocess.run(["perf", "record", "-q", "-F", "999", "-o", pc, "--", CORE, "--data", DATA, "--epochs", str(E),
                        "--compile", compile_params(SGD)], capture_output=True, check=True)

        profiles = {"hopper fit backend": categorize(pf), "core alone (whole process)": categorize(pc)}

    meta["load_end"] = loadavg()
    if perf_ok:
        profiles = {k: [v[0], v[1]] for k, v in profiles.items()}
    state = {"meta": meta, "gemm": gemm, "hops": {str(k): v for k, v in hops.items()}, "profiles": profiles,
             "evaluation": evaluation, "tiny": tiny, "tiny_group": tiny_group,
             "scaling": scaling, "paired": paired}
    with open(STATE, "w") as f:
        json.dump(state, f)
    return state, results


if args.report_only:
    with open(STATE) as f:
        state = json.load(f)
    results = []
    if os.path.exists(RESULTS):  # none when only cases apart from the table ran (BENCH_ONLY=eval)
        with open(RESULTS) as f:
            results = [json.loads(l) for l in f if l.strip()]
    E, R = state["meta"]["epochs"], state["meta"]["runs"]
    recordings = {"hopper fit backend": "perf.fit.data", "core alone (whole process)": "perf.core.data"}
    if state.get("profiles") and all(os.path.exists(os.path.join(args.work, f)) for f in recordings.values()):
        state["profiles"] = {k: list(categorize(os.path.join(args.work, f))) for k, f in recordings.items()}
    args.quick = state["meta"]["quick"]
else:
    state, results = measure()
meta, gemm, profiles = state["meta"], state["gemm"], state["profiles"]
evaluation = state.get("evaluation", {})  # "call|segments" -> runs
tiny, tiny_group, scaling = state.get("tiny", {}), state.get("tiny_group", {}), state.get("scaling", [])
hops = {int(k): v for k, v in state["hops"].items()}
# The limit: the fastest library's step on this machine (the core uses oneDNN for the large products
# where it is installed, so Eigen's own step is not the floor any more).
BEST = max((k for k in gemm if k.split("@")[0] == "step"), key=lambda k: gemm[k]["gflops"])
LIMIT = gemm[BEST]["gflops"]
FLOOR = gemm[BEST]["cpu_s"] * STEPS_PER_EPOCH  # GEMM seconds per model-epoch, one core
CASES = [c for c in CASES if any(x["case"] == c[0] for x in results)]

# ---------------------------------------------------------------------------------------------
# The report.


def med(xs):
    return statistics.median(xs) if xs else float("nan")


rows = []
versions = {}
for cid, section, system, threads, opt, models, fn in CASES:
    rs = [x for x in results if x["case"] == cid]
    if not rs:
        continue
    # s/epoch: for hopper fit the CALL a user makes (metrics every iteration included); PyTorch and
    # scikit-learn time their loops with the same per-epoch metrics (bench/python_mlp.py).
    per_run = [x.get("call_seconds_per_epoch", statistics.mean(x["epoch_seconds"])) for x in rs]
    train_s = med([statistics.mean(x["epoch_seconds"]) for x in rs])
    s = med(per_run)
    sps = models * SAMPLES / s
    gf = 6 * PARAMS * sps / 1e9
    for x in rs:
        versions.update(x.get("versions", {}))
    rows.append({
        "id": cid, "section": section, "system": system, "threads": threads, "opt": opt, "models": models,
        "s": s, "smin": min(per_run), "smax": max(per_run), "train_s": train_s,
        "cpu": med([x["cpu_seconds"] / x["num_iterations"] if "call_seconds_per_epoch" in x
                    else x["cpu_seconds_per_epoch"] for x in rs]),
        "sps": sps, "acc": med([x["test_accuracy"] for x in rs]), "rss": max(x["peak_rss_mb"] for x in rs),
        "private": max((x.get("private_peak_mb") or 0) for x in rs) if "private_peak_mb" in rs[0] else None,
        "gflops": gf, "frac": gf / (LIMIT * threads), "floor": FLOOR * models / threads,
        "load": statistics.mean(x["load"] for x in rs), "threads": threads, "runs": rs,
    })
by = {r["id"]: r for r in rows}

# Busy: something else ran. The load average counts the benchmark's own processes (one per thread of
# the row being measured, and it lags), so a row is disturbed only when its load exceeds that by far.
busy = any(r["load"] > r["threads"] + 0.75 for r in rows)

L = []
w = L.append
mode = f"quick mode: {E} epochs, {R} run(s)" if args.quick else f"{E} epochs, median of {R} runs"
w(f"# hopper benchmark: {meta['date']} on {meta['host']}")
w("")
w(f"- **Machine:** {meta['cpu']} (CPU family {meta.get('cpu_family', '?')}), {meta['cores']} cores, {meta['mem_gb']} GB RAM, Linux {meta['kernel']}")
w(f"- **Load average (1/5/15 min):** {' / '.join(f'{x:.2f}' for x in meta['load_start'])} at the start,"
  f" {' / '.join(f'{x:.2f}' for x in meta['load_end'])} at the end"
  + (" -- **a busy machine: wall-clock figures are inflated; the CPU s/epoch column is the better estimate of a"
     " quiet machine's time**" if busy else ""))
w(f"- **Commit:** {meta['commit'] or '?'}; {mode}")
w(f"- **PostgreSQL:** shared_buffers 1 GB, hopper.shared_buffer_cache_mb at its default; shared memory in"
  f" {meta.get('shared_memory_pages', '?')}")
w(f"- **Software:** {meta['postgres']}; {meta['gcc']}, -O3 -march=native; Eigen {meta['eigen']};"
  f" {', '.join(f'{k} {v}' for k, v in sorted(versions.items()) if k != 'sklearn_dtype')};"
  f" BLAS {meta['blas']}")
w(f"- **Task:** Fashion-MNIST, 60,000 training / 10,000 test images; MLP 784-128-10 (relu, softmax"
  f" cross-entropy, {PARAMS:,} parameters), float32, minibatch 256; SGD lr 0.01 momentum 0.9, Adam lr 0.001;"
  f" fit_multiple and \"4 models\": {', '.join(CONFIGS)}.")
w("")


def one_thread_twin(r):
    """The one-thread row of the same system and optimizer as a two-thread row."""
    base = r["id"].rsplit("-", 1)[0]
    twin = {"core-4x2": "core-4x1", "fm-2": "fm-1"}.get(r["id"], base + "-1")
    return by.get(twin)


def fmt_row(r):
    acc = f"{r['acc']:.4f}" + (" (best of 4)" if r["models"] > 1 else "")
    t = one_thread_twin(r) if r["section"] == 2 else None
    slower = " \u2020" if t and r["s"] > t["s"] else ""
    mem = f"{r['rss']:.0f}" + (f" ({r['private']:.0f})" if r["private"] is not None else "")
    return (f"| {r['system']} | {r['opt']} | {r['s']:.3f} ({r['smin']:.3f}-{r['smax']:.3f}){slower} | {r['cpu']:.3f} |"
            f" {r['sps']:,.0f} | {acc} | {mem} | {r['gflops']:.1f} | {100 * r['frac']:.0f}% | {r['load']:.1f} |")


header = ("| system | optimizer | s/epoch median (min-max) | CPU s/epoch | samples/s | test accuracy |"
          " peak RSS MB (private) | GFLOP/s | of GEMM limit | load |")
sep = "|---|---|---|---|---|---|---|---|---|---|"
for section, title in ((1, "One thread (one segment)"), (2, "Two threads (two segments)")):
    sec = [r for r in rows if r["section"] == section]
    if not sec:
        continue
    w(f"### {title}")
    w("")
    w(header)
    w(sep)
    for r in sec:
        w(fmt_row(r))
    w("")
    if section == 2 and any(one_thread_twin(r) and r["s"] > one_thread_twin(r)["s"] for r in sec):
        w("\u2020 slower with two threads than with one: the machine had no free core (see load); PyTorch's"
          " OpenMP threads spin while they wait for each other, which makes it far slower then. Compare CPU"
          " s/epoch with the one-thread row instead.")
        w("")
w(f"s/epoch: wall time of one pass over the 60,000 images by every model of the row (for 4 models: one"
  f" iteration), mean over the run's {E} epochs, median over runs. For hopper fit it is what the user"
  f" waits for: the wall time of `CALL hopper.fit(...)` with a validation table and every other setting at"
  f" its default (training loss and accuracy every iteration from the training passes, validation metrics"
  f" every iteration), over {E}; PyTorch and scikit-learn epochs include the same metrics (running training"
  f" loss and accuracy, test accuracy after every epoch: bench/python_mlp.py). The 4-model rows time"
  f" training alone (metrics once, at the end). CPU s/epoch: CPU time of all the"
  f" processes involved per epoch. samples/s = models x 60,000 / s/epoch. GFLOP/s = 6 x {PARAMS:,} x"
  f" samples/s (the issue's convention); of GEMM limit: that over {LIMIT:.1f} GFLOP/s per thread (below)."
  f" Peak RSS: /usr/bin/time's maximum resident set; for hopper the largest sum of VmHWM of the backend and"
  f" its parallel workers (includes the shared_buffers pages they touched), private (RssAnon) in parentheses."
  f" load: mean 1-minute load average during the row's runs.")
w("")

w("## The limit: float32 GEMM on the MLP's shapes")
w("")
w("hopper_gemm_bench (Google Benchmark, Eigen as the core calls it, -O3 -march=native, one thread),"
  " minibatch 256; GFLOP/s over CPU time, median of the repetitions.")
w("")
w("| product | shape | GFLOP/s | CPU us | wall us |")
w("|---|---|---|---|---|")
shapes = {"fwd1": "W1 128x784 * X 784x256", "fwd2": "W2 10x128 * A1 128x256", "bwd2w": "dZ2 10x256 * A1^T 256x128",
          "bwd2x": "W2^T 128x10 * dZ2 10x256", "bwd1w": "dZ1 128x256 * X^T 256x784",
          "step": "all five (one minibatch step)", "square1024": "1024x1024 * 1024x1024 (reference)"}
for k, v in shapes.items():
    if k in gemm:
        w(f"| {k} | {v} | {gemm[k]['gflops']:.1f} | {gemm[k]['cpu_s'] * 1e6:.0f} | {gemm[k]['real_s'] * 1e6:.0f} |")
w("")
backends = sorted({k.split("@")[1] for k in gemm if "@" in k})
if backends:
    w("The same products with the other GEMMs Debian packages (one thread each; GFLOP/s). The core multiplies"
      " products of at least 2^20 multiply-adds (fwd1, bwd1w) with oneDNN when it is built with libdnnl-dev"
      " (src/core/gemm.h), the small ones with Eigen:")
    w("")
    w("| product | Eigen | " + " | ".join(backends) + " |")
    w("|---|---|" + "---|" * len(backends))
    for k in ("fwd1", "fwd2", "bwd2w", "bwd2x", "bwd1w", "step"):
        if k in gemm:
            w(f"| {k} | {gemm[k]['gflops']:.1f} | " + " | ".join(
                f"{gemm[k + '@' + b]['gflops']:.1f}" if k + "@" + b in gemm else "-" for b in backends) + " |")
    w("")
w(f"**Limit: {LIMIT:.1f} GFLOP/s per thread** ({BEST.replace('@', ' with ')}). The products of one step are 409,088 FLOP per sample; the"
  f" issue's 6 x parameters counts 610,620 (it includes the input gradient W1^T dZ1, which nobody computes), so"
  f" \"of GEMM limit\" can exceed 100%. The exact floor: {STEPS_PER_EPOCH} steps x"
  f" {gemm[BEST]['cpu_s'] * 1e3:.3f} ms = **{FLOOR:.3f} s per model-epoch** on one core.")
w("")
w("| system | optimizer | s/epoch | GEMM floor | floor / s/epoch |")
w("|---|---|---|---|---|")
for r in rows:
    w(f"| {r['system']} | {r['opt']} | {r['s']:.3f} | {r['floor']:.3f} | {100 * r['floor'] / r['s']:.0f}% |")
w("")

# Where a hopper run's time goes, per iteration (medians over runs).
hop_rows = [r for r in rows if r["id"].startswith(("fit-", "fm-"))]
if hop_rows:
    w("## Where hopper's time goes (per iteration, medians over runs)")
    w("")
    w("| system | optimizer | iteration wall s (excl. evaluation) | training statements | hop statements |"
      " rest (setup, reading states, commit) | evaluation (once per run) | processes seen |")
    w("|---|---|---|---|---|---|---|---|")
    for r in hop_rows:
        rs = r["runs"]
        it = med([x["iteration_wall_seconds"] for x in rs])
        tr = med([x["train_seconds_per_iteration"] for x in rs])
        hp = med([x["hop_seconds_per_iteration"] for x in rs])
        w(f"| {r['system']} | {r['opt']} | {it:.3f} | {tr:.3f} | {hp:.4f} | {it - tr - hp:.3f} |"
          f" {med([x['evaluation_seconds'] for x in rs]):.3f} | 1 backend + {max(x['max_workers_seen'] for x in rs)}"
          f" worker(s) |")
    w("")
    w("s/epoch in the tables above is training + hop statements; the rest is what an iteration adds around them"
      " (creating and dropping the working tables, reading the states back, the commit).")
    w("")

# Model hopping.
fm1, fm2 = by.get("fm-1"), by.get("fm-2")
if fm1 or fm2:
    w("## Model hopping (fit_multiple, 4 configurations)")
    w("")
    w("| segments | iteration s (wall, excl. evaluation) | training statements s | hop statements s | hops / iteration |"
      " hop share | evaluation s (once) | CPU s/iteration |")
    w("|---|---|---|---|---|---|---|---|")
    for seg, r in ((1, fm1), (2, fm2)):
        if not r:
            continue
        rs = r["runs"]
        it = med([x["iteration_wall_seconds"] for x in rs])
        tr = med([x["train_seconds_per_iteration"] for x in rs])
        hp = med([x["hop_seconds_per_iteration"] for x in rs])
        w(f"| {seg} | {it:.3f} | {tr:.3f} | {hp:.4f} | {rs[0]['hops_per_iteration']} | {100 * hp / it:.1f}% |"
          f" {med([x['evaluation_seconds'] for x in rs]):.3f} | {r['cpu']:.3f} |")
    if fm1 and fm2:
        it1 = med([x["iteration_wall_seconds"] for x in fm1["runs"]])
        it2 = med([x["iteration_wall_seconds"] for x in fm2["runs"]])
        w("")
        w(f"**Scaling 1 -> 2 segments: {it1:.3f} s -> {it2:.3f} s per iteration = {it1 / it2:.2f}x** (wall);"
          f" on training + hop statements {fm1['s']:.3f} -> {fm2['s']:.3f} s = {fm1['s'] / fm2['s']:.2f}x;"
          f" CPU per iteration {fm1['cpu']:.3f} -> {fm2['cpu']:.3f} s, so on two idle cores at most"
          f" 2 x {fm1['cpu']:.3f} / {fm2['cpu']:.3f} = **{2 * fm1['cpu'] / fm2['cpu']:.2f}x** (the wall-clock"
          f" ratio needs two free cores: with the load above they were not).")
    for seg, d in hops.items():
        if not d.get("hops"):
            continue
        w("")
        w(f"Every statement of one debug_hops run, {seg} segment(s) ({d['num_iterations']} iterations;"
          f" the first hop of an iteration has no hop statement):")
        w("")
        w("| iteration | hop | training statement s | hop statement s |")
        w("|---|---|---|---|")
        for h in d["hops"]:
            hs = "-" if h["hop_seconds"] is None else f"{h['hop_seconds']:.4f}"
            w(f"| {h['iteration']} | {h['hop']} | {h['train_seconds']:.3f} | {hs} |")
    w("")

# Per-configuration accuracy of the multi-model rows.
multi = [r for r in rows if r["models"] > 1]
if multi:
    w("Test accuracy per configuration (median over runs):")
    w("")
    w("| system | " + " | ".join(CONFIGS) + " |")
    w("|---|" + "---|" * len(CONFIGS))
    for r in multi:
        vals = [med([x["per_model"].get(c, float("nan")) for x in r["runs"]]) for c in CONFIGS]
        w(f"| {r['system']} | " + " | ".join(f"{v:.4f}" for v in vals) + " |")
    w("")

# The fixed cost of a hop, on tiny data.
tiny_hop = tiny_train = None
if tiny.get("hops"):
    hs = [h for h in tiny["hops"] if h["hop_seconds"] is not None]
    tiny_hop = med([h["hop_seconds"] for h in hs])
    tiny_train = med([h["train_seconds"] for h in tiny["hops"]])
    w("## The fixed cost of a hop")
    w("")
    w(f"fit_multiple of the 4 configurations on 1,024 rows (4 buffers, 2 segments), {tiny['num_iterations']}"
      f" iterations, every statement timed (hopper.debug_hops): training a model on a segment's 512 rows is"
      f" ~2 ms of arithmetic, so these are mostly what a hop costs whatever the data.")
    w("")
    w("| statement | median ms | min ms | max ms |")
    w("|---|---|---|---|")
    tr = [h["train_seconds"] for h in tiny["hops"]]
    hp = [h["hop_seconds"] for h in hs]
    w(f"| training statement (2 segments train a model each, states handed over) | {1e3 * tiny_train:.1f} |"
      f" {1e3 * min(tr):.1f} | {1e3 * max(tr):.1f} |")
    w(f"| hop statement (models move to the next segment) | {1e3 * tiny_hop:.1f} | {1e3 * min(hp):.1f} |"
      f" {1e3 * max(hp):.1f} |")
    w(f"| whole iteration / hops per iteration | {1e3 * tiny['iteration_wall_seconds'] / tiny['hops_per_iteration']:.1f} |"
      f" | |")
    if tiny_group:
        g = tiny_group
        w(f"| without debug_hops: every hop of an iteration in one group of processes, per hop |"
          f" {1e3 * (g['training_seconds'] + g['hop_seconds']) / g['num_iterations'] / g['hops_per_iteration']:.1f} | | |")
        w(f"| without debug_hops: whole iteration / hops per iteration |"
          f" {1e3 * g['iteration_wall_seconds'] / g['hops_per_iteration']:.1f} | | |")
    w("")

# Evaluation's share of an iteration.
eval_share = {}  # (call, segments) -> median share
if evaluation and all("|" in k for k in evaluation):
    w("## Evaluation's share of an iteration")
    w("")
    w(f"Runs of {EVAL_ITERATIONS} iterations with metrics every second iteration, {R} of each, interleaved."
      " An iteration that evaluates is measured against the mean of the two around it that do not, in the"
      " same run, seconds apart (checkpoints only after the last iteration, so that writing them is not"
      " counted as evaluation): CPU -- the backend's and its parallel workers' between two iteration"
      " NOTICEs, which time-sharing the cores with other work does not inflate -- and wall time (from the"
      " NOTICEs: training, evaluation, observers), which it does. The validation table is Fashion-MNIST's"
      " 10,000 test images; exact training metrics evaluate the 60,000 training rows again (no validation"
      " table). *statements*: `hopper.overlap_evaluation = off`, a statement evaluates the models after the"
      " iteration's training (as before the group evaluated: one segment per process, parallel workers"
      " started for it); *group*: the default, the group of processes that trains the iteration evaluates"
      " each model as soon as its last visit is done. Evaluation s: the summary's evaluation_seconds per"
      " evaluating iteration, the run's own clock: the statement's time, or the time the group took after"
      " its last training (what it evaluated while models trained is not in it).")
    w("")
    w("| call | segments | CPU share: median (quartiles) | wall share: median (quartiles) | samples |"
      " iteration CPU s / wall s (not evaluating) | evaluation s | load |")
    w("|---|---|---|---|---|---|---|---|")

    def quartiles(xs):
        xs = sorted(xs)
        return statistics.quantiles(xs, n=4) if len(xs) > 1 else (xs * 3 if xs else [float("nan")] * 3)

    for seg in (1, 2):
        for name, kind, settings, validation in EVAL_CASES:
            rs = evaluation.get(f"{name}|{seg}")
            if not rs:
                continue
            cq = quartiles([x for r in rs for x in evaluation_shares(r, "iteration_cpu_seconds")])
            wq = quartiles([x for r in rs for x in evaluation_shares(r, "iteration_seconds")])
            n = sum(len(evaluation_shares(r, "iteration_cpu_seconds")) for r in rs)
            plain_wall = med([t for r in rs for t in r["iteration_seconds"][2::2]])
            plain_cpu = med([t for r in rs for t in (r.get("iteration_cpu_seconds") or [])[2::2] if t is not None])
            evaluated = (EVAL_ITERATIONS + 1) // 2 if EVAL_ITERATIONS % 2 else EVAL_ITERATIONS // 2
            ev = med([x["evaluation_seconds"] / evaluated for x in rs])
            eval_share[(name, seg)] = cq[1]
            w(f"| {name} | {seg} | {100 * cq[1]:+.1f}% ({100 * cq[0]:+.1f} .. {100 * cq[2]:+.1f}) |"
              f" {100 * wq[1]:+.1f}% ({100 * wq[0]:+.1f} .. {100 * wq[2]:+.1f}) | {n} |"
              f" {plain_cpu:.3f} / {plain_wall:.3f} | {ev:.3f} | {med([x['load'] for x in rs]):.1f} |")
    w("")

# Scaling.
model = None
if scaling:
    import numpy as np
    w("## Scaling: per-iteration time as rows, configurations and segments grow")
    w("")
    w("fit_multiple, 2 iterations per point, metrics once at the end (not counted); rows replicate"
      " Fashion-MNIST's 60,000 training images. Every combination of 60,000/600,000 rows, 4/16 configurations"
      " and 1/2 segments, then 240,000 rows, 32 configurations and 4 segments one at a time;"
      f" this machine has {meta['cores']} cores, so more segments than cores only add hops.")
    w("")
    w("| rows | configurations | segments | s / iteration | training statements | hop statements | hops |"
      " model-rows / s |")
    w("|---|---|---|---|---|---|---|---|")
    X, Y = [], []
    for d in scaling:
        it = d["iteration_wall_seconds"]
        w(f"| {d['rows']:,} | {d['configs']} | {d['segments']} | {it:.3f} | {d['train_seconds_per_iteration']:.3f} |"
          f" {d['hop_seconds_per_iteration']:.4f} | {d['hops_per_iteration']} |"
          f" {d['rows'] * d['configs'] / it:,.0f} |")
        busy_procs = min(d["segments"], meta["cores"], d["configs"])
        X.append([d["rows"] * d["configs"] / busy_procs, d["hops_per_iteration"], 1.0])
        Y.append(it)
    w("")
    # What a second segment buys at each size: the same rows and configurations on 1 and on 2.
    by_point = {(d["rows"], d["configs"], d["segments"]): d["iteration_wall_seconds"] for d in scaling}
    pairs = [(r, c) for (r, c, sg) in by_point if sg == 1 and (r, c, 2) in by_point]
    if pairs:
        w("1 -> 2 segments: " + "; ".join(
            f"{r:,} rows x {c} configurations {by_point[(r, c, 1)] / by_point[(r, c, 2)]:.2f}x"
            for r, c in sorted(pairs)) + ".")
    coef, *_ = np.linalg.lstsq(np.array(X), np.array(Y), rcond=None)
    per_row, per_hop, per_iter = (float(c) for c in coef)
    pred = np.array(X) @ coef
    worst = max(abs(p - y) / y for p, y in zip(pred, Y))
    model = (per_row, per_hop, per_iter)
    w("")
    w(f"**Cost model** (least squares over these points): s / iteration = {per_row * 1e6:.3f} us x model-rows per"
      f" busy core + {per_hop * 1e3:.1f} ms x hops + {per_iter * 1e3:.0f} ms, where model-rows per busy core ="
      f" rows x configurations / min(segments, cores, configurations); largest error on the points"
      f" {100 * worst:.0f}%.")
    big_rows, cfg, seg = 6_000_000, 4, 2
    hops_big = next((d["hops_per_iteration"] for d in scaling if d["configs"] == cfg and d["segments"] == seg), 4)
    t_rows = per_row * big_rows * cfg / min(seg, meta["cores"], cfg)
    t_hops = per_hop * hops_big
    total = t_rows + t_hops + per_iter
    w(f"At 100x the data (6,000,000 rows, {cfg} configurations, {seg} segments) it predicts {total:.0f} s per"
      f" iteration: {100 * t_rows / total:.1f}% arithmetic over rows, {100 * t_hops / total:.2f}% hops,"
      f" {100 * per_iter / total:.2f}% per-iteration overhead -- the time goes to the training arithmetic, so"
      f" what pays at that size is more cores (segments) and faster products, not cheaper hops.")
    w("")

# Targets.
def verdict(ok):
    return "**met**" if ok else "**missed**"


# First and steady iterations: fit's per-iteration times (DEBUG1 timing lines) beside the core alone's
# per-epoch times, from the same interleaved runs.
fit_rows = [r for r in rows if r["id"].startswith("fit-") and r["runs"][0].get("iterations")]
first_steady = {}
if fit_rows and E >= 2:
    w("## First and steady iterations (fit, 1 segment)")
    w("")
    w("Per iteration of `CALL hopper.fit` (with its validation table, every setting at its default): the median"
      " of the runs' first iterations, and the median of all the runs' other iterations pooled (a shared VM"
      " slows some iterations by 20-50% and none down; a run's mean took such spells in whole, and the median"
      " of three such means read +11% to +20% over the core where 36-40 interleaved iterations each read"
      " -0.6% to +0.7%, 2026-11-29): the training part (what the core alone does; the validation pass it overlaps is counted with the"
      " evaluation; the 2026-11-29 runs and earlier counted it as training) and the whole iteration (with the validation metrics"
      " and the commit), wall and CPU seconds of the backend; the core alone's epochs alike (it generates"
      " oneDNN's kernels before its first, as the server does before it forks its backends). *Warm*: the server's buffer cache holds the table (as after preprocess or an earlier call; a new"
      " session); *cold*: emptied first (`hopper.shared_buffer_cache_reset()`, as after a restart), so the first"
      " iteration fetches every buffer from TOAST (a read-ahead worker helps when a core is idle; its CPU is not"
      " in the backend's).")
    w("")
    w("| system | optimizer | first: training wall / CPU | steady: training wall / CPU | first / steady (CPU) |"
      " first: whole iteration wall / CPU | steady: whole iteration wall / CPU | steady / core alone (CPU) | load |")
    w("|---|---|---|---|---|---|---|---|---|")

    def its(run, key):
        """(first, the others) of one run's iterations."""
        xs = [i[key] for i in sorted(run, key=lambda i: i["iteration"])]
        return xs[0], xs[1:]

    def first_steady_of(pairs):
        """The median of the runs' first iterations and of all their others, pooled."""
        return med([a for a, _ in pairs]), med([x for _, xs in pairs for x in xs])

    for r in fit_rows:
        c = next((x for x in rows if x["id"].startswith("core-") and x["opt"] == r["opt"]), None)
        core_first = core_steady = None
        if c:
            core_w = [its([{"iteration": k, "s": v} for k, v in enumerate(x["epoch_seconds"])], "s") for x in c["runs"]]
            core_c = [its([{"iteration": k, "s": v} for k, v in enumerate(x["epoch_cpu_seconds"])], "s")
                      for x in c["runs"] if "epoch_cpu_seconds" in x]
            (first_w, steady_w), (first_c, steady_c) = first_steady_of(core_w), first_steady_of(core_c)
            core_first, core_steady = (first_w, first_c), (steady_w, steady_c)
            w(f"| {c['system']} | {c['opt']} | {core_first[0]:.3f} / {core_first[1]:.3f} |"
              f" {core_steady[0]:.3f} / {core_steady[1]:.3f} | {core_first[1] / core_steady[1]:.3f} | | | |"
              f" {c['load']:.1f} |")
        for label, runs in (("warm", [x["iterations"] for x in r["runs"]]),
                            ("cold", [x["cold"]["iterations"] for x in r["runs"] if x.get("cold")])):
            if not runs:
                continue
            tw = [its(x, "training") for x in runs]
            tc = [its(x, "training_cpu") for x in runs]
            iw = [its(x, "wall") for x in runs]
            ic = [its(x, "cpu") for x in runs]
            f_tw, s_tw = first_steady_of(tw)
            f_tc, s_tc = first_steady_of(tc)
            f_iw, s_iw = first_steady_of(iw)
            f_ic, s_ic = first_steady_of(ic)
            vs_core = f"{s_tc / core_steady[1]:.3f}" if core_steady else ""
            first_steady[(r["opt"], label)] = {"first": f_tc, "steady": s_tc, "first_wall": f_tw, "steady_wall": s_tw,
                                               "core": core_steady}
            w(f"| hopper fit, {label} | {r['opt']} | {f_tw:.3f} / {f_tc:.3f} | {s_tw:.3f} / {s_tc:.3f} |"
              f" {f_tc / s_tc:.3f} | {f_iw:.3f} / {f_ic:.3f} | {s_iw:.3f} / {s_ic:.3f} | {vs_core} | {r['load']:.1f} |")
    w("")
    w("On a busy machine wall seconds wait for a core; CPU seconds do not, so the ratios are of CPU time. The"
      " whole iteration adds the validation metrics (10,000 rows), the checkpoint and the commit.")
    w("")

# Paired runs: pooled medians of the alternated short runs (measure()).
paired = state.get("paired") or {}


def spread(xs):
    """(median, lower quartile, upper quartile, count) of xs."""
    q = statistics.quantiles(xs, n=4) if len(xs) >= 2 else [xs[0]] * 3
    return med(xs), q[0], q[2], len(xs)


def pooled(runs, first=False):
    """spread() of the runs' first iterations (first) or of all their others."""
    return spread([r[0] for r in runs] if first else [x for r in runs for x in r[1:]])


if paired:
    pairs = len(next(iter(paired.values())))
    w("## Paired runs (issue 29, items 1, 2 and 3)")
    w("")
    w(f"The two sides of each ratio in short runs of {PAIR_ITERATIONS} iterations (epochs; {PAIR_CALL_EPOCHS} for the"
      f" call against PyTorch, whose rows are each run's s/epoch), alternated {pairs}"
      " times, the side that goes first alternating too; every iteration but each run's first pooled. A shared"
      " VM slows some seconds of a run by 20-50% and speeds none up, in spells longer than a run: one that falls"
      " on one side of a ratio in one of three runs moves it by 10-25%, and alternating short runs spreads the"
      " spells over both sides. The core alone and fit: CPU seconds of training (the core's epochs; fit's"
      " timing line, the overlapped validation pass left out); fit_multiple (4 configurations, no validation"
      " table): the wall seconds of each iteration's training and hops.")
    w("")
    w("| what | side | first iteration: median | other iterations: median (quartiles) | iterations | ratio of medians |")
    w("|---|---|---|---|---|---|")
    def paired_row(what, side, first, stats, count, ratio=""):
        m, q1, q3, _ = stats
        w(f"| {what} | {side} | {first} | {m:.3f} ({q1:.3f}-{q3:.3f}) | {count} | {ratio} |")

    for opt in ("SGD+momentum", "Adam"):
        c, f = paired.get(f"core|{opt}"), paired.get(f"fit|{opt}")
        if c and f:
            paired_row(f"{opt}, CPU s", "core alone", f"{pooled(c, True)[0]:.3f}", pooled(c), pooled(c)[3])
            paired_row(f"{opt}, CPU s", "fit, warm", f"{pooled(f, True)[0]:.3f}", pooled(f), pooled(f)[3],
                       f"{pooled(f)[0] / pooled(c)[0]:.3f} of the core")
    for opt in ("SGD+momentum", "Adam"):
        f, t = paired.get(f"call-fit|{opt}"), paired.get(f"call-torch|{opt}")
        if f and t:
            what = f"{opt}, s/epoch of {PAIR_CALL_EPOCHS}"
            paired_row(what, "PyTorch CPU, same loop and metrics", "", spread(t), f"{len(t)} runs")
            paired_row(what, "`CALL hopper.fit`, its defaults", "", spread(f), f"{len(f)} runs",
                       f"{med(t) / med(f):.2f}x faster")
    f1, f2 = paired.get("fm|1"), paired.get("fm|2")
    if f1 and f2:
        paired_row("fit_multiple, wall s", "1 segment", f"{pooled(f1, True)[0]:.3f}", pooled(f1), pooled(f1)[3])
        paired_row("fit_multiple, wall s", "2 segments", f"{pooled(f2, True)[0]:.3f}", pooled(f2), pooled(f2)[3],
                   f"{pooled(f1)[0] / pooled(f2)[0]:.2f}x faster")
    w("")

if paired or first_steady:
    w("## Targets (issue 29, items 1, 2 and 3)")
    w("")
    for opt in ("SGD+momentum", "Adam"):
        f, t = paired.get(f"call-fit|{opt}"), paired.get(f"call-torch|{opt}")
        if f and t:
            w(f"- paired runs, {opt}: `CALL hopper.fit` with its defaults ({PAIR_CALL_EPOCHS} epochs) >= 1.3x PyTorch:"
              f" {med(f):.3f} vs {med(t):.3f} s/epoch = {med(t) / med(f):.2f}x -- {verdict(med(t) / med(f) >= 1.3)}")
    for opt in ("SGD+momentum", "Adam"):
        c, f = paired.get(f"core|{opt}"), paired.get(f"fit|{opt}")
        if not (c and f):
            continue
        over = pooled(f)[0] / pooled(c)[0] - 1
        first = pooled(f, True)[0] / pooled(f)[0] - 1
        w(f"- paired runs, {opt}: steady iterations within 5% of the core alone: {pooled(f)[0]:.3f} vs"
          f" {pooled(c)[0]:.3f} CPU s, {100 * over:+.1f}% -- {verdict(over <= 0.05)}; the first iteration (warm"
          f" cache) within 10% of a steady one: {pooled(f, True)[0]:.3f} vs {pooled(f)[0]:.3f}, {100 * first:+.1f}%"
          f" -- {verdict(first <= 0.10)}")
    f1, f2 = paired.get("fm|1"), paired.get("fm|2")
    if f1 and f2:
        ratio = pooled(f1)[0] / pooled(f2)[0]
        w(f"- paired runs: fit_multiple on 2 segments >= 1.8x faster than on 1: {pooled(f1)[0]:.3f} / {pooled(f2)[0]:.3f}"
          f" s per iteration = {ratio:.2f}x -- {verdict(ratio >= 1.8)}")
    for opt in ("SGD+momentum", "Adam"):
        warm, cold = first_steady.get((opt, "warm")), first_steady.get((opt, "cold"))
        if not warm:
            continue
        if warm["core"]:
            over = warm["steady"] / warm["core"][1] - 1
            over_wall = warm["steady_wall"] / warm["core"][0] - 1
            w(f"- the {E}-epoch runs above, {opt}: steady iterations within 5% of the core alone: training {warm['steady']:.3f} vs"
              f" {warm['core'][1]:.3f} CPU s, {100 * over:+.1f}% -- {verdict(over <= 0.05)} (wall"
              f" {warm['steady_wall']:.3f} vs {warm['core'][0]:.3f} s, {100 * over_wall:+.1f}%)")
        over = warm["first"] / warm["steady"] - 1
        w(f"- the {E}-epoch runs above, {opt}: the first iteration within 10% of a steady one, warm cache: {warm['first']:.3f} vs"
          f" {warm['steady']:.3f} CPU s, {100 * over:+.1f}% -- {verdict(over <= 0.10)}"
          + (f"; cold cache: {cold['first']:.3f} vs {cold['steady']:.3f}, {100 * (cold['first'] / cold['steady'] - 1):+.1f}%"
             f" -- {verdict(cold['first'] / cold['steady'] - 1 <= 0.10)}" if cold else ""))
    w("")

w("## Targets (issue 15)")
w("")


for opt in ("SGD+momentum", "Adam"):
    f = next((r for r in rows if r["id"].startswith("fit-") and r["opt"] == opt), None)
    if not f:
        continue
    for other in ("torch", "sklearn"):
        o = next((r for r in rows if r["id"].startswith(other) and r["opt"] == opt and r["threads"] == 1), None)
        if not o:
            continue
        ratio = o["s"] / f["s"]
        dacc = 100 * (f["acc"] - o["acc"])
        w(f"- fit >= 1.3x faster than {o['system']} ({opt}, one thread, the call with its metrics):"
          f" {f['s']:.3f} vs {o['s']:.3f} s/epoch = {ratio:.2f}x -- {verdict(ratio >= 1.3)};"
          f" test accuracy {f['acc']:.4f} vs {o['acc']:.4f} ({dacc:+.2f} points, within 0.5:"
          f" {verdict(abs(dacc) <= 0.5)})")
    c = next((r for r in rows if r["id"].startswith("core-") and r["opt"] == opt), None)
    if c:
        over = f["train_s"] / c["s"] - 1
        call_over = f["s"] / c["s"] - 1
        w(f"- fit within 5% of the core alone ({opt}): training statements {f['train_s']:.3f} vs {c['s']:.3f}"
          f" s/epoch, {100 * over:+.1f}% -- {verdict(over <= 0.05)}; the whole call with its metrics"
          f" {100 * call_over:+.0f}%")
if fm1 and fm2:
    it1 = med([x["iteration_wall_seconds"] for x in fm1["runs"]])
    it2 = med([x["iteration_wall_seconds"] for x in fm2["runs"]])
    w(f"- fit_multiple 2 segments >= 1.8x faster than 1: {it1:.3f} / {it2:.3f} s per iteration ="
      f" {it1 / it2:.2f}x -- {verdict(it1 / it2 >= 1.8)}; CPU-bound estimate for two idle cores"
      f" {2 * fm1['cpu'] / fm2['cpu']:.2f}x (load during these rows {fm1['load']:.1f} / {fm2['load']:.1f})")
if tiny_hop is not None:
    w(f"- fixed cost of one hop under 10 ms (1,024 rows): hop statement {1e3 * tiny_hop:.1f} ms"
      f" -- {verdict(tiny_hop < 0.010)}; a whole hop (training statement + hop statement)"
      f" {1e3 * (tiny_hop + tiny_train):.1f} ms -- {verdict(tiny_hop + tiny_train < 0.010)}")
for (name, seg), share in sorted(eval_share.items(), key=lambda kv: (kv[0][1], kv[0][0])):
    if name.endswith("group") and "validation" in name:
        w(f"- metrics every iteration under 10% of an iteration ({name.split(',')[0]}, {seg} segment(s), CPU):"
          f" {100 * share:.1f}% -- {verdict(share < 0.10)}")
    elif name.endswith("group"):
        w(f"- exact training metrics <= 40% of an iteration ({seg} segment(s), CPU): {100 * share:.0f}%"
          f" -- {verdict(share <= 0.40)}")
if model:
    w(f"- scaling table with a fitted cost model: above ({len(scaling)} points)")
accs = [(r["system"], r["opt"], r["acc"]) for r in rows if r["models"] == 1]
if E < 10:
    w(f"- (accuracy figures are for {E} epochs)")
w("")

if profiles:
    w("## Profile (perf, same work: SGD, one thread)")
    w("")
    for name, (cats, top) in profiles.items():
        w(f"**{name}** -- share of samples:")
        w("")
        w("| where | % |")
        w("|---|---|")
        for c, v in sorted(cats.items(), key=lambda kv: -kv[1]):
            w(f"| {c} | {v:.1f} |")
        w("")
        w("Top symbols: " + "; ".join(f"{pct:.1f}% {sym} ({dso})" for pct, dso, sym in top[:8]))
        w("")

w("## How this was measured")
w("")
w("`bench/run.sh` (see bench/README.md): a private PostgreSQL tree with this build"
  " (test/private-install.sh), a throwaway cluster (test/cluster.sh; shared_buffers 1 GB, autovacuum off),"
  " Fashion-MNIST loaded with tools/load_idx and packed by hopper.preprocess (buffer_size 256, seed 1) once per"
  " segment count. hopper timings come from `<output>_summary`: s/epoch = (training_seconds + hop_seconds) /"
  " iterations, with metrics_compute_frequency = iterations so evaluation runs once, at the end, and is"
  " reported apart; hopper CPU is the postmaster's cutime+cstime over the run (backend and parallel workers),"
  " scaled by the share of the run's wall time spent in training and hop statements. Memory: bench/hopper_run.py"
  " samples /proc/PID/status of the backend and its parallel workers every 50 ms. The core alone"
  " (bench/core_alone.cpp) packs the images as preprocess does and calls the same Trainer::train_rows (rows"
  " reshuffled every pass, as fit does by default). PyTorch and scikit-learn (bench/python_mlp.py) reshuffle every epoch, as hopper's fit does by default"
  " (fit_params shuffle), and run under OMP/OPENBLAS/MKL_NUM_THREADS and torch.set_num_threads, with OpenBLAS's"
  " best kernel for the CPU's flags (bench/anchor.py).")
w("")

report = "\n".join(L)
os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
with open(args.out, "w") as f:
    f.write(report)
print(report)
log(f"report written to {args.out}")

#!/usr/bin/python3
"""The whole path from a table to a trained model (issue 29 item 6), hopper against PyTorch.

Called by bench/endtoend/run.sh with a running cluster (PGHOST/PGPORT/PGUSER/PGDATABASE) holding
Fashion-MNIST as bench/setup.sh loads it (fashion_train, fashion_test: id, label, class_name,
pixels real[] of 0-255). Each case runs RUNS times, interleaved (run 1 of every case, then run 2,
...), so that the machine's other work hits all alike; each step is timed from outside, as a user
waits for it:

  hopper        psql: hopper.preprocess of the training table, hopper.preprocess_validation of the
                test table, CALL hopper.fit for EPOCHS iterations with the test table as validation
                table; every argument at its default except those the data needs
                (normalizing_const 255, the architecture, compile and fit parameters)
  hopper-serial the same with max_parallel_workers_per_gather 0 for the two preprocess calls: packing
                in the backend alone, without the parallel workers that read and convert rows
                while it writes (src/pg/training/pack_buffers.cpp)
  hopper-base   the same calls to an earlier commit's hopper (--base, BENCH_E2E_BASE), in a
                cluster of its own loaded alike (bench/base.sh): before and after in one run
  PyTorch       /usr/bin/python3 bench/python_mlp.py torch --from-postgres FORMAT: Python's start
                and imports, both tables COPY'd out through psql and parsed with numpy
                (bench/anchor.py's copy_out), EPOCHS epochs of bench/run.sh's training loop
                (bench/python_mlp.py: rows reshuffled every epoch, running training loss and
                accuracy, test accuracy after every epoch); binary and text COPY, one thread, under
                bench/anchor.py's anchor_env (OpenBLAS's own kernel). torch-binary-2 (two threads)
                runs only when asked for (--only): on two cores shared with PostgreSQL and other
                work its threads wait for each other (64 s instead of 7 in a trial run)

The same model everywhere: MLP 784-128-10, relu, softmax cross-entropy, Adam lr 0.001, minibatch
256. The report compares hopper (the default case) with the fastest PyTorch row.
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
sys.path.insert(0, BENCH)
from anchor import anchor_env  # noqa: E402

ARCH = ('{"input_dim": 784, "layers": [{"units": 128, "activation": "relu"},'
        ' {"units": 10, "activation": "softmax"}]}')
COMPILE = "loss='categorical_crossentropy', optimizer='Adam(lr=0.001)', metrics=['accuracy']"


TICK = os.sysconf("SC_CLK_TCK")


# Where a case runs: this build's cluster (the environment's PGHOST, PGPORT, HOPPER_CLUSTER), or the
# base commit's (--base HOST:PORT:DIR, bench/base.sh).
TARGETS = {"new": None}


def reaped_cpu(target="new"):
    """CPU seconds of the cluster's processes that have exited (the postmaster's cutime + cstime):
    the backends of hopper's statements and of the anchor's COPY, with any parallel workers. The
    private cluster serves nobody else (bench/setup.sh)."""
    cluster = TARGETS[target][2] if TARGETS[target] else os.environ["HOPPER_CLUSTER"]
    with open(os.path.join(cluster, "data", "postmaster.pid")) as f:
        pm = int(f.readline())
    with open(f"/proc/{pm}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[13]) + int(fields[14])) / TICK, pm


def client_backends(pm):
    try:
        with open(f"/proc/{pm}/task/{pm}/children") as f:
            pids = f.read().split()
    except OSError:
        return 0
    n = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                c = f.read()
        except OSError:
            continue
        # A process exiting (its command line already gone) or exited but not yet reaped (Z) has not
        # been added to the postmaster's times.
        n += state == "Z" or not c or b" [local]" in c or c.startswith(b"postgres: parallel worker")
    return n


def cpu_now(target="new"):
    """CPU seconds of this process's waited-for children (psql, the anchor's Python and its psql)
    plus the cluster's exited processes, once the last client backend has gone (a backend exits
    just after its psql)."""
    end = time.time() + 10
    while True:
        server, pm = reaped_cpu(target)
        if client_backends(pm) == 0 or time.time() > end:
            break
        time.sleep(0.01)
    own = os.times()
    return own.children_user + own.children_system + server


def psql(sql, options="", target="new"):
    env = dict(os.environ, PGOPTIONS=options)
    if TARGETS[target]:
        env.update(PGHOST=TARGETS[target][0], PGPORT=TARGETS[target][1])
    return subprocess.run(["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql], check=True,
                          capture_output=True, text=True, env=env).stdout


def timed_psql(sql, options="", target="new"):
    """Wall seconds of one psql call, and CPU seconds of it and its backend."""
    cpu, start = cpu_now(target), time.perf_counter()
    psql(sql, options, target)
    wall = time.perf_counter() - start
    return wall, cpu_now(target) - cpu


def hopper(epochs, case="hopper", packing_options="", target="new"):
    psql("SET client_min_messages = warning; DROP TABLE IF EXISTS e2e_packed, e2e_packed_summary, e2e_test_packed,"
         " e2e_test_packed_summary, e2e_model, e2e_model_info, e2e_model_summary CASCADE", target=target)
    pack, pack_cpu = timed_psql("SELECT hopper.preprocess('fashion_train', 'e2e_packed', 'class_name', 'pixels',"
                                " normalizing_const => 255)", packing_options, target)
    pack_validation, pack_validation_cpu = timed_psql(
        "SELECT hopper.preprocess_validation('fashion_test', 'e2e_test_packed', 'class_name', 'pixels', 'e2e_packed')",
        packing_options, target)
    fit, fit_cpu = timed_psql(f"CALL hopper.fit('e2e_packed', 'e2e_model', '{ARCH}', $${COMPILE}$$, 'batch_size=256',"
                              f" {epochs}, validation_table => 'e2e_test_packed')", target=target)
    segments, training, accuracy = psql(
        "SELECT s.num_segments, m.training_seconds + m.hop_seconds, i.validation_metrics_final"
        " FROM e2e_packed_summary s, e2e_model_summary m, e2e_model_info i", target=target).strip().split("|")
    return dict(case=case, pack=pack, pack_validation=pack_validation, fit=fit,
                total=pack + pack_validation + fit, pack_cpu=pack_cpu, pack_validation_cpu=pack_validation_cpu,
                fit_cpu=fit_cpu, cpu=pack_cpu + pack_validation_cpu + fit_cpu, segments=int(segments),
                training=float(training),
                accuracy=float(accuracy))


def torch(epochs, fmt, threads):
    cpu, start = cpu_now(), time.perf_counter()
    out = subprocess.run(["/usr/bin/python3", os.path.join(BENCH, "python_mlp.py"), "torch", "--optimizer", "adam",
                          "--epochs", str(epochs), "--threads", str(threads), "--from-postgres", fmt],
                         check=True, capture_output=True, text=True, env=anchor_env(threads)).stdout
    total = time.perf_counter() - start
    cpu = cpu_now() - cpu
    r = json.loads(out)
    return dict(case=f"torch-{fmt}-{threads}", total=total, cpu=cpu, copy_parse=r["copy_parse_seconds"],
                train=sum(r["epoch_seconds"]), accuracy=r["test_accuracy"], blas=r["versions"]["blas"],
                torch=r["versions"]["torch"])


CASES = {
    "hopper": lambda e: hopper(e),
    # preprocess without parallel workers reading rows: the backend alone, as before they did.
    "hopper-serial": lambda e: hopper(e, "hopper-serial", "-c max_parallel_workers_per_gather=0"),
    # the base commit's hopper (--base), in its own cluster
    "hopper-base": lambda e: hopper(e, "hopper-base", target="base"),
    "torch-binary-1": lambda e: torch(e, "binary", 1),
    "torch-text-1": lambda e: torch(e, "text", 1),
    "torch-binary-2": lambda e: torch(e, "binary", 2),
}
LABELS = {
    "hopper": "hopper (preprocess + preprocess_validation + fit)",
    "hopper-serial": "hopper, packing in the backend alone (max_parallel_workers_per_gather 0 for preprocess)",
    "hopper-base": "hopper at the base commit",
    "torch-binary-1": "PyTorch, binary COPY, 1 thread",
    "torch-text-1": "PyTorch, text COPY, 1 thread",
    "torch-binary-2": "PyTorch, binary COPY, 2 threads",
}


def med(rows, key):
    v = [r[key] for r in rows]
    return f"{statistics.median(v):.2f} ({min(v):.2f}-{max(v):.2f})"


def load():
    return os.getloadavg()[0]


def report(results, args, loads):
    by = {c: [r for r in results if r["case"] == c] for c in CASES if any(r["case"] == c for r in results)}
    cpu = {}
    for line in open("/proc/cpuinfo"):
        k, _, v = line.partition(":")
        cpu.setdefault(k.strip(), v.strip())
    pg = psql("SHOW server_version").strip()
    lines = [f"# The whole path from a table to a trained model ({datetime.date.today()}, {platform.node()})", "",
             f"- machine: {cpu.get('model name')}, cpu family {cpu.get('cpu family')}, {os.cpu_count()} cores;"
             f" PostgreSQL {pg}; hopper commit {args.commit}",
             f"- Fashion-MNIST, 60,000 training and 10,000 test rows (pixels real[784]); MLP 784-128-10, Adam lr"
             f" 0.001, minibatch 256, {args.epochs} epochs, test accuracy after every epoch; {args.runs} runs per"
             f" case, interleaved; median (min-max) seconds",
             f"- load average (1 min) {loads[0]:.2f} at the start, {loads[-1]:.2f} at the end", ""]
    torch_rows = [c for c in by if not c.startswith("hopper")]
    if torch_rows:
        any_torch = by[torch_rows[0]][0]
        lines += [f"- PyTorch {any_torch['torch']} on {any_torch['blas']} (threadpoolctl; the kernel named by"
                  " bench/anchor.py from the CPU's flags)", ""]
    hopper_rows = [c for c in by if c.startswith("hopper")]
    if hopper_rows:
        lines += ["| hopper | preprocess | preprocess_validation | fit | whole path | CPU s | segments |"
                  " test accuracy |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]
        for c in hopper_rows:
            h = by[c]
            lines += [f"| {LABELS[c]} | {med(h, 'pack')} | {med(h, 'pack_validation')} | {med(h, 'fit')}"
                      f" (training statements {med(h, 'training')}) | {med(h, 'total')} | {med(h, 'cpu')} |"
                      f" {h[0]['segments']} | {statistics.median(r['accuracy'] for r in h):.4f} |",
                      f"| CPU s of each step | {med(h, 'pack_cpu')} | {med(h, 'pack_validation_cpu')} |"
                      f" {med(h, 'fit_cpu')} | | | | |"]
        lines.append("")
    if torch_rows:
        lines += ["| PyTorch | COPY out + parse | training (epochs) | whole path (with Python's start and imports)"
                  " | CPU s | test accuracy |", "| --- | --- | --- | --- | --- | --- |"]
        for c in torch_rows:
            t = by[c]
            lines.append(f"| {LABELS[c]} | {med(t, 'copy_parse')} | {med(t, 'train')} | {med(t, 'total')} |"
                         f" {med(t, 'cpu')} | {statistics.median(r['accuracy'] for r in t):.4f} |")
        lines.append("")
    if "hopper" in by and torch_rows:
        for key, what in (("total", "wall time"), ("cpu", "CPU time")):
            h_v = statistics.median(r[key] for r in by["hopper"])
            best = min(torch_rows, key=lambda c: statistics.median(r[key] for r in by[c]))
            t_v = statistics.median(r[key] for r in by[best])
            lines.append(f"- **{what}: PyTorch's fastest path ({LABELS[best]}: {t_v:.2f} s) / hopper's"
                         f" ({h_v:.2f} s) = {t_v / h_v:.2f}x** (above 1: hopper is faster)")
        if "hopper-base" in by:
            for key, what in (("total", "wall time"), ("cpu", "CPU time")):
                b_v = statistics.median(r[key] for r in by["hopper-base"])
                h_v = statistics.median(r[key] for r in by["hopper"])
                lines.append(f"- {what}: hopper at the base commit ({b_v:.2f} s) / hopper ({h_v:.2f} s) ="
                             f" {b_v / h_v:.2f}x")
        lines += ["", "CPU s: this process's children (psql; the anchor's Python and its psql) plus the cluster's"
                  " processes of the step (backends, parallel workers, the backend serving the anchor's COPY),"
                  " from the postmaster's reaped children. On a shared machine wall time includes waiting for a"
                  " core; CPU time is the better estimate of a quiet machine's wall time for one-process steps.",
                  ""]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--only", default="")
    ap.add_argument("--out", required=True)
    ap.add_argument("--raw", required=True, help="one JSON line per run is appended here")
    ap.add_argument("--commit", default="unknown")
    ap.add_argument("--base", default="", help="HOST:PORT:CLUSTER_DIR of the base commit's cluster")
    ap.add_argument("--base-commit", default="base")
    args = ap.parse_args()
    if args.base:
        TARGETS["base"] = args.base.split(":")
        LABELS["hopper-base"] = f"hopper at {args.base_commit} (base)"
    cases = [c for c in CASES if (c in args.only.split(",") if args.only else c != "torch-binary-2")]
    cases = [c for c in cases if c != "hopper-base" or args.base]
    results, loads = [], [load()]
    for run in range(args.runs):
        for c in cases:
            r = CASES[c](args.epochs)
            r["run"] = run + 1
            results.append(r)
            print(f"run {run + 1} {c}: {r['total']:.2f} s", file=sys.stderr)
            with open(args.raw, "a") as f:
                f.write(json.dumps(r) + "\n")
    loads.append(load())
    text = report(results, args, loads)
    with open(args.out, "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""One hopper training run (CALL hopper.fit or hopper.fit_multiple) in a fresh psql session against
the benchmark's private cluster, measured from outside. Prints one JSON object.

  hopper_run.py --output NAME --sql "SET ...; CALL hopper.fit(...);" [--hops]

Environment: PGHOST/PGPORT/PGUSER/PGDATABASE of the cluster and HOPPER_CLUSTER (its directory, for
postmaster.pid). The cluster must serve nobody else while this runs (bench/run.sh starts a private
one with autovacuum off), because processes are told apart only by their role:

* Time: from <output>_summary -- training_seconds (training statements; on plain PostgreSQL without
  hopper.debug_hops, the group of processes that trains every hop of an iteration), hop_seconds (hop
  statements; 0 for that group), evaluation_seconds, and the wall time of the CALL (start_training_time to
  end_training_time); per iteration: /num_iterations.
* Memory: every 50 ms the sampler lists the postmaster's children (/proc/PM/task/PM/children) and
  reads /proc/PID/status of the client backend ("postgres: USER DB ...") and of its parallel workers
  ("postgres: parallel worker for PID ..."): VmHWM (peak resident set of the process, including
  shared_buffers pages it touched) and RssAnon (private memory). peak_rss_mb is the largest sum of
  VmHWM over the processes alive at one sample; private_peak_mb the largest sum of RssAnon. The
  backend's VmHWM is read once more just before it exits, so a short-lived peak is not missed;
  a worker's last 50 ms may be.
* CPU: the postmaster's cutime + cstime (CPU time of children it has reaped) before the session
  and after its backend exited: the backend and every parallel worker of the run, exactly (to 10
  ms), whatever else runs on the machine. cpu_seconds_per_epoch scales it by the share of the wall
  time spent in training and hop statements (setup and the final evaluation excluded), an
  estimate of what one epoch costs on a quiet machine.
* Iterations: each iteration's wall time from its NOTICE (iteration_seconds; 3 significant digits) and,
  from the second on, its CPU time (iteration_cpu_seconds): the backend's between two NOTICEs
  (/proc/PID/schedstat) and its parallel workers', reaped by the postmaster by then.
* Per iteration: the run's DEBUG1 line "iteration i/N timing: ..." (src/pg/training/run.cpp, read at
  client_min_messages = debug1, set just before the CALL): wall, training, hop and evaluation seconds
  and the backend's CPU seconds, all of them and those of training (its parallel workers' and its
  read-ahead worker's CPU are not in it; cpu_seconds above has them all).
* --hops: the run had hopper.debug_hops on; also reads <output>_hops (each statement's time).
* --perf FILE: perf record of the backend (from the moment the sampler sees it until psql exits).
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

parser = argparse.ArgumentParser()
parser.add_argument("--output", required=True)
parser.add_argument("--sql", required=True)
parser.add_argument("--hops", action="store_true")
parser.add_argument("--perf", help="record a perf profile of the backend into this file")
args = parser.parse_args()

cluster = os.environ["HOPPER_CLUSTER"]
user = os.environ.get("PGUSER", "postgres")
db = os.environ["PGDATABASE"]
with open(os.path.join(cluster, "data", "postmaster.pid")) as f:
    pm = int(f.readline())
TICK = os.sysconf("SC_CLK_TCK")


def psql(sql):
    return subprocess.run(["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-c", sql], check=True,
                          capture_output=True, text=True).stdout


def children():
    try:
        with open(f"/proc/{pm}/task/{pm}/children") as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


def cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def status(pid):
    out = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in ("VmHWM", "VmRSS", "RssAnon"):
                    out[k] = int(v.split()[0]) / 1024.0  # kB -> MB
    except OSError:
        return None
    return out


def reaped_cpu():
    with open(f"/proc/{pm}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    # fields[0] is field 3 (state); cutime and cstime are fields 16 and 17.
    return (int(fields[13]) + int(fields[14])) / TICK


backend_prefix = f"postgres: {user} {db} "


def group():
    """(backend pid, [worker pids]) of the run's session."""
    backend, workers = None, []
    for pid in children():
        c = cmdline(pid)
        if c.startswith(backend_prefix):
            backend = pid
        elif c.startswith("postgres: parallel worker for PID"):
            workers.append(pid)
    return backend, workers


def wait_for_no_backend(timeout=10.0):
    end = time.time() + timeout
    while time.time() < end:
        if group()[0] is None:
            return
        time.sleep(0.02)
    sys.exit("hopper_run: another client session is connected to the benchmark cluster")


psql(f"DROP TABLE IF EXISTS {args.output}, {args.output}_info, {args.output}_summary, {args.output}_hops")
wait_for_no_backend()
cpu_before = reaped_cpu()

peak = {"rss": 0.0, "anon": 0.0, "workers": 0, "backend_hwm": 0.0, "worker_hwm": 0.0}
hwm = {}
done = threading.Event()
perf = []


def sample():
    while not done.is_set():
        backend, workers = group()
        if args.perf and backend and not perf:
            perf.append(subprocess.Popen(["perf", "record", "-q", "-F", "999", "-o", args.perf, "-p", str(backend)],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        total_hwm = total_anon = 0.0
        for pid in ([backend] if backend else []) + workers:
            s = status(pid)
            if not s:
                continue
            hwm[pid] = max(hwm.get(pid, 0.0), s.get("VmHWM", 0.0))
            total_hwm += s.get("VmHWM", 0.0)
            total_anon += s.get("RssAnon", 0.0)
            key = "backend_hwm" if pid == backend else "worker_hwm"
            peak[key] = max(peak[key], s.get("VmHWM", 0.0))
        peak["rss"] = max(peak["rss"], total_hwm)
        peak["anon"] = max(peak["anon"], total_anon)
        peak["workers"] = max(peak["workers"], len(workers))
        done.wait(0.05)


sampler = threading.Thread(target=sample, daemon=True)
sampler.start()
# The last statement keeps the session (and its VmHWM) alive for one more sample.
t0 = time.perf_counter()
# The per-iteration timing lines are DEBUG1: asked for just before the CALL (or the last statement).
sql = re.sub(r"(;\s*)(CALL\s)", r"\1SET client_min_messages = debug1; \2", args.sql, count=1)
proc = subprocess.Popen(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", sql + "; SELECT pg_catalog.pg_sleep(0.12)"],
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
stderr_lines = []
# Each iteration's CPU: at its NOTICE, the backend's CPU time so far (/proc/PID/schedstat, ns) and, 50 ms
# later, the postmaster's reaped children's (the parallel workers of the iteration have exited before
# its NOTICE; the next iteration's are alive until it ends).
notices = []


def backend_cpu():
    backend = group()[0]
    try:
        with open(f"/proc/{backend}/schedstat") as f:
            return int(f.read().split()[0]) / 1e9
    except (OSError, TypeError):
        return None


def read_notices():
    for line in proc.stderr:
        stderr_lines.append(line)
        if re.match(r"NOTICE:  iteration \d+/\d+: ", line):
            own = backend_cpu()
            time.sleep(0.05)
            notices.append((own, reaped_cpu()))


reader = threading.Thread(target=read_notices, daemon=True)
reader.start()
proc.stdout.read()  # drained; what the report needs comes from the tables
proc.wait()
reader.join()
stderr_text = "".join(stderr_lines)
wall_client = time.perf_counter() - t0
done.set()
sampler.join()
for p in perf:
    p.send_signal(signal.SIGINT)
    p.wait()
if proc.returncode != 0:
    sys.exit("hopper_run: psql failed:\n" + stderr_text)
wait_for_no_backend()
time.sleep(0.05)
cpu = reaped_cpu() - cpu_before

row = json.loads(psql(
    f"SELECT pg_catalog.row_to_json(s) FROM (SELECT num_iterations, num_models, num_segments, hops_per_iteration,"
    f" training_seconds, hop_seconds, evaluation_seconds,"
    f" extract(epoch FROM end_training_time - start_training_time) AS wall_seconds FROM {args.output}_summary) s"))
acc = json.loads(psql(
    f"SELECT pg_catalog.json_agg(json_build_object('mst_key', mst_key, 'compile_params', compile_params,"
    f" 'test_accuracy', validation_metrics_final, 'test_loss', validation_loss_final, 'status', status)"
    f" ORDER BY mst_key) FROM {args.output}_info"))
its = row["num_iterations"]
# Each iteration's wall time as its NOTICE gives it ("iteration 3/8: 1.23 s, ..."; 3 significant digits):
# from the start of the iteration to its NOTICE, training, evaluation and observers included.
iteration_seconds = [float(m.group(2)) for m in re.finditer(r"NOTICE:  iteration (\d+)/\d+: ([0-9.]+) s", stderr_text)]
# From the second iteration on (the first also holds the call's setup): CPU between NOTICEs.
iteration_cpu = [None] + [(b[0] - a[0]) + (b[1] - a[1]) if a[0] is not None and b[0] is not None else None
                          for a, b in zip(notices, notices[1:])]
train_hop = row["training_seconds"] + row["hop_seconds"]
result = dict(row)
result.update({
    "epoch_seconds": [train_hop / its],  # one figure per run: the mean over its iterations
    "iteration_wall_seconds": (row["wall_seconds"] - row["evaluation_seconds"]) / its,
    "train_seconds_per_iteration": row["training_seconds"] / its,
    "hop_seconds_per_iteration": row["hop_seconds"] / its,
    "cpu_seconds": cpu,
    "cpu_seconds_per_epoch": cpu * train_hop / row["wall_seconds"] / its if row["wall_seconds"] > 0 else None,
    "wall_client_seconds": wall_client,
    "iteration_seconds": iteration_seconds,
    "iteration_cpu_seconds": iteration_cpu,
    "call_seconds": wall_client - 0.12,  # the statements before pg_sleep(0.12): the SETs and the CALL
    "peak_rss_mb": peak["rss"], "private_peak_mb": peak["anon"], "backend_hwm_mb": peak["backend_hwm"],
    "worker_hwm_mb": peak["worker_hwm"], "max_workers_seen": peak["workers"],
    "models": acc,
    "test_accuracy": max((m["test_accuracy"] for m in acc if m["test_accuracy"] is not None), default=None),
})
TIMING = re.compile(r"DEBUG:\s+(?:iteration )?(\d+)/\d+ timing: wall ([\d.e+-]+) s, training ([\d.e+-]+) s, hops ([\d.e+-]+) s,"
                    r" evaluation ([\d.e+-]+) s, backend CPU ([\d.e+-]+) s, of which training ([\d.e+-]+) s")
result["iterations"] = [
    {"iteration": int(m.group(1)), "wall": float(m.group(2)), "training": float(m.group(3)), "hops": float(m.group(4)),
     "evaluation": float(m.group(5)), "cpu": float(m.group(6)), "training_cpu": float(m.group(7))}
    for m in TIMING.finditer(stderr_text)]
if args.hops:
    # Per hop: the training statement's time (logged once per model placement, so take one) and the
    # hop statement's.
    result["hops"] = json.loads(psql(
        f"SELECT pg_catalog.json_agg(h ORDER BY iteration, hop) FROM (SELECT iteration, hop,"
        f" max(seconds) FILTER (WHERE statement IN ('train', 'wait')) AS train_seconds,"
        f" max(seconds) FILTER (WHERE statement = 'hop') AS hop_seconds"
        f" FROM {args.output}_hops GROUP BY iteration, hop) h"))
json.dump(result, sys.stdout)
print()

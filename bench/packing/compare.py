#!/usr/bin/python3
"""hopper.preprocess and preprocess_validation of Fashion-MNIST by two builds, side by side.

Called by bench/packing/run.sh with two running clusters holding Fashion-MNIST as bench/setup.sh
loads it: --base HOST:PORT:DIR (an earlier commit) and --new HOST:PORT:DIR (this build). Each case
keeps one psql session open (so a step's time is the statement's, not a connection's) and runs
both steps, then drops what they packed; cases take turns, run after run. Times per step: wall
seconds, the backend's CPU seconds (/proc/<pid>/stat) and its parallel workers' (the growth of the
postmaster's reaped children's CPU: each cluster serves nobody else). Every run's packed training
buffers are checked against the base's first run, byte for byte (md5 of their binary form).
"""
import argparse
import datetime
import os
import platform
import statistics
import subprocess
import sys
import time

TICK = os.sysconf("SC_CLK_TCK")
STEPS = {
    "preprocess": "SELECT hopper.preprocess('fashion_train', 'p', 'class_name', 'pixels', normalizing_const => 255)",
    "preprocess_validation":
        "SELECT hopper.preprocess_validation('fashion_test', 'pv', 'class_name', 'pixels', 'p')",
}
CHECKSUM = ("SELECT md5(string_agg(array_send(independent_var) || array_send(dependent_var), ''::bytea"
            " ORDER BY dist_key, buffer_id)) FROM p")


def stat(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK, (int(fields[13]) + int(fields[14])) / TICK


class Session:
    def __init__(self, where, setup):
        host, port, self.cluster = where.split(":")
        env = dict(os.environ, PGHOST=host, PGPORT=port, PGDATABASE="hopper_bench", PGUSER="postgres")
        with open(os.path.join(self.cluster, "data", "postmaster.pid")) as f:
            self.postmaster = int(f.readline())
        self.p = subprocess.Popen(["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1, env=env)
        self.pid = int(self.query("SELECT pg_backend_pid()")[0])
        for s in setup:
            self.query(s)

    def query(self, sql):
        self.p.stdin.write(sql + ";\n\\echo __done__\n")
        self.p.stdin.flush()
        out = []
        while True:
            line = self.p.stdout.readline()
            if not line:
                sys.exit(f"psql ended during: {sql}")
            if line.strip() == "__done__":
                return out
            out.append(line.rstrip("\n"))

    def timed(self, sql):
        backend, workers, start = stat(self.pid)[0], stat(self.postmaster)[1], time.perf_counter()
        self.query(sql)
        wall = time.perf_counter() - start
        return wall, stat(self.pid)[0] - backend, stat(self.postmaster)[1] - workers


def med(values):
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--base", required=True)
    ap.add_argument("--new", required=True)
    ap.add_argument("--base-commit", default="base")
    ap.add_argument("--commit", default="this build")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    cases = {
        f"{args.base_commit} (base)": Session(args.base, []),
        "this build, parallel workers (default)": Session(args.new, []),
        "this build, 1 worker": Session(args.new, ["SET max_parallel_workers_per_gather = 1"]),
        "this build, backend alone": Session(args.new, ["SET max_parallel_workers_per_gather = 0"]),
    }
    base_case = next(iter(cases))
    workers_default = cases["this build, parallel workers (default)"].query("SHOW max_parallel_workers_per_gather")[0]
    results = {(c, s): [] for c in cases for s in STEPS}
    reference, loads = None, [os.getloadavg()[0]]
    for run in range(args.runs):
        for c, session in cases.items():
            session.query("SET client_min_messages = warning")
            session.query("DROP TABLE IF EXISTS p, p_summary, pv, pv_summary")
            for s, sql in STEPS.items():
                results[(c, s)].append(session.timed(sql))
            checksum = session.query(CHECKSUM)[0]
            reference = reference or checksum
            if checksum != reference:
                sys.exit(f"{c} packed other bytes than {base_case} (run {run + 1})")
            session.query("DROP TABLE p, p_summary, pv, pv_summary")
        print(f"run {run + 1} done", file=sys.stderr)
    loads.append(os.getloadavg()[0])

    cpu = {}
    for line in open("/proc/cpuinfo"):
        k, _, v = line.partition(":")
        cpu.setdefault(k.strip(), v.strip())
    pg = cases[base_case].query("SHOW server_version")[0]
    lines = [f"# Packing Fashion-MNIST, {args.base_commit} and {args.commit} side by side"
             f" ({datetime.date.today()}, {platform.node()})", "",
             f"- machine: {cpu.get('model name')}, cpu family {cpu.get('cpu family')}, {os.cpu_count()} cores;"
             f" PostgreSQL {pg}",
             "- hopper.preprocess of fashion_train (60,000 rows of real[784], pglz-compressed inline; 235 buffers,"
             " 2 segments, 188 MB packed) and hopper.preprocess_validation of fashion_test (10,000 rows), as"
             " bench/endtoend calls them; two private clusters (shared_buffers 1 GB), one psql session per case,"
             f" cases interleaved; {args.runs} runs; median (min-max) seconds",
             f"- max_parallel_workers_per_gather {workers_default} (test/cluster.sh's)",
             f"- load average (1 min) {loads[0]:.2f} at the start, {loads[-1]:.2f} at the end",
             f"- every run's packed buffers identical to {base_case}'s (md5 {reference})", "",
             "| build | step | wall | backend CPU | workers' CPU | CPU |", "| --- | --- | --- | --- | --- | --- |"]
    for c in cases:
        for s in STEPS:
            r = results[(c, s)]
            lines.append(f"| {c} | {s} | {med([x[0] for x in r])} | {med([x[1] for x in r])} |"
                         f" {med([x[2] for x in r])} | {med([x[1] + x[2] for x in r])} |")
    lines.append("")
    for s in STEPS:
        base = results[(base_case, s)]
        for c in list(cases)[1:]:
            new = results[(c, s)]
            wall = statistics.median(x[0] for x in base) / statistics.median(x[0] for x in new)
            cpu_ratio = (statistics.median(x[1] + x[2] for x in base) /
                         statistics.median(x[1] + x[2] for x in new))
            lines.append(f"- {s}, {c}: wall {wall:.2f}x, CPU {cpu_ratio:.2f}x faster than {base_case}")
    lines += ["", "CPU: the backend's own (utime + stime of its /proc/<pid>/stat) and its parallel workers' (the"
              " growth of the postmaster's cutime + cstime over the step: workers are reaped when they end)."
              " On a shared machine wall time includes waiting for a core.", ""]
    text = "\n".join(lines)
    with open(args.out, "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()

"""What every anchor (PyTorch, scikit-learn, numpy) in bench/ runs under, so it runs at its best.

anchor_env(threads): the environment for an anchor's command alone. Thread counts are pinned, and
OpenBLAS runs the best kernel this CPU's flags allow (openblas_kernel()):
- Some machines set OPENBLAS_CORETYPE=Haswell and OPENBLAS_L2_SIZE, forcing the older AVX2 kernel:
  PyTorch's MLP epoch took 0.28 s with them and 0.18 s without (issue 29, AMD EPYC family 25).
- OpenBLAS's own detection goes by the CPU model, and on a VM that reports only "Intel(R) Xeon(R)
  Processor" (family 6, AVX-512 with BF16) OpenBLAS 0.3.21 fell back to its SSE3 kernel (Prescott):
  float32 GEMM of the MLP's shapes at 30 GFLOP/s against 137 with SkylakeX or Cooperlake, and
  PyTorch's 5 epochs took 5.98 s (2026-11-29).
So the kernel is named from the flags in /proc/cpuinfo, here and only here (tests and hopper keep the
environment they were given). Shell scripts use `python3 bench/anchor.py env THREADS`.

blas_in_use(): inside the anchor, after numpy/torch loaded: the BLAS threadpoolctl sees, as
"openblas 0.3.21 SkylakeX pthreads". A machine with only Debian's reference BLAS (libblas3) runs
these anchors about 20x slower and threadpoolctl then lists no BLAS: the anchor refuses to run rather
than report a handicapped figure.
"""
import os

import sys

FORCED_KERNEL_VARS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
# OpenBLAS 0.3.21's x86-64 kernels, best first, with the CPU flags each needs.
OPENBLAS_KERNELS = (
    ("Cooperlake", {"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl", "avx512_bf16"}),
    ("SkylakeX", {"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"}),
    ("Haswell", {"avx2", "fma"}),
    ("Sandybridge", {"avx"}),
)


def openblas_kernel():
    """The best OpenBLAS kernel this CPU's flags allow, or None (then OpenBLAS detects it itself)."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((set(line.split(":", 1)[1].split()) for line in f if line.startswith("flags")), set())
    except OSError:
        return None
    return next((name for name, needs in OPENBLAS_KERNELS if needs <= flags), None)


def anchor_env(threads, base=None):
    env = dict(os.environ if base is None else base)
    for var in FORCED_KERNEL_VARS:
        env.pop(var, None)
    kernel = openblas_kernel()
    if kernel:
        env["OPENBLAS_CORETYPE"] = kernel
    for var in THREAD_VARS:
        env[var] = str(threads)
    return env


def blas_in_use():
    import threadpoolctl

    blas = [i for i in threadpoolctl.threadpool_info() if i.get("user_api") == "blas"]
    if not blas:
        raise SystemExit("no optimized BLAS is loaded (Debian's reference libblas3?): install "
                         "libopenblas0-pthread, an anchor on the reference BLAS is about 20x slower")
    kernel = openblas_kernel()
    if "OPENBLAS_L2_SIZE" in os.environ or os.environ.get("OPENBLAS_CORETYPE") != kernel:
        raise SystemExit("OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE differ from bench/anchor.py's anchor_env "
                         f"(kernel {kernel}): OpenBLAS would run another kernel than this CPU's best")
    return "; ".join(f"{i['internal_api']} {i.get('version')} {i.get('architecture')} {i.get('threading_layer')}"
                     for i in blas)


def copy_out(sql, fmt="binary"):
    """The rows of `sql` out of PostgreSQL the way an anchor's user gets them: `COPY (sql) TO STDOUT`
    through psql (PGHOST/PGPORT/PGDATABASE from the environment), parsed with numpy into one array
    per column: a real[]/float8[] column of equal widths as float32 [rows, width], an int4 column as
    int64 [rows]. fmt "binary" (COPY's binary format, read with strided views: no per-value work in
    Python) or "text" (COPY's text format, every number parsed by numpy.fromstring). Binary is the
    faster on Fashion-MNIST's pixels (bench/endtoend/run.sh reports both)."""
    import subprocess

    import numpy as np

    out = subprocess.run(["psql", "-X", "-q", "-c", f"COPY ({sql}) TO STDOUT (FORMAT {fmt})"], check=True,
                         capture_output=True).stdout
    return (_parse_binary if fmt == "binary" else _parse_text)(out, np)


def _parse_binary(out, np):
    # Header (19 bytes: signature, flags, extension length), rows, trailer (int16 -1). A row: its
    # field count (int16), then per field a length (int32) and the value. An array value: ndim,
    # hasnull, element type, then per dimension its size and lower bound, then a length (int32) and
    # the value per element. Every row is as long as the first (checked), so each column is a
    # strided view of the whole output.
    be = lambda at, size=4: int.from_bytes(out[at:at + size], "big", signed=True)
    fields, at = be(19, 2), 21
    layout = []  # per column: (offset in the row, kind, width)
    for _ in range(fields):
        size = be(at)
        if size < 0:
            raise SystemExit("anchor: a NULL in the first row")
        value = at + 4
        if size == 4:
            layout.append((value - 19, "int4", 1))
        elif size >= 20 and be(value) == 1 and be(value + 4) == 0 and be(value + 8) in (700, 701):
            width = be(value + 12)
            elem = 4 if be(value + 8) == 700 else 8
            if size != 20 + width * (4 + elem):
                raise SystemExit("anchor: an array with NULLs or of varying element sizes")
            layout.append((value + 20 + 4 - 19, ">f4" if elem == 4 else ">f8", width))
        else:
            raise SystemExit("anchor: only int4 columns and one-dimensional real[]/float8[] without NULLs")
        at = value + size
    row = at - 19
    rows, rest = divmod(len(out) - 19 - 2, row)
    # Every row the same length: its field count sits at the same place in each.
    if rest or not (np.ndarray((rows,), dtype=">i2", buffer=out, offset=19, strides=(row,)) == fields).all():
        raise SystemExit("anchor: rows of different lengths (arrays of different widths?)")
    # Copied by assignment into a new array: about ten times faster than astype() from a strided
    # big-endian view (numpy 1.24: 0.07 s against 0.7 s for Fashion-MNIST's 47 million pixels).
    columns = []
    for offset, kind, width in layout:
        if kind == "int4":
            view = np.ndarray((rows,), dtype=">i4", buffer=out, offset=19 + offset, strides=(row,))
            columns.append(np.empty((rows,), dtype=np.int64))
        else:
            view = np.ndarray((rows, width), dtype=kind, buffer=out, offset=19 + offset,
                              strides=(row, 4 + int(kind[-1])))
            columns.append(np.empty((rows, width), dtype=np.float32))
        columns[-1][...] = view
    return columns


def _parse_text(out, np):
    # Columns are separated by tabs, rows end in newlines, an array is {v,v,...}: with the braces,
    # commas, tabs and newlines made spaces the whole output is one list of numbers for
    # numpy.fromstring (as float32: an int4 column's values are exact up to 2^24), cut into columns
    # by the first row's layout.
    first = out[:out.index(b"\n")].split(b"\t")
    widths = [f.count(b",") + 1 if f.startswith(b"{") else 0 for f in first]
    rows = out.count(b"\n")
    values = np.fromstring(out.translate(bytes.maketrans(b"{},\t\n", b"     ")), dtype=np.float32, sep=" ")
    per_row = sum(max(w, 1) for w in widths)
    if values.size != rows * per_row:
        raise SystemExit("anchor: rows of different widths, or values that are not numbers")
    values = values.reshape(rows, per_row)
    columns, at = [], 0
    for w in widths:
        if w:
            columns.append(values[:, at:at + w].copy())
        else:
            columns.append(values[:, at].astype(np.int64))
        at += max(w, 1)
    return columns


if __name__ == "__main__" and len(sys.argv) == 3 and sys.argv[1] == "env":
    # `env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $(python3 bench/anchor.py env 1) COMMAND` in shell
    # scripts: the variables anchor_env sets, as VAR=value words.
    base = {k: v for k, v in os.environ.items() if k not in FORCED_KERNEL_VARS}
    print(" ".join(f"{k}={v}" for k, v in anchor_env(int(sys.argv[2]), base).items() if base.get(k) != v))

"""What every anchor (PyTorch, scikit-learn, numpy) in bench/ runs under, so it runs at its best.

anchor_env(threads): the environment for an anchor's command alone. These machines set
OPENBLAS_CORETYPE=Haswell and OPENBLAS_L2_SIZE, which force OpenBLAS's older AVX2 kernel: PyTorch's
MLP epoch took 0.28 s with them and 0.18 s without (issue 29), so they are removed here and only
here (tests and hopper keep the environment they were given). Thread counts are pinned.

blas_in_use(): inside the anchor, after numpy/torch loaded: the BLAS threadpoolctl sees, as
"openblas 0.3.21 SkylakeX pthreads". A machine with only Debian's reference BLAS (libblas3) runs
these anchors about 20x slower and threadpoolctl then lists no BLAS: the anchor refuses to run rather
than report a handicapped figure.
"""
import os

FORCED_KERNEL_VARS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def anchor_env(threads, base=None):
    env = dict(os.environ if base is None else base)
    for var in FORCED_KERNEL_VARS:
        env.pop(var, None)
    for var in THREAD_VARS:
        env[var] = str(threads)
    return env


def blas_in_use():
    import threadpoolctl

    blas = [i for i in threadpoolctl.threadpool_info() if i.get("user_api") == "blas"]
    if not blas:
        raise SystemExit("no optimized BLAS is loaded (Debian's reference libblas3?): install "
                         "libopenblas0-pthread, an anchor on the reference BLAS is about 20x slower")
    forced = [v for v in FORCED_KERNEL_VARS if v in os.environ]
    if forced:
        raise SystemExit(f"{', '.join(forced)} set: OpenBLAS would run a forced kernel; run the anchor under "
                         "bench/anchor.py's anchor_env")
    return "; ".join(f"{i['internal_api']} {i.get('version')} {i.get('architecture')} {i.get('threading_layer')}"
                     for i in blas)

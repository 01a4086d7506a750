#!/usr/bin/python3
"""The benchmark's MLP (784-128-10, relu, softmax cross-entropy, float32, minibatch 256) trained on
Fashion-MNIST with PyTorch or scikit-learn, one run per process (bench/run.sh runs this under
/usr/bin/time for the peak RSS). Prints one JSON object:
  {"system", "optimizer", "threads", "epochs", "params", "samples_per_epoch",
   "epoch_seconds": [...], "epoch_cpu_seconds": [...], "test_accuracy", "test_loss", "versions"}

  python_mlp.py torch|sklearn --optimizer sgd|adam [--epochs 10] [--threads 1] [--data DIR] [--no-metrics]
                [--lr LR] [--momentum M] [--hidden UNITS] [--batch-size 256] [--seed 1]
                [--from-postgres binary|text]

Each epoch does what a user's training loop does, like hopper's fit with a validation table and its
defaults: the training loss and accuracy as a running mean over the epoch's minibatches (Keras'
and PyTorch's usual report), then the loss and accuracy on the 10,000 test images; both are inside
the timed epoch ("train_loss", "train_accuracy", "test_accuracy_per_epoch" in the output).
--no-metrics times the bare training loop (the figures of bench runs before issue 15).
--from-postgres reads the images from tables fashion_train and fashion_test (bench/setup.sh: id,
label, class_name, pixels real[] of 0-255) of the database psql connects to instead of the idx
files, through COPY ... TO STDOUT in that format parsed with numpy (bench/anchor.py's copy_out), and
reports the seconds it took ("copy_parse_seconds"): the whole path from data in PostgreSQL
(bench/endtoend/run.sh).

Both train with the same hyper-parameters as hopper in bench/run.sh: SGD lr 0.01 momentum 0.9
(plain momentum, not Nesterov) or Adam lr 0.001 (betas 0.9/0.999), no weight decay, Glorot-uniform
style initialisation as each library does it, rows reshuffled every epoch (each library's
normal way; hopper shuffles once when packing). Thread counts are set before numpy/torch load
(OMP_NUM_THREADS, OPENBLAS_NUM_THREADS) and with torch.set_num_threads.
"""
import argparse
import gzip
import json
import os
import sys
import time

parser = argparse.ArgumentParser()
parser.add_argument("system", choices=["torch", "sklearn"])
parser.add_argument("--optimizer", choices=["sgd", "adam"], required=True)
parser.add_argument("--epochs", type=int, default=10)
parser.add_argument("--threads", type=int, default=1)
parser.add_argument("--batch-size", type=int, default=256)
parser.add_argument("--seed", type=int, default=1)
parser.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
parser.add_argument("--no-metrics", action="store_true", help="time the training loop alone")
parser.add_argument("--from-postgres", choices=["binary", "text"], help="read the images out of PostgreSQL")
# Other configurations (bench/shuffle's side-by-side accuracy per configuration); the defaults are
# bench/run.sh's: SGD lr 0.01 momentum 0.9, Adam lr 0.001, 128 hidden units.
parser.add_argument("--lr", type=float, help="learning rate (default: 0.01 for SGD, 0.001 for Adam)")
parser.add_argument("--momentum", type=float, default=0.9, help="SGD's momentum (plain, not Nesterov)")
parser.add_argument("--hidden", type=int, default=128, help="hidden units")
parser.add_argument("--bf16", action="store_true",
                    help="PyTorch only: CPU autocast to bfloat16 for the forward pass and loss (mixed precision)")
args = parser.parse_args()
METRICS = not args.no_metrics

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = str(args.threads)

import numpy as np  # noqa: E402  (after the thread settings)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from anchor import blas_in_use, copy_out  # noqa: E402

SGD_LR = args.lr if args.lr is not None else 0.01
ADAM_LR = args.lr if args.lr is not None else 0.001
MOMENTUM = args.momentum


def read_idx(images, labels):
    with gzip.open(images, "rb") as f:
        raw = f.read()
    n, rows, cols = (int.from_bytes(raw[i:i + 4], "big") for i in (4, 8, 12))
    x = (np.frombuffer(raw, dtype=np.uint8, offset=16).reshape(n, rows * cols).astype(np.float32) / np.float32(255.0))
    with gzip.open(labels, "rb") as f:
        y = np.frombuffer(f.read(), dtype=np.uint8, offset=8).astype(np.int64)
    return x, y


def read_table(table):
    x, y = copy_out(f"SELECT pixels, label FROM {table}", args.from_postgres)
    x /= np.float32(255.0)
    return x, y


copy_start = time.perf_counter()
if args.from_postgres:
    (x_train, y_train), (x_test, y_test) = read_table("fashion_train"), read_table("fashion_test")
else:
    x_train, y_train = read_idx(f"{args.data}/train-images-idx3-ubyte.gz", f"{args.data}/train-labels-idx1-ubyte.gz")
    x_test, y_test = read_idx(f"{args.data}/t10k-images-idx3-ubyte.gz", f"{args.data}/t10k-labels-idx1-ubyte.gz")
copy_parse_seconds = time.perf_counter() - copy_start
epoch_seconds, epoch_cpu = [], []
train_loss, train_acc, test_acc_per_epoch = [], [], []
versions = {"numpy": np.__version__, "blas": blas_in_use()}


def timed(fn):
    w, c = time.perf_counter(), time.process_time()
    fn()
    epoch_seconds.append(time.perf_counter() - w)
    epoch_cpu.append(time.process_time() - c)


if args.system == "torch":
    import torch

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    versions["torch"] = torch.__version__
    model = torch.nn.Sequential(torch.nn.Linear(784, args.hidden), torch.nn.ReLU(), torch.nn.Linear(args.hidden, 10))
    params = sum(p.numel() for p in model.parameters())
    if args.optimizer == "sgd":
        opt = torch.optim.SGD(model.parameters(), lr=SGD_LR, momentum=MOMENTUM)
    else:
        opt = torch.optim.Adam(model.parameters(), lr=ADAM_LR, betas=(0.9, 0.999), eps=1e-7)
    loss_fn = torch.nn.CrossEntropyLoss()
    xt, yt = torch.from_numpy(x_train), torch.from_numpy(y_train)
    gen = torch.Generator().manual_seed(args.seed)
    n = xt.shape[0]

    x_test_t, y_test_t = torch.from_numpy(x_test), torch.from_numpy(y_test)

    def epoch():
        order = torch.randperm(n, generator=gen)
        loss_sum = torch.zeros((), dtype=torch.float64)
        correct = torch.zeros((), dtype=torch.int64)
        for start in range(0, n, args.batch_size):
            idx = order[start:start + args.batch_size]
            opt.zero_grad(set_to_none=True)
            with torch.autocast(device_type="cpu", dtype=torch.bfloat16, enabled=args.bf16):
                logits = model(xt[idx])
                loss = loss_fn(logits, yt[idx])
            loss.backward()
            opt.step()
            if METRICS:  # accumulated as tensors: no synchronisation per step, as a careful user writes it
                with torch.no_grad():
                    loss_sum += loss.detach() * len(idx)
                    correct += (logits.argmax(1) == yt[idx]).sum()
        if METRICS:
            train_loss.append(float(loss_sum) / n)
            train_acc.append(float(correct) / n)
            with torch.no_grad():
                test_logits = model(x_test_t)
                test_acc_per_epoch.append(float((test_logits.argmax(1) == y_test_t).float().mean()))

    for _ in range(args.epochs):
        timed(epoch)
    with torch.no_grad():
        logits = model(torch.from_numpy(x_test))
        test_loss = float(loss_fn(logits, torch.from_numpy(y_test)))
        test_acc = float((logits.argmax(1) == torch.from_numpy(y_test)).float().mean())
else:
    import warnings

    import sklearn
    from sklearn.neural_network import MLPClassifier

    versions["sklearn"] = sklearn.__version__
    common = dict(hidden_layer_sizes=(args.hidden,), activation="relu", batch_size=args.batch_size, alpha=0.0,
                  shuffle=True, random_state=args.seed)
    if args.optimizer == "sgd":
        clf = MLPClassifier(solver="sgd", learning_rate_init=SGD_LR, momentum=MOMENTUM, nesterovs_momentum=False,
                            learning_rate="constant", **common)
    else:
        clf = MLPClassifier(solver="adam", learning_rate_init=ADAM_LR, beta_1=0.9, beta_2=0.999, epsilon=1e-7, **common)
    classes = np.arange(10)
    warnings.simplefilter("ignore")
    def epoch():  # partial_fit: exactly one shuffled pass over the data
        clf.partial_fit(x_train, y_train, classes=classes)
        if METRICS:
            # scikit-learn keeps the epoch's running loss itself (loss_curve_); accuracy as a user gets
            # it on the test images.
            train_loss.append(float(clf.loss_curve_[-1]))
            test_acc_per_epoch.append(float((clf.predict(x_test) == y_test).mean()))

    for _ in range(args.epochs):
        timed(epoch)
    params = sum(w.size for w in clf.coefs_) + sum(b.size for b in clf.intercepts_)
    dtype = str(clf.coefs_[0].dtype)
    versions["sklearn_dtype"] = dtype
    proba = clf.predict_proba(x_test)
    test_acc = float((proba.argmax(1) == y_test).mean())
    test_loss = float(-np.log(np.clip(proba[np.arange(len(y_test)), y_test], 1e-7, 1)).mean())

json.dump({"system": args.system, "optimizer": args.optimizer, "threads": args.threads, "epochs": args.epochs,
           "params": int(params), "samples_per_epoch": int(x_train.shape[0]), "epoch_seconds": epoch_seconds,
           "epoch_cpu_seconds": epoch_cpu, "test_accuracy": test_acc, "test_loss": test_loss,
           "metrics_per_epoch": METRICS, "train_loss": train_loss, "train_accuracy": train_acc,
           "test_accuracy_per_epoch": test_acc_per_epoch, "versions": versions,
           "source": "postgres-" + args.from_postgres if args.from_postgres else "idx",
           "copy_parse_seconds": copy_parse_seconds}, sys.stdout)
print()

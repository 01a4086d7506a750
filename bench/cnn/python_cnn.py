#!/usr/bin/python3
"""The Keras "simple convnet" trained on Fashion-MNIST with PyTorch, one run per process
(bench/cnn/run.sh runs it under /usr/bin/time for the peak RSS). Prints one JSON object:
  {"system", "threads", "epochs", "params", "samples_per_epoch", "epoch_seconds": [...],
   "epoch_cpu_seconds": [...], "test_accuracy": [...per epoch], "test_loss", "versions"}

  python_cnn.py [--epochs 10] [--threads 1] [--batch-size 128] [--data DIR]

The network of bench/cnn/run.sh (and of keras.io's "Simple MNIST convnet"): 28x28x1 -> Conv2D 32
3x3 relu -> MaxPooling 2 -> Conv2D 64 3x3 relu -> MaxPooling 2 -> Flatten -> Dropout 0.5 -> Dense
10 softmax, float32, minibatch 128, Adam lr 0.001 (betas 0.9/0.999, epsilon 1e-7 as in Keras).
Data order as in bench/python_mlp.py: rows reshuffled every epoch (PyTorch's normal way; hopper
shuffles once when packing). PyTorch initialises its own way (kaiming-uniform with a = sqrt(5));
hopper, given the Keras JSON, uses Keras' glorot-uniform. Test accuracy is measured after every
epoch, outside the timed part (model.eval(): no dropout).
"""
import argparse
import gzip
import json
import os
import sys
import time

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=10)
parser.add_argument("--threads", type=int, default=1)
parser.add_argument("--batch-size", type=int, default=128)
parser.add_argument("--seed", type=int, default=1)
parser.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
args = parser.parse_args()

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = str(args.threads)

import numpy as np  # noqa: E402  (after the thread settings)
import torch  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from anchor import blas_in_use  # noqa: E402


def read_idx(images, labels):
    with gzip.open(images, "rb") as f:
        raw = f.read()
    n, rows, cols = (int.from_bytes(raw[i:i + 4], "big") for i in (4, 8, 12))
    x = (np.frombuffer(raw, dtype=np.uint8, offset=16).reshape(n, 1, rows, cols).astype(np.float32)
         / np.float32(255.0))
    with gzip.open(labels, "rb") as f:
        y = np.frombuffer(f.read(), dtype=np.uint8, offset=8).astype(np.int64)
    return torch.from_numpy(x), torch.from_numpy(y)


x_train, y_train = read_idx(f"{args.data}/train-images-idx3-ubyte.gz", f"{args.data}/train-labels-idx1-ubyte.gz")
x_test, y_test = read_idx(f"{args.data}/t10k-images-idx3-ubyte.gz", f"{args.data}/t10k-labels-idx1-ubyte.gz")

torch.set_num_threads(args.threads)
torch.manual_seed(args.seed)
nn = torch.nn
model = nn.Sequential(nn.Conv2d(1, 32, 3), nn.ReLU(), nn.MaxPool2d(2),
                      nn.Conv2d(32, 64, 3), nn.ReLU(), nn.MaxPool2d(2),
                      nn.Flatten(), nn.Dropout(0.5), nn.Linear(5 * 5 * 64, 10))
params = sum(p.numel() for p in model.parameters())
opt = torch.optim.Adam(model.parameters(), lr=0.001, betas=(0.9, 0.999), eps=1e-7)
loss_fn = nn.CrossEntropyLoss()
gen = torch.Generator().manual_seed(args.seed)
n = x_train.shape[0]
epoch_seconds, epoch_cpu, accuracy = [], [], []
test_loss = None
for _ in range(args.epochs):
    w, c = time.perf_counter(), time.process_time()
    model.train()
    order = torch.randperm(n, generator=gen)
    for start in range(0, n, args.batch_size):
        idx = order[start:start + args.batch_size]
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x_train[idx]), y_train[idx])
        loss.backward()
        opt.step()
    epoch_seconds.append(time.perf_counter() - w)
    epoch_cpu.append(time.process_time() - c)
    model.eval()
    with torch.no_grad():
        logits = torch.cat([model(x_test[i:i + 1000]) for i in range(0, x_test.shape[0], 1000)])
        test_loss = float(loss_fn(logits, y_test))
        accuracy.append(float((logits.argmax(1) == y_test).float().mean()))
    print(f"epoch {len(accuracy)}: {epoch_seconds[-1]:.1f} s, test accuracy {accuracy[-1]:.4f}", file=sys.stderr,
          flush=True)

json.dump({"system": "torch", "threads": args.threads, "epochs": args.epochs, "params": int(params),
           "samples_per_epoch": int(n), "epoch_seconds": epoch_seconds, "epoch_cpu_seconds": epoch_cpu,
           "test_accuracy": accuracy, "test_loss": test_loss,
           "versions": {"torch": torch.__version__, "numpy": np.__version__, "blas": blas_in_use(),
                        "mkldnn": bool(torch.backends.mkldnn.is_available())}}, sys.stdout)
print()

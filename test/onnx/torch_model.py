"""A PyTorch model exported with torch.onnx.export, and its predictions, for test/scripts/onnx_roundtrip.sh.

Usage: python3 torch_model.py KIND OUT.onnx ROWS.json PRED.json
KIND mlp: Linear(4, 16), ReLU, Dropout, BatchNorm1d, Linear(16, 3), Softmax over [N, 4] rows.
KIND cnn: Conv2d(2, 4, 3, padding=1), ReLU, MaxPool2d(2), BatchNorm2d, Conv2d(4, 3, 2), Tanh, Flatten,
          Linear(12, 3), Softmax over NCHW [N, 2, 6, 6] images; ROWS.json holds hopper's rows of the
          same images, channels-last (HWC), which is what hopper.import_onnx's model takes.
Weights are seeded; batch-normalization statistics are made non-trivial by a few training-mode
passes. PRED.json: the model's outputs per row (eval mode).
"""
import json
import sys

import torch


def main():
    kind, out, rows_file, pred_file = sys.argv[1:5]
    torch.manual_seed(7)
    if kind == "mlp":
        model = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.ReLU(), torch.nn.Dropout(0.2),
                                    torch.nn.BatchNorm1d(16), torch.nn.Linear(16, 3), torch.nn.Softmax(dim=1))
        x = torch.randn(40, 4)
    else:
        model = torch.nn.Sequential(torch.nn.Conv2d(2, 4, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
                                    torch.nn.BatchNorm2d(4), torch.nn.Conv2d(4, 3, 2), torch.nn.Tanh(),
                                    torch.nn.Flatten(), torch.nn.Linear(12, 3), torch.nn.Softmax(dim=1))
        x = torch.randn(40, 2, 6, 6)
    model.train()
    with torch.no_grad():
        for _ in range(3):
            model(x * 2 + 0.5)
    model.eval()
    with torch.no_grad():
        pred = model(x)
    torch.onnx.export(model, x[:1], out, opset_version=13, input_names=["input"], output_names=["output"],
                      dynamic_axes={"input": {0: "N"}, "output": {0: "N"}})
    rows = x.permute(0, 2, 3, 1).reshape(x.shape[0], -1) if kind == "cnn" else x
    with open(rows_file, "w") as f:
        json.dump(rows.tolist(), f)
    with open(pred_file, "w") as f:
        json.dump(pred.tolist(), f)


if __name__ == "__main__":
    main()

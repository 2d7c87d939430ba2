#!/usr/bin/python3
"""Exports small torch models to ONNX with dynamic axes, with inputs and torch's outputs:
an MLP, a CNN, a transformer encoder layer, LSTM, GRU and RNN layers (and an LSTM of
hidden 512 that benchmarks/ort_compare times), and a scripted loop that iterates until it
converges (f64; it exports as one ONNX Loop whose condition depends on data).

    scripts/export_torch_models.py OUT_DIR

For each model NAME: OUT_DIR/NAME.onnx, and for each of its sizes K,
OUT_DIR/NAME.K.input<i>.npy and OUT_DIR/NAME.K.output<i>.npy (torch's results, f32;
f64 for the loop).
tests/models/torch_models_test.cc imports them with graphjit and compares;
benchmarks/ort_compare times the transformer layer beside ONNX Runtime. Needs Debian's
python3-torch (scripts/bootstrap.sh installs it), so it names /usr/bin/python3.
Exit status 2 (and one line on stderr) when torch is missing.
"""
import os
import sys

try:
    import numpy as np
    import torch
except ImportError as e:  # the caller skips, saying how to get it
    print(f"export_torch_models: {e} (install python3-torch: scripts/bootstrap.sh)",
          file=sys.stderr)
    sys.exit(2)


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.GELU(),
                                       torch.nn.Linear(64, 8), torch.nn.Tanh())

    def forward(self, x):
        return self.net(x)


class Cnn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.features = torch.nn.Sequential(
            torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
            torch.nn.MaxPool2d(2),
            torch.nn.Conv2d(8, 8, 3, padding=1, groups=8), torch.nn.BatchNorm2d(8),
            torch.nn.Hardswish(),
            torch.nn.Conv2d(8, 16, 1), torch.nn.ReLU())
        self.head = torch.nn.Linear(16, 10)

    def forward(self, x):
        y = self.features(x)
        y = torch.nn.functional.adaptive_avg_pool2d(y, 1).flatten(1)
        return torch.softmax(self.head(y), dim=-1)


def encoder_layer():
    # batch_first, as in user code; eval mode: dropout off.
    return torch.nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128,
                                            dropout=0.0, batch_first=True)


class Recurrent(torch.nn.Module):
    """A recurrent layer's every output: y, then h_n (and c_n for an LSTM)."""

    def __init__(self, layer):
        super().__init__()
        self.layer = layer

    def forward(self, x):
        y, state = self.layer(x)
        return (y, *state) if isinstance(state, tuple) else (y, state)


def lstm():  # two layers, both directions
    return Recurrent(torch.nn.LSTM(8, 16, num_layers=2, bidirectional=True, batch_first=True))


def lstm_h512():  # the size of a speech or text model's layer
    return Recurrent(torch.nn.LSTM(128, 512, batch_first=True))


def gru():
    return Recurrent(torch.nn.GRU(8, 16, batch_first=True))


def rnn():
    return Recurrent(torch.nn.RNN(8, 16, nonlinearity="relu", batch_first=True))


class Converge(torch.nn.Module):
    """The lecture's demo 3: y <- tanh(y @ W) until the largest squared change is below
    1e-12, at most 200 trips; returns y and the trip count. Scripted, so the loop exports
    as an ONNX Loop whose condition the body computes from data."""

    def __init__(self):
        super().__init__()
        g = torch.Generator().manual_seed(2)
        self.register_buffer("w", torch.randn(32, 32, generator=g, dtype=torch.float64)
                             * (0.5 / 32 ** 0.5))

    def forward(self, y):
        change = torch.ones((), dtype=y.dtype)
        trips = torch.zeros((), dtype=torch.long)
        while bool(change >= 1e-12) and bool(trips < 200):
            nxt = torch.tanh(y @ self.w)
            change = ((nxt - y) * (nxt - y)).max()
            y = nxt
            trips = trips + 1
        return y, trips


def converge():
    return torch.jit.script(Converge())


# name -> (model, input names, dynamic axes, example shapes per size[, dtype])
MODELS = {
    "mlp": (Mlp, ["x"], {"x": {0: "batch"}}, {"b1": [(1, 16)], "b5": [(5, 16)]}),
    "cnn": (Cnn, ["x"], {"x": {0: "batch", 2: "height", 3: "width"}},
            {"16x16": [(1, 3, 16, 16)], "2x24x20": [(2, 3, 24, 20)]}),
    "transformer": (encoder_layer, ["x"], {"x": {0: "batch", 1: "seq"}},
                    {"s16": [(1, 16, 64)], "s64": [(2, 64, 64)]}),
    "lstm": (lstm, ["x"], {"x": {0: "batch", 1: "time"}}, {"b1t5": [(1, 5, 8)], "b3t9": [(3, 9, 8)]}),
    "lstm_h512": (lstm_h512, ["x"], {"x": {0: "batch", 1: "time"}}, {"b1t64": [(1, 64, 128)]}),
    "gru": (gru, ["x"], {"x": {0: "batch", 1: "time"}}, {"b1t5": [(1, 5, 8)], "b3t9": [(3, 9, 8)]}),
    "rnn": (rnn, ["x"], {"x": {0: "batch", 1: "time"}}, {"b1t5": [(1, 5, 8)], "b3t9": [(3, 9, 8)]}),
    "converge": (converge, ["y"], {"y": {0: "batch"}}, {"b4": [(4, 32)], "b7": [(7, 32)]},
                 torch.float64),
}


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 1
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    torch.manual_seed(0)
    for name, (make, inputs, dynamic, sizes, *dtype) in MODELS.items():
        dtype = dtype[0] if dtype else torch.float32
        model = make().eval()
        for m in model.modules():  # non-trivial statistics, so a folded BatchNorm shows
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 2.0)
        first = next(iter(sizes.values()))
        example = tuple(torch.randn(*shape, dtype=dtype) for shape in first)
        # With gradients on, so the encoder layer exports as its ops rather than the fused
        # inference kernel torch has no ONNX form for.
        torch.onnx.export(model, example, os.path.join(out_dir, f"{name}.onnx"),
                          input_names=inputs, output_names=["y"],
                          dynamic_axes={**dynamic, "y": {0: "batch"}}, opset_version=17)
        with torch.no_grad():
            for size, shapes in sizes.items():
                args = tuple(torch.randn(*shape, dtype=dtype) for shape in shapes)
                outputs = model(*args)
                if isinstance(outputs, torch.Tensor):
                    outputs = (outputs,)
                for i, a in enumerate(args):
                    np.save(os.path.join(out_dir, f"{name}.{size}.input{i}.npy"), a.numpy())
                for i, o in enumerate(outputs):
                    np.save(os.path.join(out_dir, f"{name}.{size}.output{i}.npy"), o.numpy())
    return 0


if __name__ == "__main__":
    sys.exit(main())

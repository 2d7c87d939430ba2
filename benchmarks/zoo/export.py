#!/usr/bin/python3
"""Exports twelve torchvision CNNs to ONNX, with an input and torch's output for each.

    benchmarks/zoo/export.py OUT_DIR [--models a,b,...] [--batch 1,8]

For each model NAME: OUT_DIR/NAME.onnx (opset 17, input `x` with a dynamic batch `N`),
and for each batch B: OUT_DIR/NAME.n<B>.x.npy (f32 [B, 3, 224, 224], seeded) and
OUT_DIR/NAME.n<B>.y.npy (torch's output on it). Random weights from a fixed seed
(torchvision 0.14 has no reachable pretrained weights here), BatchNorm statistics drawn
away from 0/1 so a folded BatchNorm is not the identity. A model already exported is
kept. Needs Debian's python3-torchvision (scripts/bootstrap.sh installs it), so it names
/usr/bin/python3; exit status 2 and one line on stderr when it is missing.
"""
import argparse
import os
import sys

try:
    import numpy as np
    import torch
    import torchvision
except ImportError as e:  # the caller skips, saying how to get it
    print(f"zoo/export: {e} (install python3-torchvision: scripts/bootstrap.sh)",
          file=sys.stderr)
    sys.exit(2)

M = torchvision.models
# The twelve architectures of the zoo, in the order of the README's table.
MODELS = {
    "resnet18": lambda: M.resnet18(),
    "resnet50": lambda: M.resnet50(),
    "mobilenet_v2": lambda: M.mobilenet_v2(),
    "mobilenet_v3_small": lambda: M.mobilenet_v3_small(),
    "squeezenet1_1": lambda: M.squeezenet1_1(),
    "shufflenet_v2_x1_0": lambda: M.shufflenet_v2_x1_0(),
    "regnet_y_400mf": lambda: M.regnet_y_400mf(),
    "mnasnet0_5": lambda: M.mnasnet0_5(),
    "googlenet": lambda: M.googlenet(aux_logits=False, init_weights=True),
    "densenet121": lambda: M.densenet121(),
    "convnext_tiny": lambda: M.convnext_tiny(),
    "efficientnet_b0": lambda: M.efficientnet_b0(),
}


def export(name, out_dir, batches):
    path = os.path.join(out_dir, f"{name}.onnx")
    torch.manual_seed(0)
    model = MODELS[name]().eval()
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 2.0)
    if not os.path.exists(path):
        x = torch.randn(1, 3, 224, 224)
        with torch.no_grad():
            torch.onnx.export(model, x, path + ".tmp", opset_version=17, input_names=["x"],
                              output_names=["y"], dynamic_axes={"x": {0: "N"}, "y": {0: "N"}})
        os.replace(path + ".tmp", path)
    for b in batches:
        stem = os.path.join(out_dir, f"{name}.n{b}")
        if os.path.exists(stem + ".y.npy"):
            continue
        g = torch.Generator().manual_seed(1000 + b)
        x = torch.rand(b, 3, 224, 224, generator=g) * 2 - 1
        with torch.no_grad():
            y = model(x)
        np.save(stem + ".x.npy", x.numpy().astype(np.float32))
        np.save(stem + ".y.npy", y.numpy().astype(np.float32))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out_dir")
    parser.add_argument("--models", default=",".join(MODELS),
                        help="comma-separated names (default: all twelve)")
    parser.add_argument("--batch", default="1", help="comma-separated batch sizes")
    args = parser.parse_args()
    names = [n for n in args.models.split(",") if n]
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        print(f"zoo/export: unknown model(s) {', '.join(unknown)} (expected some of "
              f"{', '.join(MODELS)})", file=sys.stderr)
        return 1
    os.makedirs(args.out_dir, exist_ok=True)
    torch.set_num_threads(1)
    for name in names:
        export(name, args.out_dir, [int(b) for b in args.batch.split(",")])
        print(name, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

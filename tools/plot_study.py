#!/usr/bin/python3
"""Plots a graphjit-study --json file. With the policies section: per-step decode latency
for each shape policy (log scale, compile spikes visible) and a bar chart of compiles and
padding per policy. With the powerlaws section: lecture 4's power-law curves on log-log
axes with their fitted lines (L and L - E against N; mean estimation; nearest-neighbour
regression per dimension; the Zipf capacity and data curves).

Usage: /usr/bin/python3 tools/plot_study.py study.json study.png   one figure, every section
       /usr/bin/python3 tools/plot_study.py study.json DIR         DIR/policies.png and
                                                                    DIR/powerlaws.png
graphjit-study --plot DIR runs the second form on the JSON it writes to DIR/study.json.
Needs Debian's python3-matplotlib (apt-get install -y python3-matplotlib).
"""
import json
import os
import sys


def plot_policies(fig, ax1, ax2, policies):
    for p in policies:
        ms = [s * 1e3 for s in p["step_seconds"]]
        ax1.plot(range(1, len(ms) + 1), ms, label=p["policy"], linewidth=0.9)
    ax1.set_yscale("log")
    ax1.set_xlabel("decode step")
    ax1.set_ylabel("step latency (ms, log)")
    ax1.set_title("Per-step latency: compiles are the spikes")
    ax1.legend()
    names = [p["policy"] for p in policies]
    x = range(len(names))
    ax2.bar([i - 0.2 for i in x], [p["compiles"] for p in policies], width=0.4,
            label="compiles")
    ax2.set_yscale("log")
    ax2.set_ylabel("compiles (log)")
    ax3 = ax2.twinx()
    ax3.bar([i + 0.2 for i in x], [100 * p["padding_ratio"] for p in policies], width=0.4,
            color="tab:orange", label="padding %")
    ax3.set_ylabel("padding (% extra KV rows)")
    ax2.set_xticks(list(x))
    ax2.set_xticklabels(names)
    ax2.set_title("Compiles vs padding")


def fitted(curve):
    """The fitted line y = e^intercept x^slope at the curve's own x."""
    import math
    return [math.exp(curve["intercept"]) * x ** curve["slope"] for x in curve["x"]]


def curve_with_fit(ax, curve, label, color=None):
    points = ax.plot(curve["x"], curve["y"], "o", color=color,
                     label=f"{label}: slope {curve['slope']:.3f} "
                           f"(theory {curve['theory_slope']:.3f})")
    ax.plot(curve["x"], fitted(curve), "-", color=points[0].get_color(), linewidth=1)


def plot_powerlaws(axes, pl):
    ax = axes[0]
    points = pl["chinchilla"]["points"]
    ns = [p["n"] for p in points]
    ax.plot(ns, [p["loss"] for p in points], "o-", label="L = E + A N^-alpha (bends)")
    ax.plot(ns, [p["reducible"] for p in points], "s-",
            label=f"L - E (slope -{pl['chinchilla']['alpha']:g})")
    ax.axhline(pl["chinchilla"]["E"], color="gray", linestyle=":", linewidth=1, label="E")
    ax.set_title("Demo 1: the irreducible term")
    ax.set_xlabel("parameters N")
    ax.set_ylabel("loss (nats/token)")

    curve_with_fit(axes[1], pl["mean_estimation"], "MSE")
    axes[1].set_title("Demo 2a: estimating a mean")
    axes[1].set_xlabel("samples n")
    axes[1].set_ylabel("MSE of the sample mean")

    for c in pl["nearest_neighbor"]:
        curve_with_fit(axes[2], c, f"d = {c['d']}")
    axes[2].set_title("Demo 2b: 1-nearest neighbour in d dims")
    axes[2].set_xlabel("training points n")
    axes[2].set_ylabel("MSE")

    curve_with_fit(axes[3], pl["zipf_capacity"], "capacity (x = n remembered)")
    curve_with_fit(axes[3], pl["zipf_data"], "data (x = D samples)")
    axes[3].set_title("Demo 2c: Zipf knowledge pieces")
    axes[3].set_xlabel("n or D")
    axes[3].set_ylabel("remaining probability mass")
    for a in axes:
        a.set_xscale("log")
        a.set_yscale("log")
        a.legend(fontsize=7)


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_study.py: matplotlib is missing (apt-get install -y python3-matplotlib)",
              file=sys.stderr)
        return 1
    try:
        with open(argv[1]) as f:
            study = json.load(f)
    except (OSError, ValueError) as e:
        print(f"plot_study.py: {argv[1]}: {e}", file=sys.stderr)
        return 1
    policies = study.get("policies")
    powerlaws = study.get("powerlaws")
    if not policies and not powerlaws:
        print(f"plot_study.py: {argv[1]} has neither 'policies' nor 'powerlaws' (run "
              "graphjit-study with one of those sections)", file=sys.stderr)
        return 1
    out = argv[2]
    if not out.endswith(".png"):
        return plot_separately(plt, policies, powerlaws, out)
    rows = (1 if policies else 0) + (1 if powerlaws else 0)
    fig = plt.figure(figsize=(16, 4.8 * rows))
    grid = fig.add_gridspec(rows, 4)
    row = 0
    if policies:
        plot_policies(fig, fig.add_subplot(grid[row, 0:3]), fig.add_subplot(grid[row, 3]),
                      policies)
        row += 1
    if powerlaws:
        plot_powerlaws([fig.add_subplot(grid[row, i]) for i in range(4)], powerlaws)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")
    return 0


def plot_separately(plt, policies, powerlaws, out_dir):
    """One figure per section, into out_dir (created)."""
    os.makedirs(out_dir, exist_ok=True)
    written = []
    if policies:
        fig = plt.figure(figsize=(16, 4.8))
        grid = fig.add_gridspec(1, 4)
        plot_policies(fig, fig.add_subplot(grid[0, 0:3]), fig.add_subplot(grid[0, 3]), policies)
        written.append((fig, os.path.join(out_dir, "policies.png")))
    if powerlaws:
        fig = plt.figure(figsize=(16, 4.8))
        grid = fig.add_gridspec(1, 4)
        plot_powerlaws([fig.add_subplot(grid[0, i]) for i in range(4)], powerlaws)
        written.append((fig, os.path.join(out_dir, "powerlaws.png")))
    for fig, path in written:
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/python3
"""Plots a graphjit-study --json file: per-step decode latency for each shape policy (log
scale, compile spikes visible) and a bar chart of compiles and padding per policy.

Usage: /usr/bin/python3 tools/plot_study.py study.json study.png
Needs Debian's python3-matplotlib (apt-get install -y python3-matplotlib).
"""
import json
import sys


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
    if not policies:
        print(f"plot_study.py: {argv[1]} has no 'policies' (run graphjit-study with the "
              "policies section)", file=sys.stderr)
        return 1
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(13, 4.8),
                                   gridspec_kw={"width_ratios": [2, 1]})
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
    fig.tight_layout()
    fig.savefig(argv[2], dpi=110)
    print(f"wrote {argv[2]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

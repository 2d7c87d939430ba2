#!/usr/bin/python3
"""graphjit beside ONNX Runtime on twelve torchvision CNNs, same inputs, one run.

Usage: benchmarks/zoo/compare.py [--build-dir build] [--threads 1,2] [--models a,b]
                                 [--repeat 20] [--rounds 1] [--json FILE]

Exports the models (benchmarks/zoo/export.py: random weights from a fixed seed, opset 17,
dynamic batch) into BUILD/zoo, then for each thread count times ONNX Runtime (ort_run.js:
median of --repeat single calls) and graphjit (bench_ort_compare --model: the median of 5
Google Benchmark repetitions, exact policy, compiled first) on x: f32[1, 3, 224, 224]
(and [8, 3, 224, 224] for resnet50), and prints per model: medians in ms, graphjit / ORT,
and max |difference| of the outputs from ORT's and from torch's; then the geometric mean
of the ratios and the CPU. --rounds R times each model R times, ORT and graphjit
alternating, and reports each tool's median over the rounds: on a shared host whose speed
drifts within minutes, a ratio of two times taken minutes apart measures the drift. Needs python3-torchvision (scripts/bootstrap.sh), ONNX Runtime
(scripts/fetch_models.sh) and bench_ort_compare; says which is missing.
"""

import argparse
import json
import math
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "benchmarks", "ort_compare"))
import compare as oc  # noqa: E402  (the recognizer's comparison: its helpers)

MODELS = ["resnet18", "resnet50", "mobilenet_v2", "mobilenet_v3_small", "squeezenet1_1",
          "shufflenet_v2_x1_0", "regnet_y_400mf", "mnasnet0_5", "googlenet", "densenet121",
          "convnext_tiny", "efficientnet_b0"]
# Batches timed per model beyond N = 1.
EXTRA_BATCHES = {"resnet50": [8]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    parser.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--repeat", type=int, default=20, help="ORT's timed calls per input")
    parser.add_argument("--rounds", type=int, default=1,
                        help="alternating rounds of ORT and graphjit per model (medians)")
    parser.add_argument("--json", help="also write the rows to this file")
    args = parser.parse_args()
    models = [m for m in args.models.split(",") if m]
    unknown = [m for m in models if m not in MODELS]
    if unknown:
        oc.fail(f"unknown model(s) {', '.join(unknown)} (expected some of {', '.join(MODELS)})")
    thread_counts = [int(t) for t in args.threads.split(",")]
    if any(t < 1 for t in thread_counts):
        oc.fail(f"--threads {args.threads}: expected counts of 1 or more")
    if args.rounds < 1:
        oc.fail(f"--rounds {args.rounds}: expected 1 or more")
    fetch = os.environ.get("GRAPHJIT_FETCH_DIR", os.path.join(ROOT, "third_party", "fetched"))
    if not os.path.isdir(os.path.join(fetch, "onnxruntime-node", "node_modules",
                                      "onnxruntime-node")):
        oc.fail(f"onnxruntime-node is missing in {fetch}: run scripts/fetch_models.sh")
    bench = os.path.join(args.build_dir, "bin", "bench_ort_compare")
    if not os.path.exists(bench):
        oc.fail(f"{bench} is missing: ninja -C {args.build_dir} bench_ort_compare")
    work = os.path.join(args.build_dir, "zoo")
    for m in models:
        batches = ",".join(str(b) for b in [1] + EXTRA_BATCHES.get(m, []))
        export = subprocess.run(["/usr/bin/python3", os.path.join(HERE, "export.py"), work,
                                 "--models", m, "--batch", batches],
                                capture_output=True, text=True)
        if export.returncode != 0:
            oc.fail(f"export.py {m} failed: {export.stderr.strip()}")

    rows = []
    for threads in thread_counts:
        t = str(threads)
        env = dict(os.environ, OPENBLAS_NUM_THREADS=t, GRAPHJIT_NUM_THREADS=t,
                   GRAPHJIT_FETCH_DIR=fetch)
        for m in models:
            model = os.path.join(work, f"{m}.onnx")
            for b in [1] + EXTRA_BATCHES.get(m, []):
                stem = f"{m}.n{b}"
                x = os.path.join(work, f"{stem}.x.npy")
                out_dir = os.path.join(work, f"ort_{stem}_t{t}")
                gj_dir = os.path.join(work, f"graphjit_t{t}")
                ort_times, gj_times, error = [], [], None
                for _ in range(args.rounds):
                    report = json.loads(oc.run(
                        ["node", os.path.join(HERE, "..", "ort_compare", "ort_run.js"), model,
                         "--input", f"x=@{x}", "--output-dir", out_dir, "--threads", t,
                         "--repeat", str(args.repeat)], env=env))
                    ort_times.append(report["median_ms"])
                    times = oc.graphjit_times(bench, model, [x], gj_dir, env, m)
                    gj_round, error = times.get(f"{stem}.x", (None, "no result"))
                    if gj_round is None:
                        break
                    gj_times.append(gj_round)
                gj = statistics.median(gj_times) if error is None else None
                ort_ms = statistics.median(ort_times)
                ort_out = oc.read_npy_f32(os.path.join(out_dir, "output0.npy"))
                torch_out = oc.read_npy_f32(os.path.join(work, f"{stem}.y.npy"))
                gj_path = os.path.join(gj_dir, f"{stem}.x.npy")
                gj_out = oc.read_npy_f32(gj_path) if gj is not None else None
                row = {"model": m, "n": b, "threads": threads, "ort_ms": ort_ms,
                       "graphjit_ms": gj, "graphjit_error": error,
                       "ratio": None if gj is None else gj / ort_ms,
                       "diff_ort": None if gj_out is None else oc.max_abs_diff(gj_out, ort_out),
                       "diff_torch": None if gj_out is None else oc.max_abs_diff(gj_out,
                                                                               torch_out)}
                rows.append(row)
                print(f"{m:<20} N={b:<2} {threads}t  ORT {row['ort_ms']:8.2f}  graphjit "
                      f"{oc.fmt(gj, '8.2f')}  ratio {oc.fmt(row['ratio'], '.2f')}  "
                      f"max|d| ORT {oc.fmt(row['diff_ort'], '.1e')} torch "
                      f"{oc.fmt(row['diff_torch'], '.1e')}" + (f"  n/a: {error}" if gj is None
                                                                  else ""), flush=True)

    print(f"\ntorchvision CNNs, x: f32[N, 3, 224, 224]; CPU: {oc.cpu_name()}")
    print(f"ONNX Runtime: median of {args.repeat} calls; graphjit: median of 5 repetitions"
          + (f"; each the median of {args.rounds} alternating rounds" if args.rounds > 1 else ""))
    print(oc.blas_note())
    header = "| model | N |" + "".join(
        f" ORT {t}t | graphjit {t}t | ratio |" for t in thread_counts)
    print(header)
    print("|---|---|" + "---|---|---|" * len(thread_counts))
    keys = sorted({(r["model"], r["n"]) for r in rows},
                  key=lambda k: (MODELS.index(k[0]), k[1]))
    for model, n in keys:
        line = f"| {model} | {n} |"
        for t in thread_counts:
            r = next(r for r in rows if (r["model"], r["n"], r["threads"]) == (model, n, t))
            line += (f" {r['ort_ms']:.2f} | {oc.fmt(r['graphjit_ms'], '.2f')} |"
                     f" {oc.fmt(r['ratio'], '.2f')} |")
        print(line)
    for t in thread_counts:
        ratios = [r["ratio"] for r in rows if r["threads"] == t and r["n"] == 1 and r["ratio"]]
        if ratios:
            geomean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
            print(f"geometric mean of graphjit / ORT at N = 1, {t} thread(s): {geomean:.2f} "
                  f"({len(ratios)} models)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cpu": oc.cpu_name(), "openblas_coretype":
                       os.environ.get("OPENBLAS_CORETYPE"), "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

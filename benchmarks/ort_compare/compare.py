#!/usr/bin/python3
"""ONNX Runtime and graphjit on the PP-OCRv4 recognizer and a transformer encoder layer,
same inputs, one run, same threads.

Usage: benchmarks/ort_compare/compare.py [--build-dir build] [--repeat 20] [--threads 1]
                                          [--json FILE]

Renders text lines (scripts/render_text_line.py), preprocesses them with graphjit's
models/ocr_image.h (bench_ort_compare --prepare) into x: f32[N, 3, 48, W] at W = 160, 320,
640 and a batch of 4 x 320, then times ONNX Runtime (ort_run.js --repeat: the median of
single calls) and graphjit (bench_ort_compare: the median of 5 Google Benchmark
repetitions) on each, and prints a table: shape, medians in ms, graphjit / ORT, the max
|difference| of the outputs, whether each one's output decodes to the rendered text, and
the CPU. ONNX Runtime, graphjit's pool and OpenBLAS get --threads threads (default 1).
graphjit's columns say n/a with its error if it cannot import or compile the model. Needs the model and ONNX
Runtime (scripts/fetch_models.sh) and the build (bench_ort_compare); says so if not.

Then the TransformerEncoderLayer (d_model 64, 4 heads, feed-forward 128, batch first) that
scripts/export_torch_models.py exports from torch (skipped, saying so, without
python3-torch), on x: f32[1, S, 64] at S = 16, 64, 128, 256 and 512: the same columns but
the text.

Then the stateful and recurrent models: Silero VAD per 512-sample chunk with its state
carried (when scripts/fetch_models.sh has fetched it) and the LSTM, GRU and RNN exports.
"""

import argparse
import array
import ast
import json
import math
import os
import platform
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
# (name, width, lines): every line must fit the width; each is padded to it.
CASES = [
    ("1x160", 160, ["graphjit"]),
    ("1x320", 320, ["Hello graphjit 2026"]),
    ("1x640", 640, ["graphjit reads the quick brown fox"]),
    ("4x320", 320, ["Hello graphjit 2026", "graphjit 2026", "Hello 2026", "ONNX 1.30"]),
]


def fail(message):
    print(f"{os.path.basename(sys.argv[0])}: {message}", file=sys.stderr)
    sys.exit(1)


def run(command, **kwargs):
    """stdout of `command`; exits naming it if it fails."""
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        fail(f"{' '.join(command)} failed:\n{result.stderr.strip()}")
    return result.stdout


def read_npy_f32(path):
    """(shape, array('f')) of a little-endian f4 .npy file (no numpy on Debian's python)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        fail(f"{path}: not a .npy file")
    major = data[6]
    length, start = ((int.from_bytes(data[8:10], "little"), 10) if major == 1 else
                     (int.from_bytes(data[8:12], "little"), 12))
    header = ast.literal_eval(data[start:start + length].decode("latin1"))
    if header["descr"] != "<f4" or header["fortran_order"]:
        fail(f"{path}: expected C-order <f4 data, got {header}")
    values = array.array("f")
    values.frombytes(data[start + length:])
    return tuple(header["shape"]), values


def write_npy(path, shape, values, descr="<f4"):
    """A little-endian .npy v1 file of `values` (C order): f4 or, with descr '<i8', i8."""
    header = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {tuple(shape)}, }}"
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode())
        f.write(array.array("f" if descr == "<f4" else "q", values).tobytes())


def max_abs_diff(a, b):
    if a[0] != b[0]:
        return float("inf")
    return max((abs(x - y) for x, y in zip(a[1], b[1])), default=0.0)


def ctc_decode(probs, keys):
    """CTC greedy decoding as models/ocr_decode.h: one string per batch row."""
    (n_rows, steps, classes), values = probs
    alphabet = [""] + keys + [" "]
    texts = []
    for n in range(n_rows):
        text, previous = "", 0
        for t in range(steps):
            base = (n * steps + t) * classes
            row = values[base:base + classes]
            c = max(range(classes), key=row.__getitem__)
            if c != 0 and c != previous:
                text += alphabet[c]
            previous = c
        texts.append(text)
    return texts


def reads(got, want):
    return "n/a" if got is None else "yes" if got == want else "NO"


def fmt(value, spec):
    return "n/a" if value is None else format(value, spec)


def need_bench(build_dir):
    """build_dir's bench_ort_compare; exits saying how to build it if it is missing."""
    bench = os.path.join(build_dir, "bin", "bench_ort_compare")
    if not os.path.exists(bench):
        fail(f"{bench} is missing: ninja -C {build_dir} bench_ort_compare")
    return bench


def blas_note():
    """What chooses OpenBLAS's kernels in this run: a forced OPENBLAS_CORETYPE (some
    sandboxes set Haswell, AVX2, on AVX-512 machines) changes graphjit's matmuls, not
    ONNX Runtime's, which has its own."""
    core = os.environ.get("OPENBLAS_CORETYPE")
    if core is None:
        return "OpenBLAS kernels: its own CPU detection"
    return (f"OpenBLAS kernels: OPENBLAS_CORETYPE={core} from the environment "
            "(unset it for OpenBLAS's own choice)")


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return f"{line.split(':', 1)[1].strip()}, {os.cpu_count()} cores"
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    parser.add_argument("--repeat", type=int, default=20, help="ORT's timed calls per shape")
    parser.add_argument("--json", help="also write the rows to this file")
    parser.add_argument("--threads", type=int, default=1,
                        help="threads for each: ONNX Runtime's intra-op threads, graphjit's "
                             "pool (GRAPHJIT_NUM_THREADS) and OpenBLAS's")
    args = parser.parse_args()

    fetch = os.environ.get("GRAPHJIT_FETCH_DIR", os.path.join(ROOT, "third_party", "fetched"))
    model = os.path.join(fetch, "ocr-models", "ch_PP-OCRv4_rec_infer.onnx")
    keys_file = os.path.join(fetch, "ocr-models", "ppocr_keys_v1.txt")
    if not os.path.exists(model) or not os.path.isdir(
            os.path.join(fetch, "onnxruntime-node", "node_modules", "onnxruntime-node")):
        fail(f"the recognizer or onnxruntime-node is missing in {fetch}: "
             "run scripts/fetch_models.sh (it fetches both from npm)")
    bench = need_bench(args.build_dir)
    with open(keys_file, encoding="utf-8") as f:
        keys = f.read().split("\n")
    if keys and keys[-1] == "":
        keys.pop()

    work = os.path.join(args.build_dir, "ort_compare")
    os.makedirs(work, exist_ok=True)
    if args.threads < 1:
        fail(f"--threads {args.threads}: expected 1 or more")
    threads = str(args.threads)
    env = dict(os.environ, OPENBLAS_NUM_THREADS=threads, GRAPHJIT_NUM_THREADS=threads,
               GRAPHJIT_FETCH_DIR=fetch)
    inputs = []
    for name, width, lines in CASES:
        ppms = []
        for i, text in enumerate(lines):
            ppm = os.path.join(work, f"{name}_{i}.ppm")
            run(["/usr/bin/python3", os.path.join(ROOT, "scripts", "render_text_line.py"), text,
                 ppm, "--width", str(width)])
            ppms.append(ppm)
        x = os.path.join(work, f"{name}.npy")
        run([bench, f"--prepare={x}", f"--lines={','.join(ppms)}", f"--width={width}"])
        inputs.append(x)

    rows = []
    for (name, width, lines), x in zip(CASES, inputs):
        out_dir = os.path.join(work, f"ort_{name}")
        report = json.loads(run(["node", os.path.join(HERE, "ort_run.js"), model, "--input",
                                 f"x=@{x}", "--output-dir", out_dir, "--threads", threads,
                                 "--repeat", str(args.repeat)], env=env))
        ort_out = read_npy_f32(os.path.join(out_dir, "output0.npy"))
        # Trailing blanks are cut: the model has no mask, and on a line padded with zeros
        # it reads the padding as a space (or an ideographic space) now and then.
        rows.append({"shape": name, "x": [len(lines), 3, 48, width], "ort_ms": report["median_ms"],
                     "ort_text": [t.rstrip() for t in ctc_decode(ort_out, keys)],
                     "text": lines, "graphjit_ms": None,
                     "max_abs_diff": None, "graphjit_text": None, "graphjit_error": None,
                     "_ort_out": ort_out})

    gj_dir = os.path.join(work, "graphjit")
    times = graphjit_times(bench, None, inputs, gj_dir, env, "recognizer")
    for row in rows:
        row["graphjit_ms"], row["graphjit_error"] = times.get(row["shape"], (None, None))
        out = os.path.join(gj_dir, f"{row['shape']}.npy")
        if row["graphjit_ms"] is not None and os.path.exists(out):
            gj_out = read_npy_f32(out)
            row["max_abs_diff"] = max_abs_diff(gj_out, row["_ort_out"])
            row["graphjit_text"] = [t.rstrip() for t in ctc_decode(gj_out, keys)]

    print(f"PP-OCRv4 recognizer, {args.threads} thread(s) each; CPU: {cpu_name()}")
    print(f"ONNX Runtime: median of {args.repeat} calls; graphjit: median of 5 repetitions")
    print(blas_note())
    print(f"{'shape':<7} {'ORT ms':>8} {'graphjit ms':>12} {'ratio':>6} {'max|diff|':>10}"
          f"  reads the text: ORT, graphjit (trailing spaces cut)")
    errors, misread = set(), []
    for row in rows:
        gj, diff = row["graphjit_ms"], row["max_abs_diff"]
        ratio = None if gj is None else gj / row["ort_ms"]
        print(f"{row['shape']:<7} {row['ort_ms']:>8.2f} {fmt(gj, '.2f'):>12} "
              f"{fmt(ratio, '.2f'):>6} {fmt(diff, '.1e'):>10}"
              f"  {reads(row['ort_text'], row['text'])}, "
              f"{reads(row['graphjit_text'], row['text'])}")
        for who in ("ort", "graphjit"):
            got = row[f"{who}_text"]
            if got is not None and got != row["text"]:
                misread.append(f"{row['shape']}: {who} read {got} for {row['text']}")
        if row["graphjit_error"]:
            errors.add(row["graphjit_error"])
    for m in misread:
        print(m)
    for e in sorted(errors):
        print(f"graphjit: n/a: {e}")
    transformer = transformer_rows(args, bench, work, env, threads)
    stateful = stateful_rows(args, bench, work, env, threads, fetch)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cpu": cpu_name(), "threads": args.threads,
                       "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE"),
                       "rows": [{k: v for k, v in r.items() if k[0] != "_"} for r in rows],
                       "transformer_rows": transformer, "stateful_rows": stateful}, f,
                      indent=1)
    return 0


def graphjit_times(bench, model, inputs, out_dir, env, prefix, extra=()):
    """{input stem: (median ms or None, error or None)} of bench_ort_compare on `model`."""
    command = [bench, f"--inputs={','.join(inputs)}", f"--output_dir={out_dir}",
               "--benchmark_repetitions=5", "--benchmark_report_aggregates_only=true",
               "--benchmark_format=json", *extra]
    if model:
        command.append(f"--model={model}")
    times = {}
    for b in json.loads(run(command, env=env))["benchmarks"]:
        stem = b["name"][len(prefix) + 1:].split("/")[0]
        if b.get("error_occurred"):
            times[stem] = (None, b["error_message"])
        elif b.get("aggregate_name") == "median":
            times[stem] = (b["real_time"], None)
    return times


def transformer_rows(args, bench, work, env, threads):
    """The encoder layer's table (printed) and rows; [] when torch is missing."""
    torch_dir = os.path.join(work, "torch")
    export = subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "scripts",
                                                              "export_torch_models.py"),
                             torch_dir], capture_output=True, text=True)
    if export.returncode == 2:  # torch is missing
        print(f"\ntransformer encoder layer: skipped: {export.stderr.strip()}")
        return []
    if export.returncode != 0:
        fail(f"scripts/export_torch_models.py failed:\n{export.stderr.strip()}")
    model = os.path.join(torch_dir, "transformer.onnx")
    inputs = []
    for s in (16, 64, 128, 256, 512):
        x = os.path.join(work, f"transformer_s{s}.npy")
        write_npy(x, (1, s, 64), [math.sin(0.37 * i) for i in range(s * 64)])
        inputs.append(x)
    rows = []
    for x in inputs:
        stem = os.path.splitext(os.path.basename(x))[0]
        out_dir = os.path.join(work, f"ort_{stem}")
        report = json.loads(run(["node", os.path.join(HERE, "ort_run.js"), model, "--input",
                                 f"x=@{x}", "--output-dir", out_dir, "--threads", threads,
                                 "--repeat", str(args.repeat)], env=env))
        rows.append({"shape": stem, "ort_ms": report["median_ms"],
                     "_ort_out": read_npy_f32(os.path.join(out_dir, "output0.npy"))})
    gj_dir = os.path.join(work, "graphjit_transformer")
    times = graphjit_times(bench, model, inputs, gj_dir, env, "transformer")
    print(f"\nTransformerEncoderLayer from torch (d_model 64, 4 heads), x: f32[1, S, 64], "
          f"{args.threads} thread(s) each")
    print(f"{'input':<16} {'ORT ms':>8} {'graphjit ms':>12} {'ratio':>6} {'max|diff|':>10}")
    for row in rows:
        gj, error = times.get(row["shape"], (None, "no result"))
        out = os.path.join(gj_dir, f"{row['shape']}.npy")
        diff = max_abs_diff(read_npy_f32(out), row.pop("_ort_out")) if gj is not None else None
        row.update(graphjit_ms=gj, graphjit_error=error, max_abs_diff=diff)
        ratio = None if gj is None else gj / row["ort_ms"]
        print(f"{row['shape']:<16} {row['ort_ms']:>8.3f} {fmt(gj, '.3f'):>12} "
              f"{fmt(ratio, '.2f'):>6} {fmt(diff, '.1e'):>10}" +
              (f"  graphjit: n/a: {error}" if error else ""))
    return rows


def stateful_rows(args, bench, work, env, threads, fetch):
    """Silero VAD per 512-sample chunk (its state carried from call to call, sr fixed at
    import) and the recurrent layers scripts/export_torch_models.py exports (an LSTM of
    hidden 512 over 64 steps; 2-layer bidirectional LSTM, GRU and RNN of hidden 16 over 9
    steps at batch 3): printed, and returned as rows. A model that is missing is skipped,
    saying how to get it."""
    cases = []  # (label, model, {input: file}, carry pairs, graphjit prefix)
    vad = os.path.join(fetch, "silero-vad", "silero_vad.onnx")
    if os.path.exists(vad):
        feeds = {"x": os.path.join(work, "vad_chunk.npy"), "sr": os.path.join(work, "vad_sr.npy"),
                 "h": os.path.join(work, "vad_h.npy"), "c": os.path.join(work, "vad_c.npy")}
        write_npy(feeds["x"], (1, 512), [0.3 * math.sin(0.05 * i) for i in range(512)])
        write_npy(feeds["sr"], (), [16000], "<i8")
        write_npy(feeds["h"], (2, 1, 64), [0.0] * 128)
        write_npy(feeds["c"], (2, 1, 64), [0.0] * 128)
        cases.append(("silero_vad chunk", vad, {"input": feeds["x"], "sr": feeds["sr"],
                                                "h": feeds["h"], "c": feeds["c"]},
                      [("hn", "h"), ("cn", "c")], "silero_vad"))
    else:
        print(f"\nSilero VAD: skipped, {vad} is missing: run scripts/fetch_models.sh")
    torch_dir = os.path.join(work, "torch")
    for name, size in (("lstm_h512", "b1t64"), ("lstm", "b3t9"), ("gru", "b3t9"), ("rnn", "b3t9")):
        model = os.path.join(torch_dir, f"{name}.onnx")
        if os.path.exists(model):
            cases.append((f"{name} {size}", model,
                          {"x": os.path.join(torch_dir, f"{name}.{size}.input0.npy")}, [], name))
    if not cases:
        return []
    print(f"\nStateful and recurrent models, {args.threads} thread(s) each (Silero: per chunk, "
          "h and c carried to the next call)")
    print(f"{'model':<18} {'ORT ms':>8} {'graphjit ms':>12} {'ratio':>6} {'max|diff|':>10}")
    rows = []
    for label, model, inputs, carry, prefix in cases:
        stem = label.replace(" ", "_")
        out_dir = os.path.join(work, f"ort_{stem}")
        command = ["node", os.path.join(HERE, "ort_run.js"), model, "--output-dir", out_dir,
                   "--threads", threads, "--repeat", str(args.repeat)]
        for name, file in inputs.items():
            command += ["--input", f"{name}=@{file}"]
        for out, into in carry:
            command += ["--carry", f"{out}={into}"]
        report = json.loads(run(command, env=env))
        first = next(iter(inputs.values()))
        extra = [f"--model={model}"]
        others = [f"{n}={f}" for n, f in list(inputs.items())[1:]]
        if others:
            extra.append(f"--feed={','.join(others)}")
        if carry:
            extra.append(f"--carry={','.join(f'{o}={i}' for o, i in carry)}")
        gj_dir = os.path.join(work, f"graphjit_{stem}")
        times = graphjit_times(bench, None, [first], gj_dir, env, prefix, extra)
        gj, error = times.get(os.path.splitext(os.path.basename(first))[0], (None, "no result"))
        out = os.path.join(gj_dir, os.path.basename(first))
        diff = (max_abs_diff(read_npy_f32(out), read_npy_f32(os.path.join(out_dir, "output0.npy")))
                if gj is not None else None)
        ratio = None if gj is None else gj / report["median_ms"]
        print(f"{label:<18} {report['median_ms']:>8.3f} {fmt(gj, '.3f'):>12} "
              f"{fmt(ratio, '.2f'):>6} {fmt(diff, '.1e'):>10}" +
              (f"  graphjit: n/a: {error}" if error else ""))
        rows.append({"model": label, "ort_ms": report["median_ms"], "graphjit_ms": gj,
                     "graphjit_error": error, "max_abs_diff": diff})
    return rows


if __name__ == "__main__":
    sys.exit(main())

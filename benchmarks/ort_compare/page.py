#!/usr/bin/python3
"""A whole OCR page in graphjit and in ONNX Runtime: the PP-OCRv4 detector, the angle
classifier and the recognizer behind the same pre- and post-processing, one run.

Usage: benchmarks/ort_compare/page.py [--build-dir build] [--page FILE.ppm] [--repeat 10]
                                       [--threads 1]

Renders a page of six lines at three font sizes, one of them upside down
(scripts/render_text_line.py --page; or reads --page), then:
- graphjit: bench_ort_compare --page reads it whole through models::OcrPageReader (the
  median of 5 Google Benchmark repetitions), with each model's share of a read, and
  writes every model call's input of one read (det_0.npy, cls_K.npy, rec_K.npy);
- ONNX Runtime: ort_run.js --repeat times each of those calls on its model (the median of
  single calls), summed per model.
The table has each model's milliseconds per page in both and their ratio, and the page:
graphjit's whole read against ONNX Runtime's model time plus the same pre- and
post-processing (graphjit's read minus its model time: the code both pages share). Needs
the three models and ONNX Runtime (scripts/fetch_models.sh) and the build; says so if not.
"""

import argparse
import glob
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import HERE, ROOT, blas_note, cpu_name, fail, need_bench, run  # noqa: E402

# (x, y, font size, text) of the default page; line 4 is drawn upside down.
LINES = [(40, 30, 32, "graphjit reads pages"), (40, 100, 24, "Hello graphjit 2026"),
         (300, 180, 40, "ONNX 1.30"), (40, 260, 24, "the quick brown fox"),
         (420, 330, 32, "upside down"), (40, 420, 40, "compiled kernels")]
MODELS = {"det": "ch_PP-OCRv4_det_infer.onnx", "cls": "ch_ppocr_mobile_v2.0_cls_infer.onnx",
          "rec": "ch_PP-OCRv4_rec_infer.onnx"}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    parser.add_argument("--page", help="a page image (PPM); default: six rendered lines")
    parser.add_argument("--repeat", type=int, default=10, help="ORT's timed calls per input")
    parser.add_argument("--threads", type=int, default=1,
                        help="threads for each: ONNX Runtime's intra-op threads, graphjit's "
                             "pool and OpenBLAS's")
    args = parser.parse_args()
    if args.threads < 1 or args.repeat < 1:
        fail("--threads and --repeat must be 1 or more")
    fetch = os.environ.get("GRAPHJIT_FETCH_DIR", os.path.join(ROOT, "third_party", "fetched"))
    paths = {k: os.path.join(fetch, "ocr-models", v) for k, v in MODELS.items()}
    missing = [p for p in paths.values() if not os.path.exists(p)]
    if missing or not os.path.isdir(
            os.path.join(fetch, "onnxruntime-node", "node_modules", "onnxruntime-node")):
        fail(f"{', '.join(missing) or 'onnxruntime-node'} missing in {fetch}: "
             "run scripts/fetch_models.sh (it fetches them from npm)")
    bench = need_bench(args.build_dir)

    work = os.path.join(args.build_dir, "ort_compare", "page")
    os.makedirs(work, exist_ok=True)
    page = args.page
    if page is None:
        page = os.path.join(work, "page.ppm")
        command = ["/usr/bin/python3", os.path.join(ROOT, "scripts", "render_text_line.py")]
        for x, y, size, text in LINES:
            command += ["--page", f"{x},{y},{size},{text}"]
        run(command + ["--turn", "4", page])
    inputs = os.path.join(work, "inputs")
    for old in glob.glob(os.path.join(inputs, "*.npy")):
        os.remove(old)
    threads = str(args.threads)
    env = dict(os.environ, OPENBLAS_NUM_THREADS=threads, GRAPHJIT_NUM_THREADS=threads,
               GRAPHJIT_FETCH_DIR=fetch)

    graphjit = None
    for b in json.loads(run([bench, f"--page={page}", f"--page_inputs={inputs}",
                             "--benchmark_repetitions=5",
                             "--benchmark_report_aggregates_only=true",
                             "--benchmark_format=json"], env=env))["benchmarks"]:
        if b.get("error_occurred"):
            fail(f"graphjit could not read the page: {b['error_message']}")
        if b.get("aggregate_name") == "median":
            graphjit = b
    ort = {k: 0.0 for k in MODELS}
    calls = {k: 0 for k in MODELS}
    for x in sorted(glob.glob(os.path.join(inputs, "*.npy"))):
        kind = os.path.basename(x).split("_")[0]
        report = json.loads(run(["node", os.path.join(HERE, "ort_run.js"), paths[kind],
                                 "--input", f"x=@{x}", "--threads", threads, "--repeat",
                                 str(args.repeat)], env=env))
        ort[kind] += report["median_ms"]
        calls[kind] += 1

    print(f"A page of {int(graphjit['lines'])} lines ({page}), {args.threads} thread(s); "
          f"{cpu_name()}; {blas_note()}")
    print(f"{'model':<6} {'calls':>5} {'graphjit ms':>12} {'ORT ms':>9} {'graphjit/ORT':>13}")
    models_ms = 0.0
    for kind in MODELS:
        ms = graphjit[f"{kind}_ms"]
        models_ms += ms
        print(f"{kind:<6} {calls[kind]:>5} {ms:>12.2f} {ort[kind]:>9.2f} {ms / ort[kind]:>13.2f}")
    shared = graphjit["real_time"] - models_ms
    ort_page = sum(ort.values()) + shared
    print(f"{'page':<6} {'':>5} {graphjit['real_time']:>12.2f} {ort_page:>9.2f} "
          f"{graphjit['real_time'] / ort_page:>13.2f}   (both with the same {shared:.2f} ms "
          "of pre- and post-processing)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The decode layer op by op in numpy (docs/spec/decode_layer.md), timed against graphjit.

The lectures run this layer in numpy float64; this is that baseline on this machine.
Each numpy call is one op over whole arrays (BLAS for the matmuls), so the time is what an
op-by-op executor with good kernels costs. With --graphjit BIN (build/bin/bench_roofline)
the compiled step is measured in the same run and the ratio printed.

    /usr/bin/python3 benchmarks/numpy_decode.py --graphjit build/bin/bench_roofline

Needs numpy (Debian: apt-get install python3-numpy). Prints medians in microseconds.
"""
import argparse
import json
import subprocess
import sys
import time

try:
    import numpy as np
except ImportError:
    sys.exit("numpy_decode.py: needs numpy (apt-get install python3-numpy)")

D, H, G, DH, F, EPS, THETA = 128, 8, 2, 16, 344, 1e-6, 10000.0


def layer_params(dtype, rng):
    def mat(rows, cols):
        return (rng.standard_normal((rows, cols)) / np.sqrt(rows)).astype(dtype)

    def norm():
        return (1 + 0.1 * rng.standard_normal(D)).astype(dtype)

    return dict(attn_norm=norm(), wq=mat(D, H * DH), wk=mat(D, G * DH), wv=mat(D, G * DH),
                wo=mat(H * DH, D), mlp_norm=norm(), w_gate=mat(D, F), w_up=mat(D, F),
                w_down=mat(F, D))


def rope_tables(pos, dtype):
    inv_freq = THETA ** (-2 * np.arange(DH // 2) / DH)
    angle = pos * inv_freq
    cos = np.concatenate([np.cos(angle), np.cos(angle)]).reshape(1, 1, DH).astype(dtype)
    sin = np.concatenate([np.sin(angle), np.sin(angle)]).reshape(1, 1, DH).astype(dtype)
    return cos, sin


def rms(v, w):
    return v / np.sqrt(np.mean(v * v, axis=-1, keepdims=True) + EPS) * w


def rope(t, cos, sin):
    half = t.shape[-1] // 2
    rotated = np.concatenate([-t[..., half:], t[..., :half]], axis=-1)
    return t * cos + rotated * sin


def decode_layer(p, x, k_cache, v_cache, cos, sin, pos):
    h = rms(x, p["attn_norm"])
    q = rope((h @ p["wq"]).reshape(H, 1, DH), cos, sin)
    k = rope((h @ p["wk"]).reshape(G, 1, DH), cos, sin)
    v = (h @ p["wv"]).reshape(G, 1, DH)
    k_cache[:, pos, :] = k[:, 0, :]  # in place, as graphjit's donated caches
    v_cache[:, pos, :] = v[:, 0, :]
    group = np.arange(H) // (H // G)
    s = q @ np.swapaxes(k_cache[group], -1, -2) / np.sqrt(DH)
    s = np.exp(s - s.max(axis=-1, keepdims=True))
    a = (s / s.sum(axis=-1, keepdims=True)) @ v_cache[group]
    x2 = x + a.reshape(1, H * DH) @ p["wo"]
    h2 = rms(x2, p["mlp_norm"])
    g = h2 @ p["w_gate"]
    return x2 + (g / (1 + np.exp(-g)) * (h2 @ p["w_up"])) @ p["w_down"]


def time_numpy(S, dtype, reps):
    rng = np.random.default_rng(0)
    p = layer_params(dtype, rng)
    x = rng.standard_normal((1, D)).astype(dtype)
    k_cache = rng.standard_normal((G, S, DH)).astype(dtype)
    v_cache = rng.standard_normal((G, S, DH)).astype(dtype)
    cos, sin = rope_tables(S - 1, dtype)
    for _ in range(10):
        decode_layer(p, x, k_cache, v_cache, cos, sin, S - 1)
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        decode_layer(p, x, k_cache, v_cache, cos, sin, S - 1)
        times.append(time.perf_counter() - start)
    return float(np.median(times)) * 1e6


def time_graphjit(binary):
    """Median CPU time (us) of bench_roofline's default decode steps, by (S, dtype)."""
    out = subprocess.run(
        [binary, "--benchmark_filter=BM_DecodeStep/.*/.*/2/0/", "--benchmark_repetitions=5",
         "--benchmark_report_aggregates_only", "--benchmark_format=json"],
        check=True, capture_output=True, text=True).stdout
    result = {}
    for b in json.loads(out)["benchmarks"]:
        if b.get("aggregate_name") != "median":
            continue
        # BM_DecodeStep/S/f32/variant/kept_frame/manual_time: as compiled by default, through
        # CompiledGraph::Run
        # (outputs allocated per call, as numpy's are).
        _, S, f32 = b["run_name"].split("/")[:3]
        # The mean wall time of the steps (so preemption counts against it).
        result[(int(S), "f32" if f32 == "1" else "f64")] = b["real_time"]
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphjit", help="bench_roofline binary, to compare in the same run")
    parser.add_argument("--reps", type=int, default=2000, help="timed numpy calls per case")
    args = parser.parse_args()
    compiled = time_graphjit(args.graphjit) if args.graphjit else {}
    print(f"{'step':<14} {'numpy (us)':>11} {'graphjit (us)':>14} {'numpy / graphjit':>17}")
    for dtype in ("f64", "f32"):
        for S in (64, 512):
            numpy_us = time_numpy(S, np.float64 if dtype == "f64" else np.float32, args.reps)
            ours = compiled.get((S, dtype))
            ratio = f"{numpy_us / ours:.1f}x" if ours else "-"
            ours_text = f"{ours:.1f}" if ours else "-"
            print(f"{dtype + ' S=' + str(S):<14} {numpy_us:>11.1f} {ours_text:>14} {ratio:>17}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The dynamic-shapes lecture's four demos, in Python, with graphjit as the compiler.

A Llama-style decode layer is written in Python on graphjit.ops; graphjit traces it,
compiles it through LLVM into native code and caches the code under shape guards. Every
compile time printed is a real compile of this run.

  1. compile-cache policies over a growing KV cache: exact lengths, buckets (powers of
     two, multiples of 128: padded and masked), one symbolic graph, graphjit's automatic
     policy;
  2. one symbolic graph against the exact graph of each length;
  3. a data-dependent loop under lazy execution: one graph per iteration (graph breaks);
  4. framework overhead: numpy op by op, graphjit eager, graphjit's interpreter, the
     compiled code called from Python, and the same call made from C++.

Run from a build tree (scripts/bootstrap.sh builds the module):
    PYTHONPATH=build/python python3 examples/python/dynamic_shapes.py [--steps 512] [--demos 1,2,3,4]
Times are wall clock on this machine; compile counts and differences are the same on
every run.
"""

import argparse
import math
import time

import numpy as np

import graphjit
from graphjit import ops

# The lecture's layer: width 128, 8 query heads sharing 2 key/value heads of 16, MLP 344.
D, H, G, DH, F = 128, 8, 2, 16, 344
THETA, EPS = 10000.0, 1e-6


def layer_params(seed=0):
    """Matrices N(0, 1) / sqrt(fan_in), norm weights 1 + 0.1 N(0, 1) (f64)."""
    rng = np.random.default_rng(seed)

    def matrix(rows, cols):
        return rng.standard_normal((rows, cols)) / math.sqrt(rows)

    return {
        "attn_norm": 1 + 0.1 * rng.standard_normal(D),
        "wq": matrix(D, H * DH), "wk": matrix(D, G * DH), "wv": matrix(D, G * DH),
        "wo": matrix(H * DH, D),
        "mlp_norm": 1 + 0.1 * rng.standard_normal(D),
        "w_gate": matrix(D, F), "w_up": matrix(D, F), "w_down": matrix(F, D),
    }


def rope_tables(pos):
    """cos and sin of the rotary embedding at position `pos`, [1, 1, DH]."""
    inv = THETA ** (-2.0 * np.arange(DH // 2) / DH)
    angle = np.concatenate([pos * inv, pos * inv])
    return np.cos(angle)[None, None, :], np.sin(angle)[None, None, :]


def decode_layer(x, k_cache, v_cache, cos, sin, attn_norm, wq, wk, wv, wo, mlp_norm, w_gate,
                 w_up, w_down):
    """One decode step on graphjit Values: the new token's row is the caches' last."""
    return layer(x, k_cache, v_cache, cos, sin, None, attn_norm, wq, wk, wv, wo, mlp_norm,
                 w_gate, w_up, w_down)


def masked_decode_layer(x, k_cache, v_cache, cos, sin, kmask, attn_norm, wq, wk, wv, wo,
                        mlp_norm, w_gate, w_up, w_down):
    """The step on padded caches: kmask is 0 on the rows to attend to, -inf on the rest."""
    return layer(x, k_cache, v_cache, cos, sin, kmask, attn_norm, wq, wk, wv, wo, mlp_norm,
                 w_gate, w_up, w_down)


def layer(x, k_cache, v_cache, cos, sin, kmask, attn_norm, wq, wk, wv, wo, mlp_norm, w_gate,
          w_up, w_down):
    h = ops.rms_norm(x, attn_norm, EPS)
    q = ops.rope(ops.reshape(h @ wq, [H, 1, DH]), cos, sin)
    k = ops.rope(ops.reshape(h @ wk, [G, 1, DH]), cos, sin)
    v = ops.reshape(h @ wv, [G, 1, DH])
    K = ops.kv_write(k_cache, k)
    V = ops.kv_write(v_cache, v)
    S = K.shape[1]  # an int, or the symbol "S" of a symbolic trace
    # Grouped-query attention: each key/value head serves H / G query heads.
    qg = ops.reshape(q, [G, H // G, 1, DH])
    s = (qg @ ops.transpose(ops.reshape(K, [G, 1, S, DH]), [0, 1, 3, 2])) / math.sqrt(DH)
    if kmask is not None:
        s = s + kmask
    a = ops.softmax(s, -1) @ ops.reshape(V, [G, 1, S, DH])
    x2 = x + ops.reshape(a, [1, H * DH]) @ wo
    h2 = ops.rms_norm(x2, mlp_norm, EPS)
    y = x2 + (ops.silu(h2 @ w_gate) * (h2 @ w_up)) @ w_down
    return y, K, V


def numpy_layer(x, k_cache, v_cache, cos, sin, p):
    """The same step in numpy, op by op (demo 4's eager framework)."""
    def rms(v, w):
        return v / np.sqrt(np.mean(v * v, axis=-1, keepdims=True) + EPS) * w

    def rope(v):
        half = np.concatenate([-v[..., DH // 2:], v[..., :DH // 2]], axis=-1)
        return v * cos + half * sin

    h = rms(x, p["attn_norm"])
    q = rope((h @ p["wq"]).reshape(H, 1, DH))
    k = rope((h @ p["wk"]).reshape(G, 1, DH))
    v = (h @ p["wv"]).reshape(G, 1, DH)
    K = np.concatenate([k_cache[:, :-1], k], axis=1)
    V = np.concatenate([v_cache[:, :-1], v], axis=1)
    s = q.reshape(G, H // G, 1, DH) @ K[:, None].transpose(0, 1, 3, 2) / math.sqrt(DH)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    a = (e / e.sum(axis=-1, keepdims=True)) @ V[:, None]
    x2 = x + a.reshape(1, H * DH) @ p["wo"]
    h2 = rms(x2, p["mlp_norm"])
    g = h2 @ p["w_gate"]
    return x2 + (g / (1 + np.exp(-g)) * (h2 @ p["w_up"])) @ p["w_down"], K, V


class Policy:
    """A compile cache over the KV length S, as the lecture's: the key a length compiles
    under, padding to it, and what it cost (graphjit's own counters)."""

    def __init__(self, name, params):
        self.name, self.real, self.padded = name, 0, 0
        if name in ("pow2", "mult128"):
            # One exact graph per bucket length, on caches padded to it.
            self.fn = graphjit.jit(masked_decode_layer, policy="exact", weights=params)
        elif name == "symbolic":
            self.fn = graphjit.jit(decode_layer, policy="symbolic", weights=params,
                                   dynamic={"k_cache": {1: "S"}, "v_cache": {1: "S"}})
        else:  # exact, auto
            self.fn = graphjit.jit(decode_layer, policy=name, weights=params)

    def bucket(self, S):
        if self.name == "pow2":
            return 1 << (S - 1).bit_length()
        if self.name == "mult128":
            return -(-S // 128) * 128
        return S

    def __call__(self, x, k_cache, v_cache, cos, sin):
        S = k_cache.shape[1]
        L = self.bucket(S)
        self.real += S
        self.padded += L
        if L == S and self.name not in ("pow2", "mult128"):
            return self.fn(x, k_cache, v_cache, cos, sin)
        # Padded to L: kv_write puts the new token's row last (row L - 1), so the mask shows
        # rows 0 .. S - 2 (the history) and L - 1, and hides the rest (attention does not
        # care where a row sits: its position is in its rotary embedding).
        pad = ((0, 0), (0, L - S), (0, 0))
        rows = np.arange(L)
        kmask = np.where((rows < S - 1) | (rows == L - 1), 0.0, -np.inf)[None, None, :]
        y, K, V = self.fn(x, np.pad(k_cache, pad), np.pad(v_cache, pad), cos, sin, kmask)
        K[:, S - 1], V[:, S - 1] = K[:, L - 1], V[:, L - 1]
        return y, K[:, :S], V[:, :S]


def decode_loop(policy, prompt, steps):
    """`steps` decode steps from a cache of `prompt` random rows; the outputs."""
    rng = np.random.default_rng(0)
    k = rng.standard_normal((G, prompt, DH))
    v = rng.standard_normal((G, prompt, DH))
    xs = rng.standard_normal((steps, 1, D))
    outs = []
    for t in range(steps):
        S = prompt + t + 1
        k = np.concatenate([k, np.zeros((G, 1, DH))], axis=1)
        v = np.concatenate([v, np.zeros((G, 1, DH))], axis=1)
        cos, sin = rope_tables(S - 1)
        y, k, v = policy(xs[t], k, v, cos, sin)
        outs.append(y)
    return outs


def print_table(header, rows):
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    for r in [header, ["-" * w for w in widths]] + rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)))
    print()


def fmt(seconds):
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} us"
    return f"{seconds * 1e3:.2f} ms" if seconds < 1 else f"{seconds:.2f} s"


def demo1(params, steps):
    print(f"== 1. {steps} decode steps (KV length 101 -> {100 + steps}) under five policies ==\n")
    results, rows = {}, []
    for name in ("exact", "pow2", "mult128", "symbolic", "auto"):
        policy = Policy(name, params)
        outs = decode_loop(policy, 100, steps)
        stats = policy.fn.stats()
        results[name] = outs
        rows.append([name, stats["compiles"], fmt(stats["compile_seconds"]),
                     f"{policy.padded / policy.real - 1:.1%}"])
    diffs = {}
    for row in rows:
        ref, outs = results["exact"], results[row[0]]
        diffs[row[0]] = max(np.abs(a - b).max() for a, b in zip(outs, ref))
        row.append(f"{diffs[row[0]]:.1e}")
    print_table(["policy", "compiles", "compile time (graphjit, this run)", "padding read",
                 "max |diff| vs exact"], rows)
    return {r[0]: (r[1], diffs[r[0]]) for r in rows}


def demo2(params):
    print("== 2. One symbolic graph against the exact graph of each length ==\n")
    symbolic = graphjit.jit(decode_layer, policy="symbolic", weights=params,
                            dynamic={"k_cache": {1: "S"}, "v_cache": {1: "S"}})
    exact = graphjit.jit(decode_layer, policy="exact", weights=params)
    rng = np.random.default_rng(1)
    rows = []
    for S in (2, 7, 64, 500):
        ins = [rng.standard_normal((1, D)), rng.standard_normal((G, S, DH)),
               rng.standard_normal((G, S, DH)), *rope_tables(S - 1)]
        a = symbolic(*ins)[0]
        b = exact(*ins)[0]
        rows.append([S, f"{np.abs(a - b).max():.1e}"])
    print_table(["S", "symbolic graph vs the exact graph of S (max |diff|)"], rows)
    print(f"compiles: symbolic {symbolic.stats()['compiles']} (S >= 2 share one graph), "
          f"exact {exact.stats()['compiles']}\n")
    return symbolic.stats()["compiles"]


def demo3():
    print("== 3. A data-dependent loop, y <- tanh(y @ W) until the change is below 1e-12 ==\n")
    rng = np.random.default_rng(2)
    W = rng.standard_normal((32, 32)) * (0.5 / math.sqrt(32))
    y0 = rng.standard_normal((4, 32))
    lz = graphjit.lazy()
    y, Wt = lz.tensor(y0), lz.tensor(W)
    it = 0
    while True:
        y_new = ops.tanh(y @ Wt)
        diff = (y_new - y) * (y_new - y)
        it += 1
        if lz.item(ops.max(ops.max(diff, axis=-1), axis=-1)) < 1e-12:  # needs a value: a break
            break
        y = y_new
        if it > 200:
            break
    out = lz.numpy(y_new)
    ref = y0.copy()
    for _ in range(it):
        ref = np.tanh(ref @ W)
    graphs = lz.graphs
    print(f"{it} iterations; lazy execution cut {len(graphs)} graphs and compiled "
          f"{lz.compiles} (equal graphs share code); max |diff| to numpy "
          f"{np.abs(out - ref).max():.1e}\n")
    return it, len(graphs), lz.compiles, float(np.abs(out - ref).max())


def timeit(f, reps):
    """Seconds per call: the median of 5 rounds of `reps` calls (as time_native measures)."""
    rounds = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(reps):
            f()
        rounds.append((time.perf_counter() - t0) / reps)
    return sorted(rounds)[2]


def demo4(params, reps):
    S = 64
    print(f"== 4. Framework overhead: one decode step at KV length {S} (f64) ==\n")
    rng = np.random.default_rng(3)
    ins = [rng.standard_normal((1, D)), rng.standard_normal((G, S, DH)),
           rng.standard_normal((G, S, DH)), *rope_tables(S - 1)]
    eager = graphjit.eager(decode_layer, weights=params)
    compiled = graphjit.jit(decode_layer, policy="exact", weights=params)
    compiled(*ins)  # compiles
    t_numpy = timeit(lambda: numpy_layer(*ins, params), reps)
    t_eager = timeit(lambda: eager(*ins), reps)
    t_interp = timeit(lambda: compiled.interpret(*ins), reps)
    t_python = timeit(lambda: compiled(*ins), reps)
    t_native = compiled.time_native(*ins, repeat=reps)
    ref = numpy_layer(*ins, params)[0]
    diff = max(np.abs(f()[0] - ref).max()
               for f in (lambda: eager(*ins), lambda: compiled.interpret(*ins),
                         lambda: compiled(*ins)))
    rows = [["numpy, op by op", fmt(t_numpy), f"{t_numpy / t_native:.1f}x"],
            ["graphjit.eager, op by op", fmt(t_eager), f"{t_eager / t_native:.1f}x"],
            ["graphjit interpreter (optimized graph)", fmt(t_interp), f"{t_interp / t_native:.1f}x"],
            ["graphjit compiled, called from Python", fmt(t_python), f"{t_python / t_native:.2f}x"],
            ["graphjit compiled, the same call from C++", fmt(t_native), "1.00x"]]
    print_table(["way", "per call", "vs compiled from C++"], rows)
    print(f"The Python binding costs {fmt(max(t_python - t_native, 0.0))} per call "
          f"({t_python / t_native:.2f}x the C++ call); every way agrees with numpy to "
          f"{diff:.1e}.\n")
    return {"numpy": t_numpy, "eager": t_eager, "interpreter": t_interp, "python": t_python,
            "native": t_native, "max_diff": diff}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=512, help="decode steps of demo 1")
    parser.add_argument("--demos", default="1,2,3,4", help="which demos, e.g. 1,4")
    parser.add_argument("--reps", type=int, default=300, help="calls per timing round (demo 4)")
    args = parser.parse_args()
    params = layer_params()
    demos = {int(d) for d in args.demos.split(",")}
    if 1 in demos:
        demo1(params, args.steps)
    if 2 in demos:
        demo2(params)
    if 3 in demos:
        demo3()
    if 4 in demos:
        demo4(params, args.reps)


if __name__ == "__main__":
    main()

"""graphjit: a JIT compiler for tensor graphs, from Python.

    import graphjit
    model = graphjit.onnx.load("model.onnx")
    (y,) = model(x=array)

    @graphjit.jit
    def f(x, w):
        return graphjit.ops.softmax(x @ w)

    y = f(x_array, w_array)

Models and functions compile under shape guards on their first call of each input
signature (the policy says which dims a compile is specialized to) into native code
through LLVM ORC. numpy arrays go in and come out without copies where their layout
allows (docs/PYTHON.md).
"""

from . import _graphjit, onnx
from ._graphjit import EagerFunction, JitFunction, LazyContext, Model, Value, ops

__all__ = ["EagerFunction", "JitFunction", "LazyContext", "Model", "Value", "eager", "jit",
           "lazy", "onnx", "ops"]


def eager(fn=None, *, weights=None):
    """Runs `fn`, a function of graphjit Values, op by op: each op is computed at once by
    graphjit's runtime kernels, as an eager framework computes (no trace, no compile).

        f = graphjit.eager(lambda x, w: graphjit.ops.softmax(x @ w))
        y = f(x_array, w_array)

    The same function under graphjit.jit compiles instead; both return numpy arrays.
    weights: {"w": array}: parameters of `fn` bound to these arrays (not passed per call).
    """
    def wrap(f):
        return _graphjit.make_eager(f, weights=weights)

    return wrap if fn is None else wrap(fn)


def lazy():
    """A lazy context (the lecture's demo 3): ops on its Values are recorded, not run.

        lz = graphjit.lazy()
        x = lz.tensor(array)
        y = graphjit.ops.exp(x) * 2.0
        if lz.item(graphjit.ops.sum(y, axis=0)) > 1.0:   # a graph break: runs what is pending
            ...
        result = lz.numpy(y)

    lz.graphs lists the breaks (ops, outputs, compiled), lz.compiles counts the compiles
    (equal graphs share code through the store, across contexts and jit functions).
    One thread at a time.
    """
    return LazyContext()


def jit(fn=None, *, policy="auto", tier="o2", dynamic=None, weights=None):
    """Compiles `fn`, a function of graphjit Values, on its first call of each signature.

    Usable as @graphjit.jit or @graphjit.jit(policy="exact"). Call the result with numpy
    arrays (positionally or by the parameters' names); it returns a numpy array, or a
    tuple of them when `fn` returns a tuple or list of Values.

    policy: "auto" (every dim exact until it shows a second value, then symbolic),
      "exact", or "symbolic" (the dims `dynamic` names stay symbolic).
    tier: "o2" (optimized code) or "baseline" (quick to compile).
    dynamic: {"x": {1: "S"}}: dim 1 of input x is the dynamic dim S (for "symbolic").
    weights: {"w": array}: parameters of `fn` bound to these arrays once, as the model's
      weights (constants the compiler may fold, e.g. a norm's weight into a product);
      calls pass only the other parameters.

    f.interpret(...) runs a call through graphjit's interpreter instead of the compiled
    code; f.time_native(..., repeat=N) times the same compiled call made from C++.
    """
    def wrap(f):
        return _graphjit.make_jit(f, policy=policy, tier=tier, dynamic=dynamic, weights=weights)

    return wrap if fn is None else wrap(fn)

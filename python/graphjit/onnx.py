"""ONNX models compiled by graphjit."""

from . import _graphjit


def load(path_or_bytes, policy="auto", tier="o2", threads=None, known_inputs=None,
         example_inputs=None):
    """Imports an ONNX model (a path or the bytes of a ModelProto) into a Model.

    policy: the compile cache's shape policy: "auto" (every dim exact until it shows a
      second value, then symbolic), "exact", "symbolic", "pow2" or "mult128".
    tier: "o2" (optimized code) or "baseline" (quick to compile).
    threads: threads running one call's kernels (None: GRAPHJIT_NUM_THREADS, else the
      CPUs the process may use).
    known_inputs: {"axes": array}: inputs whose values are fixed at import (they become
      constants and are no longer passed). Without it, a model loaded by path that takes
      as inputs what graphjit needs when it builds the graph (axes, repeats, scales,
      pads) is specialized on each call's values of them under a guard (a new value
      compiles another specialization; model.stats() counts them); by bytes it is
      refused with NotImplementedError naming the input.
    example_inputs: {"input": array, "sr": array, ...}: a call's inputs (a path only): the
      model is imported specialized on what it needs of them: the values of the inputs it
      needs at import (an If on a sample rate, a Loop's trip count) and, when its dims must
      be fixed (an If on the batch size, an LSTM's sequence length), every input's shape.
      Inputs fixed by value are no longer passed (Model.input_names says which remain).

    Raises FileNotFoundError for a missing file, ValueError for a malformed model or a
    bad option, NotImplementedError for an operator graphjit cannot import.
    """
    return _graphjit.load_onnx(path_or_bytes, policy=policy, tier=tier, threads=threads,
                               known_inputs=known_inputs, example_inputs=example_inputs)

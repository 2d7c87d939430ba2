"""ONNX models compiled by graphjit."""

from . import _graphjit


def load(path_or_bytes, policy="auto", tier="o2", threads=None):
    """Imports an ONNX model (a path or the bytes of a ModelProto) into a Model.

    policy: the compile cache's shape policy: "auto" (every dim exact until it shows a
      second value, then symbolic), "exact", "symbolic", "pow2" or "mult128".
    tier: "o2" (optimized code) or "baseline" (quick to compile).
    threads: threads running one call's kernels (None: GRAPHJIT_NUM_THREADS, else the
      CPUs the process may use).

    Raises FileNotFoundError for a missing file, ValueError for a malformed model or a
    bad option, NotImplementedError for an operator graphjit cannot import.
    """
    return _graphjit.load_onnx(path_or_bytes, policy=policy, tier=tier, threads=threads)

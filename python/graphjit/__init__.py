"""graphjit: a JIT compiler for tensor graphs, from Python.

    import graphjit
    model = graphjit.onnx.load("model.onnx")
    (y,) = model(x=array)

Models compile under shape guards on their first call of each input signature (the
policy says which dims a compile is specialized to) into native code through LLVM ORC.
numpy arrays go in and come out without copies where their layout allows
(docs/PYTHON.md).
"""

from . import onnx
from ._graphjit import Model

__all__ = ["Model", "onnx"]

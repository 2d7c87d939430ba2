"""graphjit.lazy() from Python: recorded ops, graph breaks where a value is asked for,
code shared between equal graphs, and the context kept alive by its values."""

import gc

import numpy as np
import pytest

import graphjit
from graphjit import ops


def newton_sqrt(lz, a, steps):
    """The lecture's loop: x <- (x + a / x) / 2 until converged, asking for the error."""
    x = lz.tensor(np.ones_like(a))
    av = lz.tensor(a)
    for _ in range(steps):
        x = (x + av / x) * 0.5
        err = ops.max(ops.max(x * x - av, axis=0), axis=0)
        if lz.item(err) < 1e-12:  # a graph break
            break
    return lz.numpy(x)


def test_results_and_graph_breaks():
    lz = graphjit.lazy()
    a = np.array([[2.0, 9.0], [16.0, 0.25]])
    got = newton_sqrt(lz, a, 50)
    assert np.max(np.abs(got - np.sqrt(a))) < 1e-12
    breaks = lz.graphs
    assert len(breaks) >= 2 and all(b["ops"] >= 0 for b in breaks)
    assert lz.pending_ops == 0
    # The loop's steps record equal graphs: most are served by code compiled once.
    assert lz.compiles < len(breaks)


def test_recording_runs_nothing_until_asked():
    lz = graphjit.lazy()
    x = lz.tensor(np.arange(6, dtype=np.float64).reshape(2, 3))
    y = ops.exp(x) * 2.0 - 1.0
    assert lz.pending_ops == 3 and lz.graphs == []
    assert np.allclose(lz.numpy(y), np.exp(np.arange(6.0).reshape(2, 3)) * 2 - 1)
    assert len(lz.graphs) == 1


def test_values_keep_their_context_alive():
    lz = graphjit.lazy()
    y = lz.tensor(np.ones(3, np.float32)) * 3.0
    del lz
    gc.collect()
    z = y + 1.0
    assert z.shape == (3,) and z.dtype == "f32"


def test_errors():
    lz, other = graphjit.lazy(), graphjit.lazy()
    x = other.tensor(np.ones(2))
    with pytest.raises(ValueError, match="another context"):
        lz.numpy(x)
    with pytest.raises(ValueError, match="dtype"):
        lz.tensor(np.array(["a"]))
    with pytest.raises(ValueError):
        lz.item(lz.tensor(np.ones(3)))  # not one element
    with graphjit.lazy() as ctx:
        assert np.array_equal(ctx.numpy(ctx.tensor(np.ones(2)) + 1.0), [2.0, 2.0])

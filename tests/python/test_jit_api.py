"""graphjit.jit from Python: functions of graphjit Values traced and compiled under
guards, against numpy; the policies' compile counts; errors as Python exceptions."""

import numpy as np
import pytest

import graphjit
from graphjit import ops


def rand(*shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def test_decorator_forms_and_results_match_numpy():
    @graphjit.jit
    def attention_like(x, w):
        return ops.softmax(x @ w, axis=-1) * 2.0 + 1.0

    @graphjit.jit(policy="exact", tier="baseline")
    def pieces(a):
        return a[1:3, :] - 1.0, ops.sum(a, axis=0), ops.max(a, axis=1, keepdim=True)

    x, w = rand(4, 8), rand(8, 5, seed=1)
    e = np.exp(x @ w - (x @ w).max(-1, keepdims=True))
    want = e / e.sum(-1, keepdims=True) * 2 + 1
    y = attention_like(x, w)
    assert isinstance(y, np.ndarray) and y.shape == (4, 5)
    assert np.max(np.abs(y - want)) < 1e-5
    assert not y.flags.owndata  # graphjit's buffer

    a = np.arange(12, dtype=np.float64).reshape(4, 3)
    first, total, biggest = pieces(a)
    assert np.array_equal(first, a[1:3] - 1)
    assert np.array_equal(total, a.sum(0))
    assert np.array_equal(biggest, a.max(1, keepdims=True))


def test_ops_against_numpy():
    @graphjit.jit
    def f(x, g):
        y = ops.rms_norm(x, g, eps=1e-6)
        z = ops.silu(y) + ops.tanh(y) - ops.sigmoid(y) * ops.exp(-y)
        z = ops.where(y > 0.0, z, ops.maximum(y, -0.5))
        z = ops.concat([ops.transpose(z, [1, 0]), ops.reshape(x, [8, 4])], axis=1)
        return ops.mean(z, axis=1), z

    x, g = rand(4, 8), rand(8, seed=2)
    y = x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6) * g
    sig = 1 / (1 + np.exp(-y))
    z = y * sig + np.tanh(y) - sig * np.exp(-y)
    z = np.where(y > 0, z, np.maximum(y, -0.5))
    z = np.concatenate([z.T, x.reshape(8, 4)], axis=1)
    mean, got = f(x, g)
    assert np.max(np.abs(got - z)) < 1e-5
    assert np.max(np.abs(mean - z.mean(1))) < 1e-5


def test_policies_count_their_compiles():
    def double(x):
        return x * 2.0

    exact = graphjit.jit(double, policy="exact")
    auto = graphjit.jit(double)
    symbolic = graphjit.jit(double, policy="symbolic", dynamic={"x": {0: "S"}})
    for n in (3, 5, 7, 7):
        x = rand(n, 4)
        for f in (exact, auto, symbolic):
            assert np.array_equal(f(x), x * 2)
    # A miss compiles, or finds the same graph's code live in the store (shared: another
    # function traced the same graph).
    def misses(f):
        return f.stats()["compiles"] + f.stats()["shared"]

    assert misses(exact) == 3 and exact.stats()["hits"] == 1
    assert misses(auto) == 2  # exact for 3, then symbolic in the first dim
    assert misses(symbolic) == 1
    assert exact.explain(rand(9, 4)) != ""
    assert exact.explain(rand(7, 4)) == ""


def test_keyword_inputs_and_every_dtype():
    @graphjit.jit
    def add(a, b):
        return a + b

    for dtype in (np.float32, np.float64, np.int64):
        a = np.arange(6, dtype=dtype).reshape(2, 3)
        assert np.array_equal(add(a, b=a), a + a)
    # i32 is a storage type: computed on after a cast (adding two says so).
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    with pytest.raises(ValueError, match="storage type"):
        add(a, a)
    widened = graphjit.jit(lambda x: ops.cast(x, "i64") * 3)(a)
    assert widened.dtype == np.int64 and np.array_equal(widened, a * 3)
    m = np.array([True, False, True])

    @graphjit.jit
    def pick(mask, x):
        return ops.where(mask, x, 0.0)

    assert np.array_equal(pick(m, np.ones(3)), [1.0, 0.0, 1.0])


def test_errors_are_python_exceptions():
    @graphjit.jit
    def product(x, w):
        return x @ w

    with pytest.raises(ValueError, match="matmul"):
        product(rand(4, 8), rand(4, 8))
    with pytest.raises(TypeError, match="takes 2 inputs"):
        product(rand(4, 8))
    with pytest.raises(ValueError, match="dtype"):
        product(np.array(["a"]), rand(2, 2))

    @graphjit.jit
    def raises(x):
        raise KeyError("from the function")

    with pytest.raises(KeyError, match="from the function"):
        raises(rand(2))

    @graphjit.jit
    def indexes(x):
        return x[0]

    with pytest.raises(TypeError, match="slices"):
        indexes(rand(3, 3))
    with pytest.raises(ValueError, match="policy"):
        graphjit.jit(lambda x: x, policy="often")


def test_weights_eager_interpreter_and_compiled_agree():
    w = rand(8, 5, dtype=np.float64, seed=3)
    norm = 1 + 0.1 * rand(8, dtype=np.float64, seed=4)

    def layer(x, norm, w):
        return ops.silu(ops.rms_norm(x, norm, 1e-6) @ w)

    compiled = graphjit.jit(layer, weights={"norm": norm, "w": w})
    eager = graphjit.eager(layer, weights={"norm": norm, "w": w})
    x = rand(3, 8, dtype=np.float64)
    h = x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + 1e-6) * norm @ w
    want = h / (1 + np.exp(-h))
    for got in (compiled(x), eager(x), compiled.interpret(x)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    with pytest.raises(TypeError, match="takes 1 inputs"):
        compiled(x, w)  # weights are not passed per call
    with pytest.raises(ValueError, match="weight 'v' is no parameter"):
        graphjit.jit(layer, weights={"v": w})
    assert compiled.time_native(x, repeat=10) > 0
    with pytest.raises(ValueError, match="repeat"):
        compiled.time_native(x, repeat=0)


def test_kv_write_rope_and_symbolic_reshape():
    @graphjit.jit(policy="symbolic", dynamic={"cache": {1: "S"}})
    def step(cache, row, cos, sin):
        written = ops.kv_write(cache, ops.rope(row, cos, sin))  # the cache's last row
        first = ops.kv_write(cache, row, 0)
        flat = ops.reshape(written, [2 * cache.shape[1] if isinstance(cache.shape[1], int)
                                     else f"2*{cache.shape[1]}", 4])
        return written, first, flat

    rng = np.random.default_rng(5)
    cos, sin = np.cos(rng.standard_normal((1, 1, 4))), np.sin(rng.standard_normal((1, 1, 4)))
    for S in (3, 6):
        cache, row = rng.standard_normal((2, S, 4)), rng.standard_normal((2, 1, 4))
        half = np.concatenate([-row[..., 2:], row[..., :2]], axis=-1)
        written, first, flat = step(cache, row, cos, sin)
        want = cache.copy()
        want[:, -1:] = row * cos + half * sin
        np.testing.assert_allclose(written, want, atol=1e-15)
        want_first = cache.copy()
        want_first[:, :1] = row
        assert np.array_equal(first, want_first)
        assert flat.shape == (2 * S, 4)
    assert step.stats()["compiles"] == 1


def test_more_ops_against_numpy():
    @graphjit.jit
    def f(x, idx):
        return (ops.abs(x), ops.relu(x), ops.cumsum(x, axis=1), ops.argmax(x, axis=1),
                ops.gather(x, idx), ops.expand(x[0:1, :], [3, 4]))

    x = rand(3, 4, dtype=np.float64, seed=7)
    idx = np.array([2, 0], dtype=np.int64)
    a, r, c, m, g, e = f(x, idx)
    assert np.array_equal(a, np.abs(x))
    assert np.array_equal(r, np.maximum(x, 0))
    np.testing.assert_allclose(c, np.cumsum(x, axis=1), atol=1e-15)
    assert np.array_equal(m, np.argmax(x, axis=1))
    assert np.array_equal(g, x[idx])
    assert np.array_equal(e, np.broadcast_to(x[0:1], (3, 4)))


def test_torch_cpu_tensors_pass_without_a_copy():
    torch = pytest.importorskip("torch")
    from graphjit import _graphjit

    @graphjit.jit
    def double(x):
        return x * 2.0

    t = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    before = _graphjit.input_copies()
    assert np.array_equal(double(t), t.numpy() * 2)
    assert _graphjit.input_copies() == before  # shared, not converted
    # A DLPack-only producer (numpy marks what it imports read-only): converted, right values.
    class DLPackOnly:
        def __init__(self, tensor):
            self.tensor = tensor

        def __dlpack__(self, stream=None):
            return self.tensor.__dlpack__()

        def __dlpack_device__(self):
            return self.tensor.__dlpack_device__()

    assert np.array_equal(double(DLPackOnly(t)), t.numpy() * 2)

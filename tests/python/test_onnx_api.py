"""graphjit.onnx from Python: load, run, stats, zero-copy inputs and outputs, every
dtype, errors as Python exceptions, threads."""

import math
import os
import subprocess
import threading

import numpy as np
import pytest

import graphjit
from graphjit import _graphjit

ROOT = os.environ.get("GRAPHJIT_SOURCE_DIR",
                      os.path.join(os.path.dirname(__file__), "..", ".."))
CORPUS = os.path.join(ROOT, "tests", "fuzz", "corpus", "onnx")
ERF = os.path.join(CORPUS, "test_erf.onnx")          # x: f32[1, 3, 32, 32] -> erf(x)
GATHER = os.path.join(CORPUS, "test_gather_0.onnx")  # data: f32[5, 4, 3, 2], indices: i64[3]
# Expand to a shape read from tensor data, which graphjit does not import.
DATA_SHAPED = os.path.join(CORPUS, "test_expand_dim_changed.onnx")


def aligned(shape, dtype, fill):
    """A C-contiguous array whose data is 64-byte aligned (graphjit's buffers are)."""
    dtype = np.dtype(dtype)
    count = int(np.prod(shape))
    raw = np.empty(count * dtype.itemsize + 64, dtype=np.uint8)
    offset = (-raw.ctypes.data) % 64
    a = raw[offset:offset + count * dtype.itemsize].view(dtype).reshape(shape)
    a[...] = fill
    return a


def erf_input():
    return aligned((1, 3, 32, 32), np.float32,
                   np.linspace(-3, 3, 3072, dtype=np.float32).reshape(1, 3, 32, 32))


def test_load_names_and_run():
    model = graphjit.onnx.load(ERF)
    assert model.input_names == ["x"]
    assert len(model.output_names) == 1
    x = erf_input()
    (y,) = model(x=x)
    assert y.dtype == np.float32 and y.shape == (1, 3, 32, 32)
    want = np.vectorize(math.erf)(x.astype(np.float64))
    assert np.max(np.abs(y - want)) < 1e-6
    (y2,) = model.run({"x": x})
    assert np.array_equal(y, y2)


def test_bytes_and_paths_load_the_same_model():
    with open(ERF, "rb") as f:
        data = f.read()
    x = erf_input()
    (a,) = graphjit.onnx.load(data)(x=x)
    (b,) = graphjit.onnx.load(ERF, policy="exact", tier="baseline")(x=x)
    assert np.max(np.abs(a - b)) < 1e-6


def test_stats_count_compiles_and_hits():
    model = graphjit.onnx.load(ERF, policy="exact")
    x = erf_input()
    model(x=x)
    model(x=x)
    s = model.stats()
    assert s["compiles"] + s["shared"] == 1 and s["hits"] == 1 and s["calls"] == 2
    assert model.explain({"x": x}) == ""


def test_aligned_contiguous_inputs_are_not_copied_and_outputs_own_graphjits_buffer():
    model = graphjit.onnx.load(ERF)
    x = erf_input()
    model(x=x)
    before = _graphjit.input_copies()
    (y,) = model(x=x)
    assert _graphjit.input_copies() == before
    # The output wraps graphjit's buffer: numpy does not own it, a capsule keeps it.
    assert not y.flags.owndata and y.base is not None
    # numpy's own arrays (16-byte aligned) are shared too, and give the same bits.
    (z,) = model(x=np.array(x))
    assert _graphjit.input_copies() == before and np.array_equal(z, y)
    # Another layout or dtype, or a view off its elements' alignment, is converted once.
    model(x=x.astype(np.float64))
    model(x=np.asfortranarray(x))
    raw = np.zeros(x.size * 4 + 1, dtype=np.uint8)
    odd = raw[1:].view(np.float32).reshape(x.shape)
    odd[...] = x
    (w,) = model(x=odd)
    assert _graphjit.input_copies() == before + 3 and np.array_equal(w, y)


def test_every_dtype_through_gather():
    model = graphjit.onnx.load(GATHER)
    data = aligned((5, 4, 3, 2), np.float32, np.arange(120, dtype=np.float32).reshape(5, 4, 3, 2))
    for indices in (aligned((3,), np.int64, [0, 1, 3]), np.array([0, 1, 3], dtype=np.int32)):
        (out,) = model(data=data, indices=indices)
        assert np.array_equal(out, data[[0, 1, 3]])


def test_errors_are_python_exceptions():
    model = graphjit.onnx.load(ERF)
    x = erf_input()
    with pytest.raises(KeyError, match="missing input 'x'"):
        model()
    with pytest.raises(KeyError, match="unknown input 'y'"):
        model(x=x, y=x)
    with pytest.raises(ValueError):
        model(x=np.zeros((1, 3, 32), dtype=np.float32))  # rank 3 for rank 4
    with pytest.raises(ValueError):
        model(x=np.zeros((2, 3, 32, 32), dtype=np.float32))  # a constant dim differs
    with pytest.raises((ValueError, TypeError)):
        model(x=np.array(["a"]))
    with pytest.raises(FileNotFoundError):
        graphjit.onnx.load(os.path.join(CORPUS, "no_such_model.onnx"))
    with pytest.raises(ValueError):
        graphjit.onnx.load(b"not a model")
    with pytest.raises(ValueError, match="policy"):
        graphjit.onnx.load(ERF, policy="sometimes")
    with pytest.raises(ValueError, match="tier"):
        graphjit.onnx.load(ERF, tier="o9")
    with pytest.raises(ValueError, match="threads"):
        graphjit.onnx.load(ERF, threads=0)
    with pytest.raises(NotImplementedError, match="depends on tensor data"):
        with open(DATA_SHAPED, "rb") as f:  # by bytes: no file to import again per call
            graphjit.onnx.load(f.read())


def test_dump_prints_every_stage():
    model = graphjit.onnx.load(ERF)
    assert "erf(" in model.dump("traced")
    assert "erf(" in model.dump("optimized")
    assert "kernel k0" in model.dump("kernels")
    assert "define" in model.dump("llvm")
    assert "define" in model.dump("llvm-opt")
    assert "ret" in model.dump("asm")
    with pytest.raises(ValueError, match="unknown stage"):
        model.dump("parsed")
    with pytest.raises(ValueError, match="dynamic dims are none"):
        model.dump("kernels", N=1)


def test_concurrent_calls_from_python_threads():
    model = graphjit.onnx.load(ERF, threads=1)
    x = erf_input()
    (want,) = model(x=x)
    results, errors = [], []

    def call():
        try:
            for _ in range(20):
                results.append(model(x=x)[0])
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=call) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(results) == 80
    assert all(np.array_equal(r, want) for r in results)


def test_the_same_bits_as_the_cpp_api(tmp_path):
    """graphjit-run (the C++ API's tool, .npy in and out) and Python give the same bits."""
    tool = os.path.join(os.environ.get("GRAPHJIT_BIN_DIR", ""), "graphjit-run")
    if not os.path.exists(tool):
        pytest.skip("graphjit-run is not built (GRAPHJIT_BIN_DIR names the build's bin/)")
    for model_path, inputs in (
            (ERF, {"x": erf_input()}),
            (GATHER, {"data": np.arange(120, dtype=np.float32).reshape(5, 4, 3, 2) / 7,
                      "indices": np.array([4, 0, 2], dtype=np.int64)})):
        flags = []
        for name, array in inputs.items():
            path = tmp_path / f"{name}.npy"
            np.save(path, array)
            flags.append(f"--input={name}=@{path}")
        out_dir = tmp_path / os.path.basename(model_path)
        subprocess.run([tool, model_path, *flags, f"--output_dir={out_dir}"], check=True,
                       capture_output=True)
        (got,) = graphjit.onnx.load(model_path)(**inputs)
        want = np.load(out_dir / "output0.npy")
        assert got.dtype == want.dtype and got.shape == want.shape
        assert got.tobytes() == want.tobytes()


def test_a_model_needing_values_is_specialized_per_call_or_on_known_inputs():
    """Tile's repeats as an input: loaded by path, each call's repeats are under a guard
    (a new value compiles another specialization); fixed by known_inputs at import; by
    bytes refused naming the input."""
    case = "/usr/share/libonnx-testdata/data/node/test_tile"
    if not os.path.isdir(case):
        pytest.skip("libonnx-testdata is missing (scripts/bootstrap.sh installs it)")
    path = os.path.join(case, "model.onnx")
    x = np.random.default_rng(1).standard_normal((2, 3, 4, 5)).astype(np.float32)
    model = graphjit.onnx.load(path)
    assert model.input_names == ["x", "y"]
    for repeats in ([1, 2, 1, 3], [2, 1, 1, 1], [1, 2, 1, 3]):
        r = np.array(repeats, dtype=np.int64)
        (z,) = model(x, r)
        assert np.array_equal(z, np.tile(x, r))
    stats = model.stats()
    assert stats["specializations"] == 2 and stats["specialized_inputs"] == ["y"]
    with pytest.raises(TypeError, match="specialized per call"):
        model.dump("traced")
    with pytest.raises(KeyError, match="missing input 'y'"):
        model(x=x)
    with pytest.raises(NotImplementedError, match="input 'y' must be known at import"):
        with open(path, "rb") as f:
            graphjit.onnx.load(f.read())
    repeats = np.array([1, 2, 1, 3], dtype=np.int64)
    model = graphjit.onnx.load(path, known_inputs={"y": repeats})
    assert model.input_names == ["x"]
    (z,) = model(x=x)
    assert np.array_equal(z, np.tile(x, repeats))


def test_sizes_that_depend_on_data_are_numpy_shapes_of_one_compile():
    """NonZero's columns of x gathered, and the rows two Compress ops keep (by c and by
    not(not(c)), asserted equal) added: every count, 0 included, from one compiled entry."""
    model = graphjit.onnx.load(os.path.join(CORPUS, "data_dependent_counts.onnx"))
    rng = np.random.default_rng(3)
    for positives in (0, 1, 7):
        x = -np.abs(rng.standard_normal((4, 3))).astype(np.float32)
        x.flat[rng.permutation(12)[:positives]] *= -1
        c = np.array([True, False, True, True])
        picked, total = model(x=x, c=c)
        cols = np.nonzero(x > 0)[1]
        assert np.array_equal(picked, x[:, cols])
        assert np.array_equal(total, x[c] + x[c])
    assert model.stats()["compiles"] == 1
    model(x=x, c=np.zeros(4, dtype=bool))  # no rows: [0, 3]


def test_unique_gives_numpys_unique_from_one_compile():
    """ONNX Unique (sorted, flattened): the distinct ids, each one's first index, every
    id's index among them and the counts, as numpy.unique gives them: one compile for
    six ids whatever their count of distinct ones."""
    model = graphjit.onnx.load(os.path.join(CORPUS, "unique_ids.onnx"))
    for ids in ([5, 3, 5, 5, 1, 3], [7] * 6, [6, 5, 4, 3, 2, 1], [2, 2, 1, 1, 0, 0]):
        ids = np.array(ids, dtype=np.int64)
        got = model(ids=ids)
        want = np.unique(ids, return_index=True, return_inverse=True, return_counts=True)
        for g, w in zip(got, want):
            assert np.array_equal(g, w), (ids, got, want)
    assert model.stats()["compiles"] == 1


def test_example_inputs_import_silero_vad_and_stream_it():
    """Silero VAD: its If on sr and its Ifs on the batch are decided by a call's inputs; the
    state carried from chunk to chunk; the same model by its known_inputs alone refused."""
    fetch = os.environ.get("GRAPHJIT_FETCH_DIR", os.path.join(ROOT, "third_party", "fetched"))
    path = os.path.join(fetch, "silero-vad", "silero_vad.onnx")
    if not os.path.exists(path):
        pytest.skip(f"{path} is missing: run scripts/fetch_models.sh")
    sr = np.array(16000, dtype=np.int64)
    # Its symbolic import stops at dims (a reflect pad of the symbolic sample count).
    with pytest.raises(NotImplementedError, match="sequence"):
        graphjit.onnx.load(path, known_inputs={"sr": sr})
    state = np.zeros((2, 1, 64), np.float32)
    t = np.arange(512 * 8, dtype=np.float32) / 16000
    audio = (0.3 * np.sin(2 * np.pi * 220 * t)).astype(np.float32)
    model = graphjit.onnx.load(path, example_inputs={"input": audio[None, :512], "sr": sr,
                                                     "h": state, "c": state})
    assert model.input_names == ["input", "h", "c"]
    assert model.output_names == ["output", "hn", "cn"]
    h = c = state
    probs = []
    for k in range(8):
        p, h, c = model(input=audio[None, 512 * k:512 * (k + 1)], h=h, c=c)
        assert p.shape == (1, 1) and h.shape == (2, 1, 64) and c.shape == (2, 1, 64)
        probs.append(float(p[0, 0]))
    assert all(0.0 <= p <= 1.0 for p in probs)
    assert len(set(probs)) > 1, "the carried state changes the probabilities"
    assert model.stats()["compiles"] == 1
    with pytest.raises(ValueError, match="example_inputs needs the model's path"):
        graphjit.onnx.load(open(path, "rb").read(), example_inputs={"sr": sr})

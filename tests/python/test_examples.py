"""The Python examples run and say what they should: the lecture's four demos on a Python
decode layer (compile counts per policy, every policy's outputs equal to exact's, the
lazy loop's graph breaks, every way of demo 4 equal to numpy) and the OCR example reading
a rendered line as the C++ example does."""

import importlib.util
import os
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.environ.get("GRAPHJIT_SOURCE_DIR",
                      os.path.join(os.path.dirname(__file__), "..", ".."))
EXAMPLES = os.path.join(ROOT, "examples", "python")


def load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(EXAMPLES, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def lecture():
    return load("dynamic_shapes")


def test_demo1_policies_compile_counts_and_equal_outputs(lecture, capsys):
    steps = 30  # KV lengths 101 .. 130
    results = lecture.demo1(lecture.layer_params(), steps)
    lengths = range(101, 101 + steps)
    assert results["exact"][0] == steps
    assert results["pow2"][0] == len({1 << (S - 1).bit_length() for S in lengths})
    assert results["mult128"][0] == len({-(-S // 128) * 128 for S in lengths})
    assert results["symbolic"][0] == 1
    assert 1 <= results["auto"][0] <= 2  # exact first, symbolic once the length moved
    for policy, (_, diff) in results.items():
        assert diff < 1e-12, policy
    assert "max |diff| vs exact" in capsys.readouterr().out


def test_demo2_one_symbolic_graph(lecture):
    assert lecture.demo2(lecture.layer_params()) == 1


def test_demo3_graph_breaks(lecture):
    iterations, graphs, compiles, diff = lecture.demo3()
    assert iterations > 5
    assert graphs >= iterations  # one graph per iteration at least: each needs a value
    assert compiles < graphs     # equal graphs share their code
    assert diff < 1e-12


def test_demo4_every_way_agrees_with_numpy(lecture):
    t = lecture.demo4(lecture.layer_params(), reps=20)
    assert t["max_diff"] < 1e-12
    assert all(t[k] > 0 for k in ("numpy", "eager", "interpreter", "python", "native"))


def test_the_python_layer_equals_numpy_at_symbolic_lengths(lecture):
    import graphjit

    params = lecture.layer_params()
    f = graphjit.jit(lecture.decode_layer, policy="symbolic", weights=params,
                     dynamic={"k_cache": {1: "S"}, "v_cache": {1: "S"}})
    rng = np.random.default_rng(4)
    for S in (2, 3, 17):
        ins = [rng.standard_normal((1, lecture.D)), rng.standard_normal((lecture.G, S, lecture.DH)),
               rng.standard_normal((lecture.G, S, lecture.DH)), *lecture.rope_tables(S - 1)]
        got = f(*ins)
        want = lecture.numpy_layer(*ins, params)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=0, atol=1e-12)
    assert f.stats()["compiles"] == 1


def fetched(*parts):
    base = os.environ.get("GRAPHJIT_FETCH_DIR") or os.path.join(ROOT, "third_party", "fetched")
    return os.path.join(base, *parts)


def test_ocr_example_reads_a_rendered_line(tmp_path):
    model = fetched("ocr-models", "ch_PP-OCRv4_rec_infer.onnx")
    if not os.path.exists(model):
        pytest.skip(f"{model} is missing: run scripts/fetch_models.sh")
    try:
        import PIL  # noqa: F401
    except ImportError:
        pytest.skip("python3-pil is missing (scripts/bootstrap.sh installs it)")
    text = "graphjit reads 42 lines"
    line = tmp_path / "line.ppm"
    subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "render_text_line.py"), text,
                    str(line)], check=True)
    env = dict(os.environ, GRAPHJIT_FETCH_DIR=fetched())
    out = subprocess.run([sys.executable, os.path.join(EXAMPLES, "ocr.py"), str(line)],
                         capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == text
    # The C++ example on the same image, when built, reads the same.
    tool = os.path.join(os.environ.get("GRAPHJIT_BIN_DIR", ""), "ocr")
    if os.path.exists(tool):
        cpp = subprocess.run([tool, str(line), fetched()], capture_output=True, text=True,
                             check=True)
        assert cpp.stdout.strip() == out.stdout.strip()
    bad = subprocess.run([sys.executable, os.path.join(EXAMPLES, "ocr.py"),
                          str(tmp_path / "missing.ppm")], capture_output=True, text=True, env=env)
    assert bad.returncode == 1 and "ocr:" in bad.stderr


def test_the_python_layer_gives_the_cpp_decode_models_bits(lecture, tmp_path):
    """The layer written in Python, compiled by graphjit.jit, against the C++ decode model
    run by graphjit-run on the same weights and inputs: the same bits."""
    import graphjit

    tool = os.path.join(os.environ.get("GRAPHJIT_BIN_DIR", ""), "graphjit-run")
    if not os.path.exists(tool):
        pytest.skip("graphjit-run is not built (GRAPHJIT_BIN_DIR names the build's bin/)")
    spec = (f"decode:d={lecture.D},H={lecture.H},G={lecture.G},dh={lecture.DH},f={lecture.F},"
            "dtype=f64")
    subprocess.run([tool, spec, f"--save-weights={tmp_path / 'w'}"], check=True,
                   capture_output=True)
    weights = {n[:-4]: np.load(tmp_path / "w" / n) for n in os.listdir(tmp_path / "w")}
    rng = np.random.default_rng(9)
    S = 64
    inputs = {"x": rng.standard_normal((1, lecture.D)),
              "k_cache": rng.standard_normal((lecture.G, S, lecture.DH)),
              "v_cache": rng.standard_normal((lecture.G, S, lecture.DH))}
    inputs["cos"], inputs["sin"] = lecture.rope_tables(S - 1)
    flags = []
    for name, array in inputs.items():
        np.save(tmp_path / f"{name}.npy", array)
        flags.append(f"--input={name}=@{tmp_path / name}.npy")
    subprocess.run([tool, spec, *flags, f"--weights={tmp_path / 'w'}", "--bind", f"P={S - 1}",
                    f"--output_dir={tmp_path / 'out'}"], check=True, capture_output=True)
    got = graphjit.jit(lecture.decode_layer, policy="exact", weights=weights)(**inputs)
    for i, array in enumerate(got):
        want = np.load(tmp_path / "out" / f"output{i}.npy")
        assert array.shape == want.shape and array.tobytes() == want.tobytes(), i

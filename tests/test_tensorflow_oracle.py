"""TensorFlow itself as the oracle of its spelling: every TensorFlow example of the corpus
(tests/corpus/spellings/tf_*.py, typed as the guide publishes it) is run by real TensorFlow
(tensorflow-cpu from PyPI, in one child process: its import is slow and its runtime is kept
apart from torch's), and gradtrace must print what it prints, line for line, each number
within float32's precision (TensorFlow computes in float32, gradtrace in float64). The tape's
gradients of six functions are checked the same way (TensorFlow's in float32, as a program's
`tf.Variable` of a list is, so to float32's precision)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from engine import run_program
from tests.test_corpus_spellings import CORPUS, NEEDS, NUMBER
from tests.test_spellings_tf import FUNCTIONS, WS, XS

pytest.importorskip("tensorflow")

FILES = sorted(p for p in CORPUS.glob("tf_*.py"))

CHILD = textwrap.dedent(
    """
    import contextlib, io, json, os, sys
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
    import numpy as np
    import tensorflow as tf
    ask = json.load(sys.stdin)
    out = {"prints": {}, "grads": {}}
    for name, source in ask["programs"].items():
        buf = io.StringIO()
        try:
            with contextlib.redirect_stdout(buf):
                exec(compile(source, name, "exec"), {"__name__": "__main__"})
            out["prints"][name] = {"text": buf.getvalue(), "error": None}
        except Exception as e:
            out["prints"][name] = {"text": buf.getvalue(), "error": type(e).__name__}
    for name, body in ask["functions"].items():
        x = tf.Variable(ask["x"])  # float32, as a program's tf.Variable of a list is
        w = tf.Variable(ask["w"])
        with tf.GradientTape() as tape:
            y = eval(body, {"tf": tf, "x": x, "w": w})
        gx, gw = tape.gradient(y, [x, w])
        out["grads"][name] = [float(y.numpy()), gx.numpy().tolist(), gw.numpy().tolist()]
    print(json.dumps(out))
    """
)


@pytest.fixture(scope="module")
def tensorflow_ran() -> dict:
    ask = {
        "programs": {p.stem: p.read_text() for p in FILES},
        "functions": {name: spelled for name, (spelled, _) in FUNCTIONS.items()},
        "x": XS,
        "w": WS,
    }
    done = subprocess.run(
        [sys.executable, "-c", CHILD], input=json.dumps(ask), capture_output=True, text=True,
        timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def same_print(ours: str, theirs: str) -> bool:
    """The same text, and each number equal to float32's precision."""
    if NUMBER.sub("#", ours).split() != NUMBER.sub("#", theirs).split():
        return False
    for a, b in zip(NUMBER.findall(ours), NUMBER.findall(theirs), strict=True):
        if abs(float(a) - float(b)) > 1e-5 * max(1.0, abs(float(b))):
            return False
    return True


def case(p: Path) -> object:
    marks = [pytest.mark.xfail(strict=True, reason=NEEDS[p.stem])] if p.stem in NEEDS else []
    return pytest.param(p, marks=marks, id=p.stem)


@pytest.mark.parametrize("path", [case(p) for p in FILES])
def test_a_tensorflow_example_prints_what_tensorflow_prints(tensorflow_ran, path: Path) -> None:
    theirs = tensorflow_ran["prints"][path.stem]
    assert theirs["error"] is None, theirs
    ours = "\n".join(p["text"] for p in run_program(path.read_text()).printed)
    want = theirs["text"].rstrip("\n")
    assert same_print(ours, want), f"gradtrace:\n{ours}\nTensorFlow:\n{want}"


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_the_tape_gives_tensorflows_gradients(tensorflow_ran, name: str) -> None:
    spelled, _ = FUNCTIONS[name]
    source = (
        f"import tensorflow as tf\nx = tf.Variable({XS})\nw = tf.Variable({WS})\n"
        f"with tf.GradientTape() as tape:\n    y = {spelled}\ngx, gw = tape.gradient(y, [x, w])"
    )
    env = run_program(source).interpreter.env
    value, gx, gw = tensorflow_ran["grads"][name]
    np.testing.assert_allclose(float(np.asarray(env["y"].data)), value, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(env["gx"].data), gx, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(env["gw"].data), gw, rtol=1e-5, atol=1e-6)

"""Published examples in the other spellings (issue 25): TensorFlow's GradientTape, HIPS
autograd, micrograd, tinygrad, seeded draws — typed as their sources publish them, one file
each under tests/corpus/spellings/, its header naming the source. Each runs and prints what the
source shows it printing (numbers to the digits shown; TensorFlow prints float32 and gradtrace
computes in float64, so a number is compared to the digits the source shows). Examples that
need what the language leaves out are expected to fail, with why (NEEDS, strict)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from engine import run_program

CORPUS = Path(__file__).parent / "corpus" / "spellings"
NUMBER = re.compile(r"-?\d+\.?\d*(?:e[-+]?\d+)?")

REAL: list[str] = []  # what the real library prints running the file (installed for tests)
PRINTED: dict[str, list[str]] = {
    "tf_autodiff_gradient_tapes": ["6.0"],
    "tf_autodiff_watch_constant": ["6.0"],
    "tf_autodiff_what_is_watched": [
        "tf.Tensor(6.0, shape=(), dtype=float32)",
        "None",
        "None",
        "None",
    ],  # fmt: skip
    "tf_autodiff_watch_accessed_variables": ["dy/dx0: None", "dy/dx1: 0.9999546"],
    "tf_autodiff_intermediate": ["18.0"],
    "tf_autodiff_persistent": ["[  4. 108.]", "[2. 6.]"],
    "tf_autodiff_two_targets": ["4.0", "-0.25"],
    "tf_autodiff_target_dict": ["3.75"],
    "tf_autodiff_vector_target": ["7.0"],
    "tf_autodiff_control_flow": ["tf.Tensor(1.0, shape=(), dtype=float32)", "None", "None"],
    "tf_autodiff_not_connected": ["None"],
    "tf_autodiff_model_gradients": ["(3, 2)", "(3, 2)"],
    "tf_advanced_higher_order": ["dy_dx: 3.0", "d2y_dx2: 6.0"],
    "tf_advanced_stop_gradient": [
        "dz/dx: tf.Tensor(4.0, shape=(), dtype=float32)",
        "dz/dy: None",
    ],  # fmt: skip
    "tf_advanced_jacobian_scalar": ["(201,)", "(201,)"],
    "tf_autodiff_numpy_breaks_tape": ["None"],
    "tf_autodiff_variable_replaced": [
        "ResourceVariable : tf.Tensor(1.0, shape=(), dtype=float32)",
        "EagerTensor : None",
    ],  # fmt: skip
    "makemore_generator_rand": ["tensor([0.7081, 0.3542, 0.1054])"],
    "makemore_generator_weights": ["tensor([ 1.5674, -0.2373, -0.0274], grad_fn=<SliceBackward0>)"],
    "numpy_seed_randn": ["[1.76405235 0.40015721 0.97873798]"],
    "hips_autograd_readme_tanh": ["0.41997434161402603", "0.41997434264973155"],
    "hips_autograd_readme_higher": REAL,
    "hips_autograd_tutorial_logistic": REAL,
    "tinygrad_readme": [
        "[[2.0, 2.0, 2.0], [0.0, 0.0, 0.0], [-2.0, -2.0, -2.0]]",
        "[[1.0, 1.0, 1.0]]",
    ],  # fmt: skip
    "micrograd_lecture_neuron": ["0.7071", "-1.5 1.0 0.5 0.0"],
}
NEEDS = {
    "tf_autodiff_variable_replaced": "type(x).__name__ (Python's type of a value, and "
    "TensorFlow's class names ResourceVariable and EagerTensor)",
    "tf_autodiff_numpy_breaks_tape": "a NumPy step inside the tape: TensorFlow's tape does not "
    "see np.mean, so its gradient is None; gradtrace records NumPy's ops as its own and gives "
    "the gradient through them",
}


def close(got: str, want: str) -> bool:
    """The same text, and each number within half a unit of the last digit the source shows
    (and float32's 1e-7)."""
    if " ".join(NUMBER.sub("#", got).split()) != " ".join(NUMBER.sub("#", want).split()):
        return False
    for g, w in zip(NUMBER.findall(got), NUMBER.findall(want), strict=True):
        mantissa = w.split("e")[0]
        digits = len(mantissa.split(".")[1]) if "." in mantissa else 0
        scale = 10 ** int(w.split("e")[1]) if "e" in w else 1
        if abs(float(g) - float(w)) > 0.5 * 10**-digits * scale + 1e-7 * abs(float(w)):
            return False
    return True


def real_prints(path: Path) -> list[str]:
    """The library's own run of a corpus file (HIPS autograd): what it prints."""
    pytest.importorskip("autograd")
    shown: list[str] = []

    def show(*args: object, sep: str = " ", **_: object) -> None:
        shown.append(sep.join(map(str, args)))

    exec(compile(path.read_text(), str(path), "exec"), {"print": show})  # noqa: S102 - ours
    return shown


def case(name: str) -> object:
    marks = [pytest.mark.xfail(strict=True, reason=NEEDS[name])] if name in NEEDS else []
    return pytest.param(name, marks=marks, id=name)


def test_every_file_has_its_expectation_and_a_header() -> None:
    files = {p.stem for p in CORPUS.glob("*.py")}
    assert files == set(PRINTED), files ^ set(PRINTED)
    for p in CORPUS.glob("*.py"):
        head = p.read_text().splitlines()[:6]
        assert head[0].startswith("# source: "), p.name
        assert any(line.startswith("# url: ") for line in head), p.name


@pytest.mark.parametrize("name", [case(n) for n in sorted(PRINTED)])
def test_a_published_example_prints_what_its_source_shows(name: str) -> None:
    r = run_program((CORPUS / f"{name}.py").read_text())
    printed = [p["text"] for p in r.printed]
    want = PRINTED[name] if PRINTED[name] is not REAL else real_prints(CORPUS / f"{name}.py")
    assert len(printed) == len(want), printed
    for got, shown in zip(printed, want, strict=True):
        assert close(got, shown), (got, shown)

"""The lesson texts a student reads: gradient check's digits, forward mode's tangents, the words
for the seed, the grad_fn sentence and ū."""

from __future__ import annotations

import json
from pathlib import Path

from engine import lessons
from engine.autograd.ops import GRADIENT_OPS, OPS
from engine.lessons.forward import tangent_name
from engine.program import run_program

WORDS = Path(__file__).resolve().parents[1] / "engine" / "words"


def words(lang: str) -> dict[str, str]:
    return json.loads((WORDS / f"{lang}.json").read_text(encoding="utf-8"))


def test_gradient_check_prints_enough_digits_to_see_the_difference():
    data = lessons.gradcheck(run_program("L = x*x + 3", {"x": 2}))
    texts = data["rows"][0]["texts"]
    up, down, diff = (float(texts[k]) for k in ("up", "down", "diff"))
    assert texts["up"] != texts["down"]  # 7.00004… against 6.99996…: not "7" and "7"
    assert up > down and abs((up - down) - diff) < 1e-12
    assert abs(diff - 8e-5) < 1e-9  # L'(2)·2ε = 4·2e-5
    assert texts["up"] == "7.000040000" and texts["down"] == "6.999960000"


def test_forward_mode_writes_tangents_as_a_student_reads_them():
    data = lessons.forward_mode(run_program("out = x*y + x", {"x": 2, "y": 3}))
    assert "˙" not in "".join(data["rules"].values())
    assert data["rules"]["n2"] == "x\u0307·y + x·y\u0307"  # ẋ·y + x·ẏ
    assert data["tangents"]["n3"] == "d out"
    assert data["tangents"]["n0"] == "x\u0307"  # the dot over the letter, one character wide
    assert tangent_name("a*b") == "d(a*b)"
    assert not any("˙" in cls.jvp_rule for cls in [*OPS.values(), *GRADIENT_OPS.values()])


def test_the_seed_of_a_scalar_is_1_and_grad_fn_needs_no_article():
    for lang in ("en", "zh"):
        w = words(lang)
        assert "{shape}" not in w["ls_sh_seed_scalar"] and "1" in w["ls_sh_seed_scalar"]
    en = words("en")
    assert "a {fn}" not in en["ls_code_step"]  # "a AddBackward0"
    assert "<{fn}>" in en["ls_code_step"]


def test_u_bar_is_defined_in_both_languages():
    for lang in ("en", "zh"):
        assert words(lang)["legend_upstream"].startswith("ū = ")


def test_the_new_words_are_in_both_languages():
    en, zh = words("en"), words("zh")
    new = [k for k in en if k.startswith("value_")] + ["ls_gc_now_exact"]
    assert len(new) >= 6
    for key in new:
        assert key in zh and zh[key] != en[key]

"""The parameters' contract: check_param and check_rule, every notebook's setup cell refusing
what its contract refuses (by name), and the fuzzer's draws staying inside the contracts."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import textwrap

import pytest

from course_utils import ParameterError, check_param, check_rule
from tests.nbtools import REPO, course_notebooks
from tools import fuzz
from tools.gpu_run import load_preset


@pytest.mark.parametrize("value, kind, kwargs", [
    (3, int, {"low": 1}), (1, int, {"low": 1}), (2**32 - 1, int, {"high": 2**32 - 1}),
    (0.5, float, {"low": 0, "low_open": True}), (2, float, {}), (False, bool, {}),
    ("float64", str, {"choices": ("float32", "float64")}), (None, int, {"none_ok": True}),
    ([1, 2, 9], list, {"of": int, "rising": True, "low": 1}), ((0.5,), list, {}),
    ([3, 3], list, {"of": int}), ([2, 3], list, {"min_len": 2}),
])
def test_allowed_values_pass_and_come_back(value, kind, kwargs):
    assert check_param("X", value, kind, **kwargs) is value


@pytest.mark.parametrize("value, kind, kwargs, allowed", [
    (2.0, int, {}, "an integer"), (True, int, {}, "an integer"), ("8", int, {}, "an integer"),
    (0, int, {"low": 1}, "an integer >= 1"), (11, int, {"high": 10}, "an integer <= 10"),
    (True, float, {}, "a number"), (float("nan"), float, {}, "a number"),
    (float("inf"), float, {}, "a number"), (0, float, {"low": 0, "low_open": True}, "> 0"),
    (-0.5, float, {"low": 0}, ">= 0"), (1, bool, {}, "True or False"),
    ("yes", bool, {}, "True or False"), (None, bool, {}, "True or False"),
    ("fp16", str, {"choices": ("float32", "float64")}, "one of 'float32', 'float64'"),
    (0, int, {"low": 1, "none_ok": True, "none_means": "the default"},
     "None (the default) or an integer >= 1"),
    ([], list, {}, "a non-empty list"), (5, list, {}, "a non-empty list"),
    ([3, 2], list, {"rising": True}, "strictly rising"),
    ([2, 2], list, {"rising": True}, "strictly rising"),
    ([1, 2.5], list, {"of": int}, "list of integers"), ([0], list, {"low": 1}, ">= 1"),
    ([4], list, {"min_len": 2}, "a list of at least 2"),
])
def test_refusals_name_the_parameter_the_value_and_what_is_allowed(value, kind, kwargs,
                                                                   allowed):
    with pytest.raises(ParameterError) as err:
        check_param("SIZE", value, kind, **kwargs)
    message = str(err.value)
    assert message.startswith(f"SIZE = {value!r} is refused: SIZE must be ")
    assert allowed in message
    assert isinstance(err.value, ValueError)  # callers catching ValueError still do


def test_rules_and_bad_specifications():
    check_rule(True, "SEGMENTS", 3, "a divisor of DEPTH")
    with pytest.raises(ParameterError, match=r"^SEGMENTS = 3 is refused: SEGMENTS must be a "
                                             r"divisor of DEPTH = 8\.$"):
        check_rule(8 % 3 == 0, "SEGMENTS", 3, "a divisor of DEPTH = 8")
    with pytest.raises(TypeError):
        check_param("X", 1, dict)
    with pytest.raises(TypeError):
        check_param("X", [1], list, of=dict)
    with pytest.raises(ValueError, match="low 3 above high 2"):
        check_param("X", 1, int, low=3, high=2)


NOTEBOOKS = course_notebooks()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_parameter_has_a_contract(path):
    named = {spec.name for spec in fuzz.contract(path)}
    assert set(fuzz.defaults(path)) == named


@pytest.mark.parametrize("preset", ["defaults", "ci", "gpu"], ids=["defaults", "ci-preset", "full-size-preset"])
def test_presets_and_draws_keep_to_the_contracts(preset):
    rng = random.Random(0)
    presets = load_preset(preset)
    for path in NOTEBOOKS:
        base = {**fuzz.defaults(path), **presets.get(path.name, {})}
        for spec in fuzz.contract(path):
            literal = {k: v for k, v in vars(spec).items()
                       if k not in ("name", "kind", "expressions") and v is not None}
            literal = {k: v for k, v in literal.items() if not (k == "of")} | (
                {"of": {"int": int, "float": float, "str": str}[spec.of]} if spec.of else {})
            kind = {"int": int, "float": float, "bool": bool, "str": str, "list": list}
            check_param(spec.name, base[spec.name], kind[spec.kind], **literal)
            for _ in range(20 if preset == "ci" else 0):  # draws start from the CI preset
                check_param(spec.name, fuzz.draw(spec, base[spec.name], rng),
                            kind[spec.kind], **literal)


# Runs the import, parameters and setup cells of each notebook with some parameters changed:
# to a value the contract refuses (the setup cell must refuse it by name), or to a preset
# (it must pass). Prints the cases that went otherwise.
HARNESS = textwrap.dedent("""
    import json, sys, matplotlib
    matplotlib.use("Agg")
    from course_utils import ParameterError
    cases, missed = json.loads(sys.argv[1]), []
    for path, imports, params, setup, checks in cases:
        base = {}
        exec("\\n".join(l for l in imports.splitlines() if not l.startswith("%")), base)
        for changes, refused in checks:
            ns = dict(base)
            exec(params, ns)
            ns.update(changes)
            try:
                exec(setup, ns)
                if refused:
                    missed.append([path, changes, "accepted"])
            except ParameterError as err:
                if not refused or not str(err).startswith(refused + " = "):
                    missed.append([path, changes, str(err)])
            except Exception as err:
                missed.append([path, changes, type(err).__name__ + ": " + str(err)])
    print(json.dumps(missed))
""")


def test_setup_cells_refuse_what_the_contract_refuses_by_name_and_pass_the_presets(tmp_path):
    presets = [load_preset(name) for name in ("defaults", "ci", "gpu")]
    cases = []
    for path in NOTEBOOKS:
        params, setup = fuzz._cells(path)
        imports = fuzz.nbformat.read(path, as_version=4).cells[1].source
        bad = [({spec.name: value}, spec.name) for spec in fuzz.contract(path)
               for value in fuzz.invalid_values(spec)]
        assert len(bad) >= 2 * len(fuzz.defaults(path))
        good = [(preset.get(path.name, {}), None) for preset in presets]
        cases.append([path.name, imports, params.source, setup.source, bad + good])
    done = subprocess.run([sys.executable, "-c", HARNESS, json.dumps(cases)],
                          cwd=REPO / "notebooks", capture_output=True, text=True, timeout=300,
                          env={**os.environ, "TMPDIR": str(tmp_path)})  # what setups make
    assert done.returncode == 0, done.stderr[-2000:]
    missed = json.loads(done.stdout.strip().splitlines()[-1])
    assert not missed, "\n".join(map(str, missed))


@pytest.mark.parametrize("args, kwargs, message", [
    (("N", 0, int), {"low": 1, "high": 9}, "N = 0 is refused: N must be an integer >= 1 and <= 9."),
    (("L", [2, 1], list), {"of": int, "rising": True},
     "L = [2, 1] is refused: L must be a non-empty list of integers, strictly rising."),
    (("L", [], list), {}, "L = [] is refused: L must be a non-empty list of numbers."),
    (("L", [0], list), {"low": 1}, "L = [0] is refused: L must be a non-empty list of numbers >= 1."),
    (("B", 1, bool), {}, "B = 1 is refused: B must be True or False."),
    (("M", 0, int), {"low": 1, "none_ok": True},
     "M = 0 is refused: M must be None (automatic) or an integer >= 1."),
    (("F", 0.0, float), {"low": 0, "low_open": True}, "F = 0.0 is refused: F must be a number > 0."),
    (("R", ["a", "c"], list), {"of": str, "choices": ("a", "b")},
     "R = ['a', 'c'] is refused: R must be a non-empty list of strings, each one of 'a', 'b'."),
    (("R", [1], list), {"of": str}, "R = [1] is refused: R must be a non-empty list of strings."),
    (("S", "x", str), {}, None),
])
def test_refusal_messages_word_for_word(args, kwargs, message):
    if message is None:
        assert check_param(*args, **kwargs) == "x"
        return
    with pytest.raises(ParameterError) as err:
        check_param(*args, **kwargs)
    assert str(err.value) == message


def test_a_single_allowed_value_and_a_bad_kind():
    assert check_param("W", 4, int, low=4, high=4) == 4  # low equal to high is allowed
    with pytest.raises(TypeError, match=r"^check_param: kind must be one of \[<class 'int'>, "
                                        r"<class 'float'>, <class 'bool'>, <class 'str'>, "
                                        r"<class 'list'>\], of int, float or str\.$"):
        check_param("X", 1, int, of=dict)

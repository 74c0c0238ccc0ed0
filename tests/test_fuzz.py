"""tools/fuzz.py on a small made-up notebook: the contract it reads from a setup cell, the
values it refuses and draws, the command that reruns a set, and a whole run with the
notebook runs stood in for (refusals redrawn, failures reported, the exit status)."""

from __future__ import annotations

import json
import re
import random
from pathlib import Path

import nbformat
import pytest

from course_utils import ParameterError, check_param
from tools import fuzz
from tools.gpu_run import Row

SETUP = '''# Setup: check the parameters.
check_param("DEVICE", DEVICE, str, none_ok=True, none_means="the best device here")
check_param("SIDE", SIDE, int, low=2, high=2**6)
check_param("RATE", RATE, float, low=0, low_open=True)
check_param("BATCH", BATCH, int, low=1, high=SIDE**2)
check_param("SIZES", SIZES, list, of=int, low=1, rising=True, min_len=2)
check_param("KIND", KIND, str, choices=("a", "b", "c"))
check_param("STEPS", STEPS, list, of=str, choices=("x", "y", "z"))
check_param("FLAG", FLAG, bool)
check_param("SAVE_RESULTS", SAVE_RESULTS, bool)
check_param("WORKERS", WORKERS, int, low=1, none_ok=True)'''

PARAMS = '''DEVICE = None
SIDE = 8
RATE = 0.5
BATCH = 16
SIZES = [4, 8, 16]
KIND = "a"
STEPS = ["x", "y", "z"]
FLAG = False
SAVE_RESULTS = False
WORKERS = None'''


def _notebook(path: Path, setup: str = SETUP, tagged: bool = True, params: str = PARAMS) -> Path:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell(params)
    if tagged:
        cell.metadata["tags"] = ["parameters"]
    nb.cells = [nbformat.v4.new_markdown_cell("# 42 · A question?"),
                nbformat.v4.new_code_cell("import math"), cell,
                nbformat.v4.new_markdown_cell("The setup is the next code cell."),
                nbformat.v4.new_code_cell(setup), nbformat.v4.new_code_cell("print(SIDE)")]
    nbformat.write(nb, path)
    return path


@pytest.fixture
def notebook(tmp_path: Path) -> Path:
    return _notebook(tmp_path / "42_demo.ipynb")


def _spec(notebook: Path, name: str) -> fuzz.Spec:
    return next(s for s in fuzz.contract(notebook) if s.name == name)


def _check(spec: fuzz.Spec, value: object) -> object:
    """check_param itself on `value`, with the spec's literal keywords (not its expressions)."""
    literal = {k: v for k, v in vars(spec).items() if v is not None and k not in (
        "name", "kind", "expressions", "of")}
    kind = {"int": int, "float": float, "bool": bool, "str": str, "list": list}
    of = {"of": {"int": int, "float": float, "str": str}[spec.of]} if spec.of else {}
    return check_param(spec.name, value, kind[spec.kind], **literal, **of)


def test_the_contract_is_read_from_the_setup_cell(notebook: Path) -> None:
    specs = {s.name: s for s in fuzz.contract(notebook)}
    assert list(specs) == ["DEVICE", "SIDE", "RATE", "BATCH", "SIZES", "KIND", "STEPS", "FLAG",
                           "SAVE_RESULTS", "WORKERS"]
    assert (specs["SIDE"].kind, specs["SIDE"].low, specs["SIDE"].high) == ("int", 2, 64)
    assert specs["RATE"].low_open and specs["RATE"].low == 0 and specs["RATE"].high is None
    assert specs["BATCH"].high is None and specs["BATCH"].expressions == {"high": "SIDE ** 2"}
    assert (specs["SIZES"].of, specs["SIZES"].rising, specs["SIZES"].min_len) == ("int", True, 2)
    assert specs["KIND"].choices == ("a", "b", "c") and specs["STEPS"].of == "str"
    assert specs["DEVICE"].none_ok and specs["WORKERS"].none_ok and not specs["SIDE"].none_ok
    assert fuzz.defaults(notebook) == {"DEVICE": None, "SIDE": 8, "RATE": 0.5, "BATCH": 16,
                                       "SIZES": [4, 8, 16], "KIND": "a",
                                       "STEPS": ["x", "y", "z"], "FLAG": False,
                                       "SAVE_RESULTS": False, "WORKERS": None}
    params, setup = fuzz._cells(notebook)
    assert params.source == PARAMS and setup.source == SETUP


def test_a_notebook_without_a_parameters_cell_is_refused(tmp_path: Path) -> None:
    path = _notebook(tmp_path / "43_bare.ipynb", tagged=False)
    with pytest.raises(ValueError, match="43_bare.ipynb has no cell tagged 'parameters'"):
        fuzz.contract(path)


def test_only_name_equals_literal_lines_are_defaults(tmp_path: Path) -> None:
    """An unpacking or a call in the parameters cell is no parameter papermill can set by name."""
    params = "SIDE = 8\nWIDTH, HEIGHT = 640, 480\nprint(SIDE)\nKIND = 'a'"
    path = _notebook(tmp_path / "43_odd.ipynb", params=params)
    assert fuzz.defaults(path) == {"SIDE": 8, "KIND": "a"}


def test_keywords_are_read_in_any_order_and_only_literal_arithmetic_is_computed(
        tmp_path: Path) -> None:
    """none_means is a description, not a bound; an expression or none_means before other
    keywords does not hide them; choices become a tuple; a bound that calls a function (even
    on literals) is left to the setup cell as text, like one that names another parameter."""
    setup = """check_param("WORKERS", WORKERS, int, none_ok=True, none_means=f"{CORES} cores",
            low=1)
check_param("BATCH", BATCH, int, high=SIDE**2, low=2)
check_param("KIND", KIND, str, choices=["a", "b"])
check_param("SIDE", SIDE, int, low=2, high=int(1e6))"""
    specs = {s.name: s for s in fuzz.contract(_notebook(tmp_path / "43_order.ipynb", setup))}
    assert (specs["WORKERS"].low, specs["WORKERS"].none_ok, specs["WORKERS"].expressions) == (
        1, True, {})
    assert (specs["BATCH"].low, specs["BATCH"].expressions) == (2, {"high": "SIDE ** 2"})
    assert specs["KIND"].choices == ("a", "b")
    assert (specs["SIDE"].low, specs["SIDE"].high) == (2, None)
    assert specs["SIDE"].expressions == {"high": "int(1000000.0)"}


def test_invalid_values_are_exactly_what_the_contract_refuses(notebook: Path) -> None:
    expected = {
        "SIDE": [2.0, True, "8", 1, 65, None],
        "RATE": [True, "0.1", 0, None],
        "BATCH": [2.0, True, "8", 0, None],
        "SIZES": [5, [], [0], [4, 3], [2.5], None],
        "KIND": [3, "not-a", None],
        "STEPS": [5, [], ["not-x"], None],
        "FLAG": [1, "True", None],
        "WORKERS": [2.0, True, "8", 0],
    }
    for name, values in expected.items():
        spec = _spec(notebook, name)
        assert fuzz.invalid_values(spec) == values, name
        for value in values:  # each one is refused by check_param itself, by name
            with pytest.raises(ParameterError, match=f"^{name} = "):
                _check(spec, value)


def test_invalid_values_of_floats_and_lists_with_both_bounds() -> None:
    """Just below a closed low (half a unit for floats, one for ints) and one above high, for
    a plain float and for each element of a list; each one refused by check_param too."""
    expected = {
        "MOMENTUM": (fuzz.Spec("MOMENTUM", "float", low=0, high=1),
                     [True, "0.1", -0.5, 2, None]),
        "DIMS": (fuzz.Spec("DIMS", "list", of="int", low=1, high=64),
                 [5, [], [0], [65], [2.5], None]),
        "RATES": (fuzz.Spec("RATES", "list", of="float", low=0.5, high=2.5),
                  [5, [], [0.0], [3.5], None]),
    }
    for name, (spec, values) in expected.items():
        assert fuzz.invalid_values(spec) == values, name
        for value in values:
            with pytest.raises(ParameterError, match=f"^{name} = "):
                _check(spec, value)


def test_near_stays_within_the_bounds_and_sometimes_takes_the_lowest(notebook: Path) -> None:
    side, rate = _spec(notebook, "SIDE"), _spec(notebook, "RATE")
    rng = random.Random(1)
    sides = [fuzz._near(side, 8, rng, integer=True) for _ in range(400)]
    assert all(isinstance(v, int) and 2 <= v <= 16 for v in sides)  # a quarter to twice 8
    assert 60 < sides.count(2) < 140  # the lowest allowed value, about a quarter of the time
    assert len(set(sides)) > 8
    rates = [fuzz._near(rate, 0.5, rng, integer=False) for _ in range(400)]
    assert all(isinstance(v, float) and 0 < v <= 1.0 for v in rates)  # low is excluded
    assert all(v == float(f"{v:.3g}") for v in rates)  # three digits, to read and rerun
    high = fuzz.Spec("H", "int", low=1, high=5)
    assert all(fuzz._near(high, 4, rng, integer=True) <= 5 for _ in range(200))
    zero = fuzz.Spec("Z", "int", low=3)
    draws = [fuzz._near(zero, 0, rng, integer=True) for _ in range(200)]  # from 8 x low
    assert min(draws) == 3 and max(draws) <= 48 and max(draws) > 24


def test_numbers_are_drawn_near_their_base_and_never_on_an_excluded_low() -> None:
    """Drawn ints and floats are a quarter to twice their base, within the bounds. An excluded
    low is never drawn, even where the base is just above it or rounding would reach it."""
    rng = random.Random(4)
    free = [fuzz.draw(fuzz.Spec("DROPOUT", "float"), 0.2, rng) for _ in range(300)]
    assert all(0.05 <= v <= 0.4 for v in free) and min(free) < 0.1 and max(free) > 0.3
    side = fuzz.Spec("SIDE", "int", low=2, high=64)
    assert all(2 <= fuzz.draw(side, 8, rng) <= 16 for _ in range(200))
    tol = fuzz.Spec("TOL", "float", low=0.4, low_open=True)  # 0.5 x (0.25..2) is often <= 0.4
    tols = [fuzz.draw(tol, 0.5, rng) for _ in range(300)]
    assert all(0.4 < v <= 1.0 and v == float(f"{v:.3g}") for v in tols) and len(set(tols)) > 10
    stride = fuzz.Spec("STRIDE", "int", low=0, low_open=True)  # 1 x 0.25 would round to 0
    assert {fuzz.draw(stride, 1, rng) for _ in range(200)} == {1, 2}
    # At its lowest value 2, the base stays there: 2 x (0.25..2) rounds to 2 below 2.5, which
    # a log-uniform factor is 77 % of the time, besides the quarter of draws taking the lowest.
    at_low = [fuzz.draw(fuzz.Spec("SIDE", "int", low=2), 2, rng) for _ in range(400)]
    assert set(at_low) == {2, 3, 4} and at_low.count(2) > 240
    unset = [fuzz.draw(fuzz.Spec("N", "int"), 0, rng) for _ in range(200)]  # as from 8
    assert all(2 <= v <= 16 for v in unset) and max(unset) > 12


def test_a_bool_that_may_be_none_is_none_half_the_time_from_none() -> None:
    """From None, a bool with none_ok stays None half the time, else True or False alike."""
    rng = random.Random(5)
    drawn = [fuzz.draw(fuzz.Spec("AMP", "bool", none_ok=True), None, rng) for _ in range(400)]
    assert 150 < drawn.count(None) < 250
    assert 60 < drawn.count(True) < 140 and 60 < drawn.count(False) < 140


def test_lists_are_runs_of_the_base_sometimes_scaled() -> None:
    """A list is drawn as a run of its base (any length from min_len), in its order; a list of
    numbers is scaled half the time, all by one factor from 0.5 to 1.5 (ints rounded, kept at
    low or 1 and, when rising, sorted without repeats)."""
    rng = random.Random(6)
    base = ["z", "x", "y"]
    runs = [fuzz.draw(fuzz.Spec("STEPS", "list", of="str", choices=("x", "y", "z")), base, rng)
            for _ in range(100)]
    assert all(isinstance(r, list) and any(r == base[i:i + len(r)] for i in range(3))
               for r in runs)
    assert {len(r) for r in runs} == {1, 2, 3}
    rates = fuzz.Spec("RATES", "list", of="float", min_len=3)  # the whole list: one factor
    factors = []
    for _ in range(200):
        drawn = fuzz.draw(rates, [0.1, 0.3, 0.4], rng)
        factors.append(drawn[0] / 0.1)
        assert drawn == pytest.approx([0.1 * factors[-1], 0.3 * factors[-1], 0.4 * factors[-1]])
    assert all(0.5 <= f <= 1.5 for f in factors) and min(factors) < 0.65 and max(factors) > 1.35
    assert 70 < factors.count(1.0) < 130  # not scaled, about half the time
    sizes = [fuzz.draw(fuzz.Spec("SIZES", "list", of="int", low=1, rising=True), [4, 8, 16],
                       rng) for _ in range(100)]
    assert any(v not in (4, 8, 16) for s in sizes for v in s)  # scaled ints too
    rising = [fuzz.draw(fuzz.Spec("SIZES", "list", of="int", low=1, rising=True), [1, 2, 3],
                        rng) for _ in range(100)]
    assert all(r == sorted(set(r)) and r[0] >= 1 for r in rising)  # [1, 1, 2] from x 0.5
    low3 = [v for _ in range(100) for v in fuzz.draw(
        fuzz.Spec("DIMS", "list", of="int", low=3), [4, 8], rng)]
    assert min(low3) == 3  # 4 x 0.5 is 2, kept at 3
    no_low = [v for _ in range(100) for v in fuzz.draw(
        fuzz.Spec("DIMS", "list", of="int"), [2, 4], rng)]
    assert min(no_low) == 1  # 2 x 0.5 is 1; never 0


def test_draws_keep_to_each_kind(notebook: Path) -> None:
    rng = random.Random(2)
    flag, kind, steps, sizes = (_spec(notebook, n) for n in ("FLAG", "KIND", "STEPS", "SIZES"))
    assert fuzz.draw(flag, False, rng) is True and fuzz.draw(flag, True, rng) is False
    assert {fuzz.draw(kind, "a", rng) for _ in range(60)} == {"a", "b", "c"}
    for _ in range(60):
        picked = fuzz.draw(steps, ["x", "y", "z"], rng)
        assert picked and "".join(picked) in "xyz"  # a run of the list, never scaled
        lengths = fuzz.draw(sizes, [4, 8, 16, 32], rng)
        assert len(lengths) >= 1 and lengths == sorted(set(lengths))
        assert all(isinstance(v, int) and v >= 1 for v in lengths)
    workers = _spec(notebook, "WORKERS")
    drawn = [fuzz.draw(workers, 4, rng) for _ in range(200)]
    assert 30 < drawn.count(None) < 100 and all(v is None or v >= 1 for v in drawn)
    from_none = [fuzz.draw(workers, None, rng) for _ in range(200)]  # None, or near 8
    assert 60 < from_none.count(None) < 150 and all(v is None or v >= 1 for v in from_none)


def test_a_set_never_changes_the_device_or_saves_results(notebook: Path) -> None:
    base = {**fuzz.defaults(notebook), "DEVICE": "cpu", "SAVE_RESULTS": False}
    rng = random.Random(3)
    sets = [fuzz.draw_set(notebook, base, rng) for _ in range(50)]
    assert all(s["DEVICE"] == "cpu" and s["SAVE_RESULTS"] is False for s in sets)
    changed = {k for s in sets for k in s if s[k] != base[k]}
    assert {"SIDE", "RATE", "FLAG", "KIND"} <= changed  # about half of the others each time
    per_set = [sum(s[k] != base[k] for k in base) for s in sets]
    assert 1 < sum(per_set) / len(per_set) < 7
    assert all(set(s) == set(base) for s in sets)


def test_every_drawn_value_keeps_to_its_own_contract(notebook: Path) -> None:
    """check_param accepts each value of each set (only rules across parameters, such as
    BATCH <= SIDE**2, are left to the setup cell); a parameter the base lacks is not added."""
    specs = fuzz.contract(notebook)
    base = fuzz.defaults(notebook)
    rng = random.Random(7)
    for _ in range(100):
        params = fuzz.draw_set(notebook, base, rng)
        for spec in specs:
            assert _check(spec, params[spec.name]) == params[spec.name]
    del base["FLAG"]
    assert all("FLAG" not in fuzz.draw_set(notebook, base, rng) for _ in range(20))


def test_the_command_to_rerun_a_set(notebook: Path) -> None:
    command = fuzz.reproduce(notebook, {"DEVICE": "cpu", "SIDE": 8, "SIZES": [4, 8],
                                        "FLAG": True, "WORKERS": None})
    assert command == ("cd notebooks && papermill 42_demo.ipynb out.ipynb -p DEVICE cpu "
                       "-p SIDE '8' -p SIZES '[4, 8]' -p FLAG 'true' -p WORKERS 'null'")


def test_a_run_redraws_refusals_reports_failures_and_exits_1(
        tmp_path: Path, notebook: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    outcomes = iter([
        ("failed", "42_demo.ipynb: cell 4 ('# Setup: check the parameters.'): "
                   "ParameterError: SIDE = 99 is refused"),  # refused in setup: redrawn
        ("passed", ""),
        ("failed", "42_demo.ipynb: cell 5 ('print(SIDE)'): ParameterError: late"),  # not setup
        ("timed out", "42_demo.ipynb: cell 5 ('print(SIDE)') ran longer than 9 s"),
    ])
    calls = []

    def fake_run(source, executed, params, env, timeout, cell_timeout):
        calls.append(params)
        status, error = next(outcomes)
        return Row(source.name, "fuzz", status, 1.25, error)

    monkeypatch.setattr(fuzz, "NOTEBOOKS", notebook.parent)
    monkeypatch.setattr(fuzz, "load_preset", lambda name: {notebook.name: {"SIDE": 6}})
    monkeypatch.setattr(fuzz, "run_notebook", fake_run)
    out = tmp_path / "report"
    code = fuzz.main(["42", "--sets", "3", "--seed", "5", "--device", "cpu", "--out", str(out)])
    assert code == 1
    assert len(calls) == 4 and all(p["DEVICE"] == "cpu" for p in calls)
    rows = json.loads((out / "report.json").read_text())
    assert [(r["set"], r["outcome"]) for r in rows] == [
        (0, "refused"), (0, "passed"), (1, "failed"), (2, "timed out")]
    assert rows[2]["reproduce"] == fuzz.reproduce(notebook, calls[2])
    report = (out / "report.md").read_text()
    assert report.startswith("# Parameter fuzzing (seed 5, 3 sets per notebook)")
    assert report.count("| 42_demo.ipynb |") == 4 and "ParameterError: late" in report
    tail = report.split("## To reproduce")[1].strip("\n").splitlines()
    assert tail == ["    " + rows[2]["reproduce"], "    " + rows[3]["reproduce"]]
    assert "4 runs: 2 failed or timed out" in capsys.readouterr().out


def test_a_clean_run_exits_0_and_an_unknown_notebook_is_an_error(
        tmp_path: Path, notebook: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(fuzz, "NOTEBOOKS", notebook.parent)
    monkeypatch.setattr(fuzz, "load_preset", lambda name: {})
    monkeypatch.setattr(fuzz, "run_notebook",
                        lambda source, *a, **k: Row(source.name, "fuzz", "passed", 0.5))
    out = tmp_path / "new" / "r"  # its folders are made
    assert fuzz.main(["42_demo", "--sets", "2", "--out", str(out)]) == 0
    assert "## To reproduce" not in (out / "report.md").read_text()
    capsys.readouterr()
    with pytest.raises(SystemExit):
        fuzz.main(["77", "--out", str(tmp_path / "r2")])
    assert "error: no notebook matches ['77']" in capsys.readouterr().err


def test_the_defaults_three_sets_four_redraws_and_the_timeout(
        tmp_path: Path, notebook: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    calls = []

    def always_refused(source, executed, params, env, timeout, cell_timeout):
        calls.append((executed.name, env.get("JUPYTER_PREFER_ENV_PATH"), timeout, cell_timeout,
                      params["DEVICE"]))
        return Row(source.name, "fuzz", "failed", 0.5,
                   "42_demo.ipynb: cell 4 ('# Setup: check the parameters.'): "
                   "ParameterError: SIDE = 1 is refused")

    monkeypatch.setattr(fuzz, "NOTEBOOKS", notebook.parent)
    monkeypatch.setattr(fuzz, "load_preset", lambda name: {})
    monkeypatch.setattr(fuzz, "run_notebook", always_refused)
    monkeypatch.delenv("JUPYTER_PREFER_ENV_PATH", raising=False)  # set for the runs alone
    assert fuzz.main(["--out", str(tmp_path / "r")]) == 0  # refusals are not failures
    assert len(calls) == 3 * 5  # 3 sets, each drawn once and redrawn 4 times
    assert set(calls) == {("42_demo.ipynb", "1", 600, 600, None)}
    rows = json.loads((tmp_path / "r" / "report.json").read_text())
    assert [r["set"] for r in rows] == [0] * 5 + [1] * 5 + [2] * 5
    assert all(r["outcome"] == "refused" and r["seconds"] == 0.5 for r in rows)
    out = capsys.readouterr().out
    assert out.count("42_demo.ipynb set 2: refused (0 s)") == 5
    assert out.rstrip().endswith("15 runs: 0 failed or timed out; report: "
                                 f"{tmp_path / 'r' / 'report.md'}")
    calls.clear()
    assert fuzz.main(["42", "--sets", "1", "--retries", "0", "--timeout", "9",
                      "--out", str(tmp_path / "r")]) == 0
    assert calls == [("42_demo.ipynb", "1", 9, 9, None)]


def test_the_help_names_what_it_does_and_each_option(
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        fuzz.main(["--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    for words in ("Run every notebook with parameters drawn at random from its contract, and "
                  "list what broke.", "numbers (09) or names; default all",
                  "parameter sets per notebook", "DEVICE for every run (default: best)",
                  "seconds per notebook run", "new draws after a refusal"):
        assert re.search(rf"(?<!\w){re.escape(words)}(?!\w)", help_text), words


def test_a_run_draws_from_its_seed_over_the_ci_preset_into_build_fuzz(
        tmp_path: Path, notebook: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The sets are draw_set's from random.Random(seed) (0 by default), over the notebook's
    defaults with the CI preset and --device over them; the report goes to build/fuzz/."""
    calls = []
    monkeypatch.setattr(fuzz, "NOTEBOOKS", notebook.parent)
    monkeypatch.setattr(fuzz, "ROOT", tmp_path)
    monkeypatch.setattr(fuzz, "load_preset",
                        lambda name: {"ci": {notebook.name: {"SIDE": 6, "KIND": "b"}}}[name])
    monkeypatch.setattr(fuzz, "run_notebook", lambda source, executed, params, *a, **k:
                        calls.append(params) or Row(source.name, "fuzz", "passed", 0.5))
    base = {**fuzz.defaults(notebook), "SIDE": 6, "KIND": "b"}
    for argv, seed, device in (([], 0, None), (["--seed", "5", "--device", "cpu"], 5, "cpu")):
        calls.clear()
        assert fuzz.main(["42", *argv]) == 0
        rng = random.Random(seed)
        expected = {**base, "DEVICE": device}
        assert calls == [fuzz.draw_set(notebook, expected, rng) for _ in range(3)]
        report = (tmp_path / "build" / "fuzz" / "report.md").read_text()
        assert report.startswith(f"# Parameter fuzzing (seed {seed}, 3 sets per notebook)\n")


def test_the_report_and_the_lines_printed_as_the_run_goes(
        tmp_path: Path, notebook: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A setup cell that crashes without a ParameterError has failed (it is no refusal); an
    error is printed whole but cut to 200 characters in the table, its | escaped; seconds to
    one decimal; the failed sets' commands at the end."""
    crash = "42_demo.ipynb: cell 4 ('# Setup: check the parameters.'): NameError: name 'x'"
    long = "42_demo.ipynb: cell 5 ('print(SIDE)'): ValueError: loss | accuracy " + "y" * 200
    outcomes = iter([("failed", 1.26, crash), ("failed", 3.0, long), ("passed", 0.04, "")])
    monkeypatch.setattr(fuzz, "NOTEBOOKS", notebook.parent)
    monkeypatch.setattr(fuzz, "load_preset", lambda name: {})
    monkeypatch.setattr(fuzz, "draw_set", lambda nb, base, rng: {"SIDE": 4, "KIND": "b"})
    monkeypatch.setattr(fuzz, "run_notebook", lambda source, *a, **k: Row(
        source.name, "fuzz", *next(outcomes)))
    out = tmp_path / "r"
    assert fuzz.main(["42", "--sets", "3", "--retries", "0", "--out", str(out)]) == 1
    cut = "42_demo.ipynb: cell 5 ('print(SIDE)'): ValueError: loss \\| accuracy "
    cut += "y" * (200 - len(cut))
    command = "cd notebooks && papermill 42_demo.ipynb out.ipynb -p SIDE '4' -p KIND b"
    assert (out / "report.md").read_text() == f"""# Parameter fuzzing (seed 0, 3 sets per notebook)

| notebook | set | outcome | s | parameters | error |
|---|---|---|---|---|---|
| 42_demo.ipynb | 0 | failed | 1.3 | `{{"SIDE": 4, "KIND": "b"}}` | {crash} |
| 42_demo.ipynb | 1 | failed | 3.0 | `{{"SIDE": 4, "KIND": "b"}}` | {cut} |
| 42_demo.ipynb | 2 | passed | 0.0 | `{{"SIDE": 4, "KIND": "b"}}` |  |

## To reproduce

    {command}
    {command}
"""
    assert capsys.readouterr().out == f"""\
42_demo.ipynb set 0: failed (1 s) {{'SIDE': 4, 'KIND': 'b'}}
    {crash}
42_demo.ipynb set 1: failed (3 s) {{'SIDE': 4, 'KIND': 'b'}}
    {long}
42_demo.ipynb set 2: passed (0 s) {{'SIDE': 4, 'KIND': 'b'}}
3 runs: 2 failed or timed out; report: {out / 'report.md'}
"""

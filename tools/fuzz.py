"""Run every notebook with parameters drawn at random from its contract, and list what broke.

    python -m tools.fuzz                    # 3 sets per notebook, seed 0, on the best device
    python -m tools.fuzz --sets 5 --seed 7 --device cpu 10 12
    make fuzz                               # the same as the first line, after installing

Each notebook's contract is the `check_param` calls of its setup cell (the code cell after
its `parameters` cell): a kind, bounds, choices. A set starts from the notebook's defaults
with the CI preset over them (small and fast), then changes each parameter with probability
one half: a value near the preset's (a quarter to twice it), its lowest allowed value, the
other truth value, another choice, a shorter or scaled list. DEVICE and SAVE_RESULTS are
never drawn (SAVE_RESULTS would write into data/results/). A set the setup cell refuses with
a ParameterError (a rule that ties parameters together, say) counts as refused, not failed,
and another set is drawn in its place, up to a few times.

The run goes on after a failure and writes build/fuzz/report.md (a table: notebook, outcome,
the parameters to reproduce it, the error) and report.json. The exit status is 1 when any
set failed or timed out.
"""

from __future__ import annotations

import argparse
import ast
import json
import math
import os
import random
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat

from tools.gpu_run import NOTEBOOKS, ROOT, load_preset, run_notebook

NEVER_DRAWN = {"DEVICE", "SAVE_RESULTS"}
REFUSED = "ParameterError"  # the ename papermill reports for a refusal in setup


@dataclass
class Spec:
    """One `check_param` call: what its parameter may be. Bounds that are expressions of
    other parameters (high=GRID**2) are kept as text and left to the setup cell."""

    name: str
    kind: str  # "int", "float", "bool", "str" or "list"
    low: Any = None
    high: Any = None
    low_open: bool = False
    choices: tuple | None = None
    of: str | None = None
    rising: bool = False
    min_len: int = 1
    none_ok: bool = False
    expressions: dict[str, str] = field(default_factory=dict)


def _cells(notebook: Path) -> tuple[nbformat.NotebookNode, nbformat.NotebookNode]:
    """The parameters cell and the setup cell (the next code cell) of `notebook`."""
    cells = nbformat.read(notebook, as_version=4).cells
    for i, cell in enumerate(cells):
        if "parameters" in cell.metadata.get("tags", []):
            return cell, next(c for c in cells[i + 1:] if c.cell_type == "code")
    raise ValueError(f"{notebook.name} has no cell tagged 'parameters'.")


def defaults(notebook: Path) -> dict[str, Any]:
    """The parameters cell's values (literals only, as papermill needs)."""
    params, _ = _cells(notebook)
    out = {}
    for node in ast.parse(params.source).body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            out[node.targets[0].id] = ast.literal_eval(node.value)
    return out


def _literal(node: ast.AST) -> Any:
    try:
        return ast.literal_eval(node)
    except ValueError:
        try:  # 2**32 - 1 and the like: arithmetic on literals only
            return eval(compile(ast.Expression(node), "<bound>", "eval"), {"__builtins__": {}})
        except NameError:
            raise ValueError(ast.unparse(node)) from None


def contract(notebook: Path) -> list[Spec]:
    """The `check_param` calls of the setup cell of `notebook`, one Spec each."""
    _, setup = _cells(notebook)
    specs = []
    for node in ast.walk(ast.parse(setup.source)):
        if not (isinstance(node, ast.Call) and getattr(node.func, "id", "") == "check_param"):
            continue
        name, kind = ast.literal_eval(node.args[0]), node.args[2].id
        spec = Spec(name, kind)
        for kw in node.keywords:
            if kw.arg == "of":
                spec.of = kw.value.id
            elif kw.arg == "none_means":
                continue
            else:
                try:
                    value = _literal(kw.value)
                except ValueError as expr:
                    spec.expressions[kw.arg] = str(expr)
                    continue
                setattr(spec, kw.arg, tuple(value) if kw.arg == "choices" else value)
        specs.append(spec)
    return specs


def invalid_values(spec: Spec) -> list[Any]:
    """Values the contract refuses: the wrong kind, out of bounds, a bad list."""
    wrong_kind = {"int": [2.0, True, "8"], "float": [True, "0.1"], "bool": [1, "True"],
                  "str": [3], "list": [5, []]}[spec.kind]
    if spec.kind == "str" and spec.choices:
        wrong_kind.append("not-" + str(spec.choices[0]))
    bad = list(wrong_kind)
    element = spec.of or spec.kind
    if spec.low is not None and element in ("int", "float"):
        below = spec.low if spec.low_open else spec.low - (1 if element == "int" else 0.5)
        bad.append([below] if spec.kind == "list" else below)
    if spec.high is not None and element in ("int", "float"):
        above = spec.high + 1
        bad.append([above] if spec.kind == "list" else above)
    if spec.kind == "list" and spec.rising:
        bad.append([4, 3])
    if spec.kind == "list" and spec.of == "int":
        bad.append([2.5])
    if spec.kind == "list" and spec.choices:  # an element that is not one of them
        bad.append(["not-" + str(spec.choices[0])])
    if not spec.none_ok:
        bad.append(None)
    return bad


def _near(spec: Spec, base: Any, rng: random.Random, integer: bool) -> Any:
    """A value a quarter to twice `base` (log-uniform), within the bounds; or the lowest."""
    low = spec.low if spec.low is not None else 0
    if rng.random() < 0.25 and spec.low is not None and not spec.low_open:
        return spec.low
    base = base if base not in (None, 0) else max(low, 1) * 8
    value = abs(base) * math.exp(rng.uniform(math.log(0.25), math.log(2)))
    if spec.high is not None:
        value = min(value, spec.high)
    value = max(value, low)
    if integer:
        value = max(math.ceil(low + (1e-9 if spec.low_open else 0)), round(value))
    else:
        value = float(f"{value:.3g}")  # three digits: a readable command to rerun
        if spec.low_open and value <= low:
            value = float(f"{low + abs(base) / 4:.3g}")
    return value


def draw(spec: Spec, base: Any, rng: random.Random) -> Any:
    """One value for `spec`, near `base` (the preset's or the default)."""
    if spec.none_ok and (base is None or rng.random() < 0.3):
        if base is not None or rng.random() < 0.5:
            return None
    if spec.kind == "bool":
        return bool(rng.getrandbits(1)) if base is None else not base
    if spec.choices and spec.kind != "list":
        return rng.choice(spec.choices)
    if spec.kind == "str":
        return base
    if spec.kind == "list":
        k = rng.randint(max(1, spec.min_len), len(base))
        start = rng.randint(0, len(base) - k)
        picked = list(base[start:start + k])
        if spec.of in ("int", "float") and rng.random() < 0.5:  # scaled as well
            factor = math.exp(rng.uniform(math.log(0.5), math.log(1.5)))
            picked = [x * factor for x in picked]
            if spec.of == "int":
                picked = [max(round(x), spec.low or 1) for x in picked]
        return sorted(set(picked)) if spec.rising else picked
    return _near(spec, base, rng, integer=spec.kind == "int")


def draw_set(notebook: Path, base: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """Parameters for one run: `base` with about half the contract's parameters redrawn."""
    params = dict(base)
    for spec in contract(notebook):
        if spec.name in NEVER_DRAWN or spec.name not in base or rng.random() < 0.5:
            continue
        params[spec.name] = draw(spec, base[spec.name], rng)
    return params


def reproduce(notebook: Path, params: dict[str, Any]) -> str:
    """The command that reruns one set: papermill, from notebooks/."""
    flags = " ".join(f"-p {k} {json.dumps(v)!r}" if not isinstance(v, str) else f"-p {k} {v}"
                     for k, v in params.items())
    return f"cd notebooks && papermill {notebook.name} out.ipynb {flags}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", help="numbers (09) or names; default all")
    parser.add_argument("--sets", type=int, default=3, help="parameter sets per notebook")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default=None, help="DEVICE for every run (default: best)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per notebook run")
    parser.add_argument("--retries", type=int, default=4, help="new draws after a refusal")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "fuzz")
    args = parser.parse_args(argv)
    found = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
    chosen = [p for p in found if not args.notebooks
              or any(p.name.startswith(w) or p.stem == w for w in args.notebooks)]
    if not chosen:
        parser.error(f"no notebook matches {args.notebooks}")
    rng = random.Random(args.seed)
    ci = load_preset("ci")
    env = {**os.environ, "JUPYTER_PREFER_ENV_PATH": "1"}
    args.out.mkdir(parents=True, exist_ok=True)
    rows = []
    for nb in chosen:
        base = {**defaults(nb), **ci.get(nb.name, {})}
        setup_first = _cells(nb)[1].source.strip().splitlines()[0]
        if args.device:
            base["DEVICE"] = args.device
        for k in range(args.sets):
            for attempt in range(args.retries + 1):
                params = draw_set(nb, base, rng)
                with tempfile.TemporaryDirectory() as tmp:
                    row = run_notebook(nb, Path(tmp) / nb.name, params, env, args.timeout,
                                       cell_timeout=int(args.timeout))
                refused = row.status == "failed" and f"{REFUSED}:" in row.error
                setup_cell = f"({setup_first!r})" in row.error  # the cell's first line
                outcome = ("refused" if refused and setup_cell else
                           "failed" if refused else row.status)
                rows.append({"notebook": nb.name, "set": k, "outcome": outcome,
                             "seconds": round(row.seconds, 1), "params": params,
                             "error": row.error, "reproduce": reproduce(nb, params)})
                print(f"{nb.name} set {k}: {outcome} ({row.seconds:.0f} s) {params}"
                      + (f"\n    {row.error}" if row.error else ""), flush=True)
                if outcome != "refused":
                    break
            _write(args.out, rows, args)
    bad = [r for r in rows if r["outcome"] in ("failed", "timed out")]
    print(f"{len(rows)} runs: {len(bad)} failed or timed out; report: {args.out / 'report.md'}")
    return 1 if bad else 0


def _write(out: Path, rows: list[dict], args: argparse.Namespace) -> None:
    (out / "report.json").write_text(json.dumps(rows, indent=1))
    lines = [f"# Parameter fuzzing (seed {args.seed}, {args.sets} sets per notebook)", "",
             "| notebook | set | outcome | s | parameters | error |", "|---|---|---|---|---|---|"]
    for r in rows:
        error = r["error"].replace("|", "\\|")[:200]
        lines.append(f"| {r['notebook']} | {r['set']} | {r['outcome']} | {r['seconds']} | "
                     f"`{json.dumps(r['params'])}` | {error} |")
    failed = [r for r in rows if r["outcome"] in ("failed", "timed out")]
    if failed:
        lines += ["", "## To reproduce", ""] + [f"    {r['reproduce']}" for r in failed]
    (out / "report.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())

"""What every committed notebook must be: clean, parameterised, device-agnostic, tidy imports."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from tests.nbtools import course_notebooks, parameter_names, parameters_cell, python_source, read
from tests.notebook_params import PARAMS_DIR

NOTEBOOKS = course_notebooks()
ids = [p.stem for p in NOTEBOOKS]
pytestmark = pytest.mark.parametrize("path", NOTEBOOKS, ids=ids)


def test_no_outputs_committed(path: Path) -> None:
    for cell in read(path).cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, cell.source[:60]


def test_kernelspec_is_python3(path: Path) -> None:
    assert read(path).metadata["kernelspec"]["name"] == "python3"


def test_parameters_cell(path: Path) -> None:
    nb = read(path)
    cell = parameters_cell(nb)
    assert cell is not None, "no cell tagged 'parameters'"
    names = parameter_names(nb)
    assert "DEVICE" in names
    tree = ast.parse(python_source(cell.source))
    for node in tree.body:  # literals only: papermill replaces them wholesale
        assert isinstance(node, ast.Assign), ast.dump(node)
        ast.literal_eval(node.value)
    assert re.search(r"^DEVICE\s*=\s*None\b", cell.source, re.M), "DEVICE must default to None"


def _hard_coded_devices(code: str) -> list[str]:
    """Places where a device is written out instead of using the one chosen in setup:
    `.cuda()`, `.to("cuda")`, `device="cuda"`, `torch.device("cuda")` (any index); `.cuda(d)`
    with the chosen device `d` is fine. Comparing
    a device's type (`device.type == "cuda"`) is how PyTorch checks a kind, and is fine."""
    def is_cuda_text(node: ast.AST) -> bool:
        return (isinstance(node, ast.Constant) and isinstance(node.value, str)
                and re.fullmatch(r"cuda(:\d+)?", node.value) is not None)

    found = []
    for node in ast.walk(ast.parse(code)):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if (name == "cuda" and isinstance(node.func, ast.Attribute)
                and all(isinstance(a, ast.Constant) for a in node.args)):
            found.append(ast.unparse(node))  # x.cuda(), model.cuda(1): not x.cuda(device)
        elif name in ("to", "device") and node.args and is_cuda_text(node.args[0]):
            found.append(ast.unparse(node))  # x.to("cuda"), torch.device("cuda:0")
        found += [ast.unparse(node) for k in node.keywords
                  if k.arg == "device" and is_cuda_text(k.value)]  # device="cuda"
    return found


def test_device_chosen_with_pick_device(path: Path) -> None:
    code = "\n".join(python_source(c.source) for c in read(path).cells if c.cell_type == "code")
    assert "pick_device(DEVICE)" in code
    hard = _hard_coded_devices(code)
    assert not hard, f"use the device chosen in setup, not a hard-coded one: {hard}"


def test_only_the_public_api_of_course_utils(path: Path) -> None:
    """Notebooks import course_utils' public names only: `from course_utils import ...`."""
    import course_utils

    tree = ast.parse("\n".join(python_source(c.source) for c in read(path).cells
                               if c.cell_type == "code"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("course_utils"):
            assert node.module == "course_utils", f"import from {node.module}: use course_utils"
            private = {a.name for a in node.names} - set(course_utils.__all__)
            assert not private, f"not in course_utils.__all__: {sorted(private)}"
        elif isinstance(node, ast.Import):
            assert not any(a.name.startswith("course_utils") for a in node.names)


def _imported_names(tree: ast.AST) -> dict[str, int]:
    names: dict[str, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                names[(alias.asname or alias.name).split(".")[0]] = node.lineno
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                assert alias.name != "*", "no star imports"
                names[alias.asname or alias.name] = node.lineno
    return names


def test_imports_are_used(path: Path) -> None:
    code = "\n".join(python_source(c.source) for c in read(path).cells if c.cell_type == "code")
    tree = ast.parse(code)
    imported = _imported_names(tree)
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    unused = sorted(set(imported) - used)
    assert not unused, f"imported but never used: {unused}"


def test_cell_one_is_a_title_with_run_time(path: Path) -> None:
    first = read(path).cells[0]
    assert first.cell_type == "markdown" and first.source.startswith("# ")
    assert "You will" in first.source and "Run time" in first.source


SLIDE_TYPES = {"slide", "subslide", "fragment", "skip", "notes", "-"}
MAX_LINE = 88  # characters of code that fit a 960-pixel reveal.js slide
MAX_SLIDE_CODE_LINES = 20  # longer cells are skipped on slides or split


def test_every_cell_has_slide_metadata(path: Path) -> None:
    cells = read(path).cells
    types = [c.metadata.get("slideshow", {}).get("slide_type") for c in cells]
    missing = [i for i, t in enumerate(types) if t not in SLIDE_TYPES]
    assert not missing, f"cells without a slide type: {missing}"
    assert types[0] == "slide"
    assert types.count("slide") >= 4, "one idea per slide: too few slides"
    assert "notes" in types, "no speaker notes for the instructor"


def test_code_on_slides_fits(path: Path) -> None:
    for cell in read(path).cells:
        if cell.cell_type != "code" or cell.metadata.get("slideshow", {}).get("slide_type") == "skip":
            continue
        lines = cell.source.splitlines()
        assert len(lines) <= MAX_SLIDE_CODE_LINES, f"{len(lines)}-line cell on a slide: {lines[0]}"
        wide = [line for line in lines if len(line) > MAX_LINE]
        assert not wide, f"code lines wider than {MAX_LINE} characters: {wide}"


@pytest.mark.parametrize("preset", ["ci.json", "gpu.json"])
def test_parameter_presets_name_real_parameters(path: Path, preset: str) -> None:
    presets = json.loads((PARAMS_DIR / preset).read_text())
    assert set(presets) <= {p.name for p in NOTEBOOKS}, "a preset names a missing notebook"
    unknown = set(presets.get(path.name, {})) - parameter_names(read(path))
    assert not unknown, f"{preset} sets parameters {path.name} does not have: {unknown}"



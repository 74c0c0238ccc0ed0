"""Reading notebooks for the tests: the list of course notebooks and their code."""

from __future__ import annotations

import ast
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parent.parent  # the course's checkout
NOTEBOOK_DIR = REPO / "notebooks"


def course_notebooks() -> list[Path]:
    """Return the course notebooks in order (NN_topic.ipynb)."""
    return sorted(p for p in NOTEBOOK_DIR.glob("[0-9][0-9]_*.ipynb"))


def read(path: Path) -> nbformat.NotebookNode:
    """Read a notebook as nbformat v4."""
    return nbformat.read(path, as_version=4)


def python_source(cell_source: str) -> str:
    """Return a code cell's source with IPython magics and shell lines blanked, so ast can parse it."""
    lines = []
    for line in cell_source.splitlines():
        stripped = line.lstrip()
        lines.append("" if stripped.startswith(("%", "!")) else line)
    return "\n".join(lines)


def parameters_cell(nb: nbformat.NotebookNode) -> nbformat.NotebookNode | None:
    """Return the cell tagged `parameters`, if any."""
    for cell in nb.cells:
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            return cell
    return None


def parameter_names(nb: nbformat.NotebookNode) -> set[str]:
    """Return the names assigned in the `parameters` cell."""
    cell = parameters_cell(nb)
    if cell is None:
        return set()
    tree = ast.parse(python_source(cell.source))
    return {t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets
            if isinstance(t, ast.Name)}

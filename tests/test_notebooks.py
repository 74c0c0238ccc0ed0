"""Execute every notebook headless with papermill, injecting small CPU-safe parameters.

(nbval executes each notebook a second time with its own defaults: see addopts in pyproject.toml.)
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import nbformat
import pytest

from tools.render import execute
from tests.nbtools import NOTEBOOK_DIR, course_notebooks, read
from tests.notebook_params import CI_PARAMS

NOTEBOOKS = course_notebooks()
CELL_TIMEOUT = 300  # seconds; the same limit nbval applies (see addopts in pyproject.toml)


def test_course_has_notebooks() -> None:
    assert NOTEBOOKS, "no notebooks found under notebooks/"
    assert NOTEBOOKS[0].name == "00_check_your_setup.ipynb"


@pytest.mark.notebook
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_with_injected_parameters(path: Path, tmp_path: Path) -> None:
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    params = {"DEVICE": "cpu", **CI_PARAMS.get(path.name, {})}
    out = tmp_path / path.name
    execute(path, out, params, progress=False, cell_timeout=CELL_TIMEOUT, cwd=NOTEBOOK_DIR)
    executed = read(out)
    injected = [c for c in executed.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert len(injected) == 1 and "DEVICE = \"cpu\"" in injected[0].source
    errors = [o for c in executed.cells if c.cell_type == "code" for o in c.outputs
              if o.output_type == "error"]
    assert not errors
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before, "the source notebook changed"


def test_a_hung_cell_fails_with_notebook_and_cell_named(tmp_path: Path) -> None:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell("x = 1"),
                nbformat.v4.new_code_cell("# waits forever, like a deadlocked widget cell\n"
                                          "import time\ntime.sleep(600)")]
    source = tmp_path / "hangs.ipynb"
    nbformat.write(nb, source)
    start = time.perf_counter()
    with pytest.raises(TimeoutError) as info:
        execute(source, tmp_path / "out.ipynb", {}, progress=False, cell_timeout=1)
    assert time.perf_counter() - start < 120  # stopped, not waited out
    message = str(info.value)
    assert message.startswith("hangs.ipynb: cell 1 ('# waits forever")
    assert "longer than 1 s" in message


def test_a_timeout_names_the_cell_nbclient_stopped(tmp_path: Path) -> None:
    from nbclient.exceptions import CellTimeoutError

    from tools.render import _timed_out_cell

    long_cell = "\n".join(["# a long cell"] + [f"y{i} = {i}" for i in range(12)])
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("y1 = 1"),  # also text inside the long cell
                nbformat.v4.new_markdown_cell("x = 1"),
                nbformat.v4.new_code_cell("x = 1"),
                nbformat.v4.new_code_cell(long_cell)]
    source = tmp_path / "cells.ipynb"
    nbformat.write(nb, source)
    for index, first_line in [(2, "x = 1"), (3, "# a long cell")]:
        err = CellTimeoutError.error_from_timeout_and_cell("Cell execution timed out", 1,
                                                           nb.cells[index])
        assert _timed_out_cell(source, str(err)) == (index, first_line)
    assert _timed_out_cell(source, "an unrelated message") is None

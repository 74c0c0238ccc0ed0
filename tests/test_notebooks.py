"""Notebook execution: the course's notebooks are found, and a hung cell fails with its name.

Every notebook runs twice in the suite: nbval with its own defaults (addopts in pyproject.toml),
and the recording command (tools.gpu_run) at the small CI preset (tests/test_gpu_run.py).
"""

from __future__ import annotations

import time
from pathlib import Path

import nbformat
import pytest

from tools.render import execute
from tests.nbtools import course_notebooks

NOTEBOOKS = course_notebooks()


def test_course_has_notebooks() -> None:
    assert NOTEBOOKS, "no notebooks found under notebooks/"
    assert NOTEBOOKS[0].name == "00_check_your_setup.ipynb"


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

"""Stress: every widget cell executed many times under CPU load, through nbclient, never hangs.

nbclient can deadlock on cells that create Output widgets (nbclient issue 312): the kernel goes
idle and the client waits forever. The course's widget cells use live_printout, which has no
Output widget. This test runs each notebook up to its widget cells (CI parameters, CPU), then
executes every widget cell RUNS times while busy-loop processes keep every core busy; a cell
that does not finish within CELL_TIMEOUT seconds fails the test. Run it with `make stress`.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import psutil
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError
from papermill.iorw import load_notebook_node
from papermill.parameterize import parameterize_notebook

from tests.nbtools import NOTEBOOK_DIR, course_notebooks, read
from tests.notebook_params import CI_PARAMS

RUNS = 50
CELL_TIMEOUT = 120  # seconds; one widget cell takes well under a second
WIDGET_CELL = re.compile(r"^[^#\n]*\b(live_printout|interact|interactive|interactive_output)\(",
                         re.M)


def widget_cells(nb: nbformat.NotebookNode) -> list[int]:
    """Indices of the code cells that create a widget."""
    return [i for i, c in enumerate(nb.cells)
            if c.cell_type == "code" and WIDGET_CELL.search(c.source)]


WITH_WIDGETS = [p for p in course_notebooks() if widget_cells(read(p))]


def test_the_course_has_widget_cells() -> None:
    assert len(WITH_WIDGETS) >= 3, [p.name for p in WITH_WIDGETS]


@pytest.mark.stress
@pytest.mark.parametrize("path", WITH_WIDGETS, ids=[p.stem for p in WITH_WIDGETS])
def test_widget_cells_never_hang_under_load(path: Path) -> None:
    nb = parameterize_notebook(load_notebook_node(str(path)),
                               {"DEVICE": "cpu", **CI_PARAMS.get(path.name, {})})
    cells = widget_cells(nb)
    client = NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name="python3",
                            resources={"metadata": {"path": str(NOTEBOOK_DIR)}})
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
            for _ in range(psutil.cpu_count() or 1)]
    done, start = 0, time.perf_counter()
    try:
        with client.setup_kernel():
            for i in range(cells[-1] + 1):  # everything the widget cells need
                client.execute_cell(nb.cells[i], i)
            for run in range(RUNS):
                for i in cells:
                    try:
                        client.execute_cell(nb.cells[i], i)
                    except CellTimeoutError:
                        first = nb.cells[i].source.splitlines()[0]
                        pytest.fail(f"{path.name}, cell {i} ({first!r}) hung on run {run + 1} "
                                    f"(no reply in {CELL_TIMEOUT} s)")
                    errors = [o for o in nb.cells[i].outputs if o.output_type == "error"]
                    assert not errors, errors[0].get("evalue")
                    done += 1
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    assert done == RUNS * len(cells)
    print(f"{path.name}: {done} widget-cell runs under load, none hung "
          f"({time.perf_counter() - start:.0f} s)")

"""Execute every notebook headless with papermill, injecting small CPU-safe parameters.

(nbval executes each notebook a second time with its own defaults: see addopts in pyproject.toml.)
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import papermill
import pytest

from tests.nbtools import NOTEBOOK_DIR, course_notebooks, read
from tests.notebook_params import CI_PARAMS

NOTEBOOKS = course_notebooks()


def test_course_has_notebooks() -> None:
    assert NOTEBOOKS, "no notebooks found under notebooks/"
    assert NOTEBOOKS[0].name == "00_check_your_setup.ipynb"


@pytest.mark.notebook
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_with_injected_parameters(path: Path, tmp_path: Path) -> None:
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    params = {"DEVICE": "cpu", **CI_PARAMS.get(path.name, {})}
    out = tmp_path / path.name
    papermill.execute_notebook(
        str(path), str(out), parameters=params, kernel_name="python3", cwd=str(NOTEBOOK_DIR),
        progress_bar=False, log_output=False,
    )
    executed = read(out)
    injected = [c for c in executed.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert len(injected) == 1 and "DEVICE = \"cpu\"" in injected[0].source
    errors = [o for c in executed.cells if c.cell_type == "code" for o in c.outputs
              if o.output_type == "error"]
    assert not errors
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before, "the source notebook changed"

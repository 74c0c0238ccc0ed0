"""tools.lean_imports: the one slow import that every notebook-reading process skips."""

from __future__ import annotations

import subprocess
import sys

import jsonschema
import nbformat
import pytest

from tests.nbtools import REPO
from tools import gpu_run


def _fresh(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                          text=True, timeout=120, check=True)
    return done.stdout.strip()


def test_a_tools_process_reads_notebooks_without_rfc3987_syntax() -> None:
    out = _fresh("import sys, tools, nbformat\n"
                 "nb = nbformat.read('notebooks/00_check_your_setup.ipynb', as_version=4)\n"
                 "nbformat.validate(nb)\n"
                 "print(sys.modules['rfc3987_syntax'], 'jsonschema' in sys.modules)")
    assert out == "None True"  # skipped, and the validator came in regardless


def test_without_tools_it_is_imported_and_an_import_before_is_left_alone() -> None:
    # The control: nbformat alone brings it in (else this module would guard nothing) ...
    assert _fresh("import sys, nbformat; print(sys.modules['rfc3987_syntax'] is not None)") \
        == "True"
    # ... and once it is in, tools leaves it there.
    assert _fresh("import sys, nbformat, tools; print(sys.modules['rfc3987_syntax'] is not None)"
                  ) == "True"


def test_the_suite_skips_it_too_and_validation_still_rejects_a_bad_notebook(
        pytestconfig: pytest.Config) -> None:
    (addopts,) = [ln for ln in (REPO / "pyproject.toml").read_text().splitlines()
                  if ln.startswith("addopts = ")]  # pytest's (mutmut's has its own key)
    assert addopts.startswith('addopts = "-p tools.lean_imports ')  # before nbval's plugin
    if "-p tools.lean_imports" in " ".join(pytestconfig.getini("addopts")):  # not under mutmut
        assert sys.modules["rfc3987_syntax"] is None
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("1")]
    nbformat.validate(nb)
    nb.cells[0]["execution_count"] = "one"  # not an integer
    with pytest.raises(nbformat.ValidationError):
        nbformat.validate(nb)
    # The other format checkers still work, e.g. the date.
    checker = jsonschema.FormatChecker()
    assert not checker.conforms("not a date", "date") and checker.conforms("2026-11-29", "date")


def test_the_recording_command_s_child_imports_tools_before_papermill() -> None:
    lines = gpu_run._CHILD.strip().splitlines()
    first_tools = next(i for i, ln in enumerate(lines) if ln.startswith("from tools"))
    first_papermill = next(i for i, ln in enumerate(lines) if ln.startswith("from papermill"))
    assert first_tools < first_papermill

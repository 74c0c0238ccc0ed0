"""The course as an installed package: a wheel, in a new virtual environment, outside the checkout.

The wheel is built from pyproject.toml, course_utils/ and data/ alone and installed into a new venv.
That venv borrows the test environment's third-party packages (torch, Jupyter, papermill)
through a .pth file instead of downloading them again, but not the checkout: course_utils
can only come from the wheel. Notebook 00 then runs with papermill from a temporary folder:
first without the wheel (it must stop with the install message, not ModuleNotFoundError's
bare one), then with it.
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest

from tests.nbtools import REPO

NOTEBOOK = REPO / "notebooks" / "00_check_your_setup.ipynb"
RUN_TIMEOUT = 600  # seconds for one papermill run (a cell may take at most 300)


def _run(cmd: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    """Run a command without PYTHONPATH, which could make the checkout importable."""
    env = kwargs.pop("env", None) or {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(cmd, capture_output=True, text=True, timeout=RUN_TIMEOUT, env=env,  # type: ignore[call-overload]
                          **kwargs)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    src = tmp_path_factory.mktemp("src")
    shutil.copy(REPO / "pyproject.toml", src)
    for folder in ("course_utils", "data"):  # the package and the data shipped inside it
        shutil.copytree(REPO / folder, src / folder, ignore=shutil.ignore_patterns("__pycache__"))
    dist = tmp_path_factory.mktemp("dist")
    done = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                 "--quiet", "-w", str(dist), str(src)])
    assert done.returncode == 0, done.stderr
    (found,) = dist.glob("course_utils-*.whl")
    return found


def test_wheel_holds_the_data(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    # The checkout's data/ ships inside the package as course_utils/data/.
    shipped = {"course_utils/data/" + p.relative_to(REPO / "data").as_posix()
               for p in (REPO / "data").rglob("*") if p.is_file()}
    assert shipped and shipped <= names, sorted(shipped - names)
    assert "course_utils/data/shi2016_table7.csv" in names
    # The instructor build and the tests are not part of the student package.
    assert not [n for n in names if n.startswith(("tools/", "tests/", "course_utils/templates"))]


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A new venv that sees the test environment's packages, but not the course checkout."""
    root = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    python = root / "bin" / "python"
    purelib = Path(_run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"])
                   .stdout.strip())
    borrowed = [p for p in site.getsitepackages() if Path(p).is_dir()]
    (purelib / "_borrowed_packages.pth").write_text("\n".join(borrowed) + "\n")
    # A kernelspec of its own, so the kernel is this venv's Python whatever else is installed.
    kernels = root / "jupyter" / "kernels" / "python3"
    kernels.mkdir(parents=True)
    (kernels / "kernel.json").write_text(json.dumps({
        "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3", "language": "python"}))
    run_dir = tmp_path_factory.mktemp("elsewhere")  # outside the checkout
    shutil.copy(NOTEBOOK, run_dir)
    return {"python": python, "jupyter": root / "jupyter", "run_dir": run_dir, "root": root}


def _papermill(venv: dict[str, Path], out: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "JUPYTER_PATH")}
    env["JUPYTER_PATH"] = str(venv["jupyter"])
    return _run([str(venv["python"]), "-m", "papermill", NOTEBOOK.name, out, "-k", "python3",
                 "-p", "DEVICE", "cpu", "-p", "SIZE", "128", "--cwd", str(venv["run_dir"]),
                 "--execution-timeout", "300", "--no-progress-bar",
                 "--no-request-save-on-cell-execute"],
                cwd=venv["run_dir"], env=env)


def test_without_the_package_the_notebook_says_how_to_install(venv: dict[str, Path]) -> None:
    hidden = _run([str(venv["python"]), "-c", "import course_utils"], cwd=venv["run_dir"])
    assert hidden.returncode != 0  # the checkout's editable install is not visible here
    done = _papermill(venv, "hidden.ipynb")
    assert done.returncode != 0
    executed = nbformat.read(venv["run_dir"] / "hidden.ipynb", as_version=4)
    errors = [(i, o) for i, c in enumerate(executed.cells) if c.cell_type == "code"
              for o in c.outputs if o.output_type == "error"]
    (index, error), = errors
    assert "from course_utils import" in executed.cells[index].source  # the import cell
    assert error.ename == "ModuleNotFoundError"
    assert "course_utils, the course's helper package" in error.evalue
    assert "Run on a hosted GPU (Colab, Kaggle)" in error.evalue  # the README's section
    assert "keeping the platform's PyTorch" in error.evalue


def test_installed_wheel_runs_notebook_00_elsewhere(wheel: Path, venv: dict[str, Path]) -> None:
    install = _run([sys.executable, "-m", "pip", "--python", str(venv["python"]), "install",
                    "--no-deps", "--no-index", "--quiet", str(wheel)])
    assert install.returncode == 0, install.stderr
    # Its requirements (the torch range among them) hold in the environment it sees.
    check = _run([sys.executable, "-m", "pip", "--python", str(venv["python"]), "check"])
    assert check.returncode == 0, check.stdout + check.stderr
    where = _run([str(venv["python"]), "-c",
                  "import course_utils; print(course_utils.__file__); "
                  "print(course_utils.data_path('shi2016_table7.csv').is_file())"],
                 cwd=venv["run_dir"])
    path, data_ok = where.stdout.split()
    assert Path(path).is_relative_to(venv["root"]) and data_ok == "True"
    done = _papermill(venv, "installed.ipynb")
    assert done.returncode == 0, done.stderr[-3000:]
    executed = nbformat.read(venv["run_dir"] / "installed.ipynb", as_version=4)
    text = "".join(o.get("text", "") for c in executed.cells if c.cell_type == "code"
                   for o in c.outputs)
    assert "device cpu\n" in text  # the setup cell names the device it chose

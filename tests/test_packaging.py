"""The declared PyTorch range: one range in both files, the versions the course runs on inside it."""

from __future__ import annotations

import os
import re

import sys
from pathlib import Path

import pytest
import torch
from packaging.requirements import Requirement
from packaging.version import Version

from tests.nbtools import REPO

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    tomllib = pytest.importorskip("tomli")


def _torch_requirement(lines: list[str]) -> Requirement:
    found = [Requirement(line) for line in lines if Requirement(line).name == "torch"]
    assert len(found) == 1, found
    return found[0]


def package_requirement() -> Requirement:
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    return _torch_requirement(pyproject["project"]["dependencies"])


def requirements_txt_requirement() -> Requirement:
    lines = (REPO / "requirements.txt").read_text().splitlines()
    return _torch_requirement([line.split("#")[0].strip() for line in lines
                               if line.strip() and not line.lstrip().startswith(("#", "-"))])


def test_both_files_declare_the_same_range() -> None:
    assert package_requirement().specifier == requirements_txt_requirement().specifier


@pytest.mark.parametrize("version", [
    "2.11.0+cu130",  # the GPU machine the course is measured on, which cannot install another
    "2.13.0", "2.13.0+cpu",  # CI's CPU wheel
    "2.9.0",  # the oldest release that passes every notebook at its defaults (make floor)
])
def test_supported_versions_satisfy_it(version: str) -> None:
    for requirement in (package_requirement(), requirements_txt_requirement()):
        assert requirement.specifier.contains(Version(version)), (requirement, version)


# 2.7 and 2.8 run the CI presets, but their FSDP2 over gloo sums float32 gradients (notebook 16).
@pytest.mark.parametrize("version", ["2.8.0", "2.7.1+cu126", "2.6.0", "2.5.1+cu124"])
def test_older_versions_do_not(version: str) -> None:
    assert not package_requirement().specifier.contains(Version(version))


def test_it_is_a_range_not_a_pin() -> None:
    # A pin would make pip replace the torch of Colab, Kaggle or a hand-picked CUDA build.
    assert not any(spec.operator in ("==", "===") for spec in package_requirement().specifier)


def test_the_installed_torch_satisfies_it() -> None:
    assert package_requirement().specifier.contains(Version(torch.__version__))


def test_ci_pins_the_cpu_build_through_a_constraint() -> None:
    constraint = _torch_requirement([
        line for line in (REPO / ".ci" / "constraints.txt").read_text().splitlines()
        if line.strip() and not line.startswith("#")])
    assert str(constraint.specifier) == "==2.13.0"
    assert 'PIP_CONSTRAINT="$PWD/.ci/constraints.txt"' in (REPO / ".ci" / "run").read_text()


def test_make_floor_proves_the_declared_floor() -> None:
    # `make floor` installs the oldest torch the requirement admits, not some other release.
    floor = re.search(r"^FLOOR_TORCH \?= (\S+)$", (REPO / "Makefile").read_text(), re.M)
    assert floor is not None
    lowest = [s for s in package_requirement().specifier if s.operator == ">="]
    assert len(lowest) == 1 and Version(floor.group(1)) == Version(lowest[0].version)


def test_the_wheel_can_be_built_without_isolation() -> None:
    # tests/test_wheel.py builds with the environment's own setuptools: it needs bdist_wheel (70.1).
    lines = (REPO / "requirements.txt").read_text().splitlines()
    (setuptools,) = [Requirement(line.split("#")[0]) for line in lines
                     if line.startswith("setuptools")]
    assert not setuptools.specifier.contains(Version("65.5.0"))  # Python 3.11's ensurepip
    assert setuptools.specifier.contains(Version("70.1.0"))


@pytest.mark.parametrize("extra, index", [
    ([], "https://download.pytorch.org/whl/cpu"),  # no NVIDIA GPU here: the CPU build
    (["TORCH_INDEX=pypi"], None),  # PyPI's build, as asked
    (["TORCH_INDEX=https://example.org/whl/cu126"], "https://example.org/whl/cu126"),
    (["PIP_CONSTRAINT=/nonexistent/c.txt"], None),  # a constraint decides (CI's)
])
def test_make_install_picks_the_cpu_build_without_an_nvidia_gpu(
        tmp_path: Path, extra: list[str], index: str | None) -> None:
    import shutil
    import subprocess

    if shutil.which("make") is None or shutil.which("nvidia-smi") or os.uname().sysname != "Linux":
        pytest.skip("the automatic choice is for Linux machines without nvidia-smi")
    env = {k: v for k, v in os.environ.items() if k not in ("PIP_CONSTRAINT", "TORCH_INDEX")}
    done = subprocess.run(["make", "-n", "-B", "install", f"VENV={tmp_path / 'v'}", *extra],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    torch_lines = [ln for ln in done.stdout.splitlines() if "install" in ln and " torch " in ln]
    if index is None:
        assert torch_lines == []  # requirements.txt alone: PyPI's build, or the constraint's
    else:
        assert len(torch_lines) == 1 and torch_lines[0].endswith(f"--index-url {index}")

"""check_answer and the paths: data inside the package, the checkout for the build."""

from __future__ import annotations

from pathlib import Path

import pytest

import course_utils
from course_utils import check_answer, data_path, repo_root
from course_utils.paths import package_path


def test_check_answer_verdicts(capsys: pytest.CaptureFixture[str]) -> None:
    assert check_answer("q", None, 3) is False
    assert "not answered yet" in capsys.readouterr().out
    assert check_answer("q", 3, 3) is True
    assert "correct" in capsys.readouterr().out
    assert check_answer("q", 4, 3, hint="try again") is False
    assert "not yet (4). try again" in capsys.readouterr().out


def test_check_answer_tolerance_and_strings() -> None:
    assert check_answer("q", 101.0, 100.0, rel_tol=0.05)
    assert not check_answer("q", 120.0, 100.0, rel_tol=0.05)
    assert not check_answer("q", "abc", 100.0, rel_tol=0.05)
    assert check_answer("q", " CPU ", "cpu")


def test_data_ships_inside_the_package() -> None:
    package = Path(course_utils.__file__).parent
    assert data_path("x.csv") == package / "data" / "x.csv"
    assert data_path("shi2016_table7.csv").is_file()
    assert package_path("templates") == package / "templates"


def test_repo_root_is_the_checkout() -> None:
    assert (repo_root() / "notebooks").is_dir() and (repo_root() / "course_utils").is_dir()

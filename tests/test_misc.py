"""check_answer and the data paths."""

from __future__ import annotations

import pytest

from course_utils import check_answer, data_path, repo_root


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


def test_paths_point_into_the_course() -> None:
    assert (repo_root() / "course_utils" / "__init__.py").is_file()
    assert data_path("x.csv") == repo_root() / "data" / "x.csv"

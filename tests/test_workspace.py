"""make lab's working copies: made once, never overwritten, refreshed one at a time, ignored by git."""

from __future__ import annotations

import datetime
import os
import subprocess
import time
from pathlib import Path

import pytest

from tests.nbtools import REPO
from tools import workspace


@pytest.fixture()
def course(tmp_path: Path) -> tuple[Path, Path]:
    sources = tmp_path / "notebooks"
    (sources / "scripts").mkdir(parents=True)
    for name in ("00_setup.ipynb", "01_why.ipynb", "02_how.ipynb"):
        (sources / name).write_text(f"source of {name}")
    (sources / "scripts" / "run.py").write_text("v1")
    (sources / "params").mkdir()
    return sources, tmp_path / "my-notebooks"


def test_first_use_copies_everything(course: tuple[Path, Path]) -> None:
    sources, mine = course
    report = workspace.prepare(mine, sources)
    assert report == {"copied": ["00_setup.ipynb", "01_why.ipynb", "02_how.ipynb"], "changed": []}
    assert (mine / "01_why.ipynb").read_text() == "source of 01_why.ipynb"
    assert (mine / "scripts" / "run.py").read_text() == "v1"
    assert not (mine / "params").exists()


def test_a_students_copy_is_never_overwritten(course: tuple[Path, Path]) -> None:
    sources, mine = course
    workspace.prepare(mine, sources)
    (mine / "01_why.ipynb").write_text("my outputs")
    (sources / "scripts" / "run.py").write_text("v2")
    (sources / "02_how.ipynb").write_text("a newer lesson")
    later = time.time() + 10
    os.utime(sources / "02_how.ipynb", (later, later))
    (mine / "00_setup.ipynb").unlink()
    report = workspace.prepare(mine, sources)
    assert report == {"copied": ["00_setup.ipynb"], "changed": ["02_how.ipynb"]}
    assert (mine / "01_why.ipynb").read_text() == "my outputs"
    assert (mine / "02_how.ipynb").read_text() == "source of 02_how.ipynb"
    assert (mine / "scripts" / "run.py").read_text() == "v2"  # the course's plumbing


def test_fresh_replaces_one_and_keeps_the_old(course: tuple[Path, Path]) -> None:
    sources, mine = course
    workspace.prepare(mine, sources)
    (mine / "01_why.ipynb").write_text("my outputs")
    new, kept = workspace.fresh("01", mine, sources)
    assert new.read_text() == "source of 01_why.ipynb"
    assert kept is not None and kept.parent == mine / "old" and kept.read_text() == "my outputs"
    assert (mine / "02_how.ipynb").read_text() == "source of 02_how.ipynb"
    assert workspace.fresh("02_how", mine, sources)[0].name == "02_how.ipynb"


def test_fresh_twice_keeps_both_old_copies(course: tuple[Path, Path],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    sources, mine = course
    workspace.prepare(mine, sources)

    class SameSecond(datetime.datetime):  # both calls within one second
        @classmethod
        def now(cls, tz=None):
            return datetime.datetime(2026, 11, 29, 9, 30, 0)

    monkeypatch.setattr(workspace.datetime, "datetime", SameSecond)
    kept = []
    for text in ("morning", "afternoon"):
        (mine / "01_why.ipynb").write_text(text)
        kept.append(workspace.fresh("01", mine, sources)[1])
    assert kept[0] != kept[1]
    assert [k.read_text() for k in kept] == ["morning", "afternoon"]
    assert sorted(p.name for p in (mine / "old").iterdir()) == [
        "01_why-20261129-093000-2.ipynb", "01_why-20261129-093000.ipynb"]


@pytest.mark.parametrize("which", ["0", "7", "nope"])
def test_fresh_needs_exactly_one_notebook(course: tuple[Path, Path], which: str) -> None:
    sources, mine = course
    with pytest.raises(ValueError, match=r"give one number or name \(00, 01, 02\)"):
        workspace.fresh(which, mine, sources)


def test_git_ignores_the_workspace() -> None:
    probe = workspace.WORKSPACE / "01_why_gpus.ipynb"
    done = subprocess.run(["git", "check-ignore", "-q", str(probe)], cwd=REPO)
    assert done.returncode == 0, "my-notebooks/ must be in .gitignore"
    assert workspace.WORKSPACE.parent == REPO

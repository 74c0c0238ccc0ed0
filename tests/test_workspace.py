"""make lab's working copies: made once, never overwritten, refreshed one at a time, ignored by git."""

from __future__ import annotations

import datetime
import functools
import os
import re
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


def test_only_numbered_notebooks_are_copied_and_never_python_caches(tmp_path: Path) -> None:
    """NN_name.ipynb files are the course (not notes or checkpoints); __pycache__ stays behind,
    and a workspace whose parent folder is missing is made with it."""
    sources = tmp_path / "notebooks"
    (sources / "scripts" / "__pycache__").mkdir(parents=True)
    (sources / "scripts" / "__pycache__" / "run.cpython-311.pyc").write_bytes(b"\0")
    (sources / "scripts" / "run.py").write_text("v1")
    for name in ("03_x.ipynb", "3_short.ipynb", "notes.ipynb", "04x.ipynb", "05_y.txt"):
        (sources / name).write_text(name)
    assert [p.name for p in workspace.course_notebooks(sources)] == ["03_x.ipynb"]
    mine = tmp_path / "home" / "me" / "my-notebooks"
    assert workspace.prepare(mine, sources) == {"copied": ["03_x.ipynb"], "changed": []}
    assert sorted(p.name for p in mine.iterdir()) == ["03_x.ipynb", "scripts"]
    assert [p.name for p in (mine / "scripts").iterdir()] == ["run.py"]


def test_a_copy_as_old_as_the_course_s_is_not_reported_changed(course: tuple[Path, Path]) -> None:
    """A notebook is "changed" only when the course's copy is newer, not only different."""
    sources, mine = course
    workspace.prepare(mine, sources)
    (mine / "01_why.ipynb").write_text("my outputs")
    (sources / "01_why.ipynb").write_text("a newer lesson")
    same = time.time() + 10
    os.utime(sources / "01_why.ipynb", (same, same))
    os.utime(mine / "01_why.ipynb", (same, same))
    assert workspace.prepare(mine, sources) == {"copied": [], "changed": []}
    os.utime(sources / "01_why.ipynb", (same + 1, same + 1))
    assert workspace.prepare(mine, sources) == {"copied": [], "changed": ["01_why.ipynb"]}


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


@pytest.mark.parametrize(("which", "count"), [("0", 3), ("7", 0), ("nope", 0)])
def test_fresh_needs_exactly_one_notebook(course: tuple[Path, Path], which: str,
                                          count: int) -> None:
    """A name that matches no notebook, or several, is refused with the numbers to choose from."""
    sources, mine = course
    with pytest.raises(ValueError) as err:
        workspace.fresh(which, mine, sources)
    assert str(err.value) == (f"{which!r} names {count} notebooks; give one number or name "
                              "(00, 01, 02).")


def test_fresh_takes_a_number_a_name_or_its_start(course: tuple[Path, Path]) -> None:
    """Each way of naming one notebook (number, stem, file name, a prefix) finds it."""
    sources, mine = course
    for which in ("01", "01_why", "01_why.ipynb", "01_w"):
        assert workspace.fresh(which, mine, sources)[0] == mine / "01_why.ipynb", which


def test_fresh_without_a_copy_makes_the_workspace_and_keeps_nothing(
        course: tuple[Path, Path]) -> None:
    """With no copy yet (and no workspace folder), fresh makes both and reports no kept copy."""
    sources, _ = course
    mine = sources.parent / "deeper" / "my-notebooks"
    new, kept = workspace.fresh("02", mine, sources)
    assert new == mine / "02_how.ipynb" and new.read_text() == "source of 02_how.ipynb"
    assert kept is None and not (mine / "old").exists()


def test_git_ignores_the_workspace() -> None:
    probe = workspace.WORKSPACE / "01_why_gpus.ipynb"
    done = subprocess.run(["git", "check-ignore", "-q", str(probe)], cwd=REPO)
    assert done.returncode == 0, "my-notebooks/ must be in .gitignore"
    assert workspace.WORKSPACE.parent == REPO


def test_the_command_copies_and_names_the_changed_notebooks(
        course: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """`python -m tools.workspace` (make lab): how many it copied, then each newer notebook with
    the make command that refreshes it; nothing printed when nothing changed."""
    sources, mine = course
    monkeypatch.setattr(workspace, "prepare", functools.partial(workspace.prepare, sources=sources))
    assert workspace.main(["--workspace", str(mine)]) == 0
    assert capsys.readouterr().out == "my-notebooks/: copied 3 notebooks from notebooks/\n"
    assert workspace.main(["--workspace", str(mine)]) == 0
    assert capsys.readouterr().out == ""
    for name in ("00_setup.ipynb", "02_how.ipynb"):
        (sources / name).write_text("a newer lesson")
        later = time.time() + 10
        os.utime(sources / name, (later, later))
    assert workspace.main(["--workspace", str(mine)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"my-notebooks/{name}: the course's version is newer (`make fresh NOTEBOOK={name[:2]}` "
        "replaces your copy, keeping it in my-notebooks/old/)"
        for name in ("00_setup.ipynb", "02_how.ipynb")]


def test_the_command_fresh_says_where_the_old_copy_went(
        course: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """`--fresh NN` names the new copy and the kept one (paths from the workspace's parent);
    a name that is not one notebook is an error on stderr with exit status 2."""
    sources, mine = course
    workspace.prepare(mine, sources)
    monkeypatch.setattr(workspace, "fresh", functools.partial(workspace.fresh, sources=sources))

    class Morning(datetime.datetime):
        @classmethod
        def now(cls, tz=None):
            return datetime.datetime(2026, 11, 29, 9, 30, 0)

    monkeypatch.setattr(workspace.datetime, "datetime", Morning)
    assert workspace.main(["--workspace", str(mine), "--fresh", "01"]) == 0
    assert capsys.readouterr().out == ("my-notebooks/01_why.ipynb: a fresh copy; your old one "
                                       "is my-notebooks/old/01_why-20261129-093000.ipynb\n")
    (mine / "02_how.ipynb").unlink()
    assert workspace.main(["--workspace", str(mine), "--fresh", "02"]) == 0
    assert capsys.readouterr().out == "my-notebooks/02_how.ipynb: a fresh copy\n"
    assert workspace.main(["--workspace", str(mine), "--fresh", "0"]) == 2
    said = capsys.readouterr()
    assert said.out == ""
    assert said.err == "error: '0' names 3 notebooks; give one number or name (00, 01, 02).\n"


def test_the_command_works_on_my_notebooks_by_default(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Without --workspace, both commands act on the checkout's my-notebooks/ (stubbed here);
    --help shows --fresh, not the testing-only --workspace."""
    calls = []
    monkeypatch.setattr(workspace, "prepare", lambda where: calls.append(("prepare", where)) or {
        "copied": [], "changed": []})
    monkeypatch.setattr(workspace, "fresh", lambda which, where: calls.append(
        ("fresh", which, where)) or (where / "05_x.ipynb", None))
    assert workspace.main([]) == 0 and workspace.main(["--fresh", "05"]) == 0
    assert calls == [("prepare", REPO / "my-notebooks"), ("fresh", "05", REPO / "my-notebooks")]
    assert capsys.readouterr().out == "my-notebooks/05_x.ipynb: a fresh copy\n"
    with pytest.raises(SystemExit):
        workspace.main(["--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert ("A student's own copies of the notebooks, in a folder git ignores (what `make lab` "
            "opens).") in help_text
    assert re.search(r"--fresh NOTEBOOK replace your copy of this notebook \(number or name\) "
                     r"with the course's", help_text)
    assert "--workspace" not in help_text

"""A student's own copies of the notebooks, in a folder git ignores (what `make lab` opens).

Working in notebooks/ would save outputs into the tracked files (the tests then fail, and a
`git pull` conflicts). So `make lab` first copies every course notebook that is not there yet
into my-notebooks/, with the scripts they launch, and never overwrites a copy the student has.

    python -m tools.workspace                 # make or complete my-notebooks/, list what changed
    python -m tools.workspace --fresh 05      # a new copy of notebook 05 (the old one is kept)
"""

from __future__ import annotations

import argparse
import datetime
import filecmp
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ROOT / "notebooks"
WORKSPACE = ROOT / "my-notebooks"


def course_notebooks(sources: Path = SOURCES) -> list[Path]:
    """The course's notebooks, in order (NN_topic.ipynb)."""
    return sorted(sources.glob("[0-9][0-9]_*.ipynb"))


def prepare(workspace: Path = WORKSPACE, sources: Path = SOURCES) -> dict[str, list[str]]:
    """Copy the notebooks the workspace lacks and refresh its scripts; never touch a notebook.

    Returns the notebook names "copied", and those "changed" in the course since they were
    copied (the source is newer and differs): candidates for --fresh.
    """
    workspace.mkdir(parents=True, exist_ok=True)
    report: dict[str, list[str]] = {"copied": [], "changed": []}
    for source in course_notebooks(sources):
        mine = workspace / source.name
        if not mine.exists():
            shutil.copy2(source, mine)
            report["copied"].append(source.name)
        elif source.stat().st_mtime > mine.stat().st_mtime and not filecmp.cmp(source, mine):
            report["changed"].append(source.name)
    # The scripts the notebooks launch are the course's, not the student's: always current.
    if (sources / "scripts").is_dir():
        shutil.copytree(sources / "scripts", workspace / "scripts", dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__"))
    return report


def fresh(which: str, workspace: Path = WORKSPACE, sources: Path = SOURCES) -> tuple[Path, Path | None]:
    """Replace the working copy of one notebook (by number or name) with the course's own.

    The old copy is kept in workspace/old/ with the time in its name (and a count, should
    two come within one second): no kept copy is ever overwritten. Returns (new copy, kept
    old copy or None).
    """
    matches = [p for p in course_notebooks(sources)
               if which in (p.name, p.stem, p.name[:2]) or p.name.startswith(which)]
    if len(matches) != 1:
        names = ", ".join(p.name[:2] for p in course_notebooks(sources))
        raise ValueError(f"{which!r} names {len(matches)} notebooks; give one number or name "
                         f"({names}).")
    source = matches[0]
    mine = workspace / source.name
    kept = None
    if mine.exists():
        stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
        kept = workspace / "old" / f"{source.stem}-{stamp}.ipynb"
        n = 1
        while kept.exists():  # twice within a second: keep both
            n += 1
            kept = workspace / "old" / f"{source.stem}-{stamp}-{n}.ipynb"
        kept.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(mine, kept)
    workspace.mkdir(parents=True, exist_ok=True)
    shutil.copy2(source, mine)
    return mine, kept


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fresh", metavar="NOTEBOOK",
                        help="replace your copy of this notebook (number or name) with the course's")
    parser.add_argument("--workspace", type=Path, default=WORKSPACE, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.fresh:
        try:
            mine, kept = fresh(args.fresh, args.workspace)
        except ValueError as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
        print(f"{mine.relative_to(args.workspace.parent)}: a fresh copy"
              + (f"; your old one is {kept.relative_to(args.workspace.parent)}" if kept else ""))
        return 0
    report = prepare(args.workspace)
    where = args.workspace.name
    if report["copied"]:
        print(f"{where}/: copied {len(report['copied'])} notebooks from notebooks/")
    for name in report["changed"]:
        print(f"{where}/{name}: the course's version is newer "
              f"(`make fresh NOTEBOOK={name[:2]}` replaces your copy, keeping it in {where}/old/)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

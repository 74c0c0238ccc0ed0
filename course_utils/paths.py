"""Where the course's files live: its data inside the package, and the source checkout if any."""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def package_path(*parts: str) -> Path:
    """Return the path of a file shipped inside course_utils, e.g. package_path('templates')."""
    root = resources.files("course_utils")
    if not isinstance(root, Path):
        raise RuntimeError(f"course_utils is installed as {root!r}, not as files on disk: "
                           "install it with pip (not zipped) to read its data.")
    return root.joinpath(*parts)


def data_path(*parts: str) -> Path:
    """Return the path of a file in the course's data folder (shipped inside course_utils)."""
    return package_path("data", *parts)


def repo_root() -> Path:
    """Return the top folder of the course's source checkout (for the render and the tests).

    Raises RuntimeError where course_utils is installed without the course's sources beside it,
    as from a wheel: notebooks never need this.
    """
    root = Path(__file__).resolve().parent.parent
    if not (root / "notebooks").is_dir() or not (root / "pyproject.toml").is_file():
        raise RuntimeError(f"no course checkout around {Path(__file__).parent}: this "
                           "course_utils is an installed copy. Clone the course's repository "
                           "to render it or run its tests.")
    return root

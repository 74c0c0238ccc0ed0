"""Where the course's files live, wherever a notebook or test is run from."""

from __future__ import annotations

from pathlib import Path


def repo_root() -> Path:
    """Return the course's top folder (the one holding notebooks/, data/ and course_utils/)."""
    return Path(__file__).resolve().parent.parent


def data_path(*parts: str) -> Path:
    """Return the path of a file under the course's data/ folder, e.g. data_path('results')."""
    return repo_root().joinpath("data", *parts)

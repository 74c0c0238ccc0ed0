"""Where the course's data files are: inside the package, so an installed copy has them too."""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def data_path(*parts: str) -> Path:
    """Return the path of a file in the course's data folder, e.g. data_path("gpu_peaks.csv")."""
    root = resources.files("course_utils")
    if not isinstance(root, Path):
        raise RuntimeError(f"course_utils is installed as {root!r}, not as files on disk: "
                           "install it with pip (not zipped) to read its data.")
    return root.joinpath("data", *parts)

"""Recorded results: results/<device>.json, one file per machine, one key per topic.

Saving one key keeps the others, so each notebook adds its part. Layout: data/README.md.
The recordings shipped with the course are in data/results/ (in an installed wheel, inside the
package); a reader's own go to results_folder(), which the reader owns.
"""

from __future__ import annotations

import dataclasses
import datetime
import gzip
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from course_utils.datasets import data_path


@dataclass(frozen=True)
class Recorded:
    """One key of one results file: the value, and where, when and with what it was measured."""

    value: Any
    device: str
    date: str
    torch: str
    cuda: str | None
    path: Path

    @property
    def label(self) -> str:
        """A caption that says the figures were recorded, not measured now."""
        return f"recorded on {self.device} ({self.date}, torch {self.torch})"


# Set this environment variable to choose where save_results writes (a cluster job's folder).
RESULTS_ENV = "COURSE_RESULTS_DIR"


def results_folder() -> Path:
    """Where save_results writes by default: a folder the reader owns.

    $COURSE_RESULTS_DIR when set; else, in a checkout of the course (course_utils installed
    in editable mode, as `make install` does), the checkout's data/results/, so that a
    recording can be committed; else ./course_results/ in the working directory (an
    installed package's own folder may be read-only, and a hosted notebook loses it at restart).
    """
    if os.environ.get(RESULTS_ENV):
        return Path(os.environ[RESULTS_ENV]).expanduser().resolve()
    shipped = data_path("results")
    checkout = shipped.parent.parent  # <checkout>/data/results -> the checkout
    if (checkout / "pyproject.toml").is_file() and (checkout / "notebooks").is_dir():
        return shipped
    return Path.cwd() / "course_results"


def results_file(device_name: str, folder: str | Path | None = None) -> Path:
    """The results file of a device: 'NVIDIA H100 80GB HBM3' -> .../nvidia-h100-80gb-hbm3.json.

    `folder` None means results_folder().
    """
    slug = re.sub(r"[^a-z0-9]+", "-", str(device_name).lower()).strip("-")
    if not slug:
        raise ValueError(f"cannot make a file name from device name {device_name!r}.")
    return Path(folder or results_folder()) / f"{slug}.json"


def _plain(value: Any) -> Any:
    """Tensors, tuples and dataclasses (such as Timing) as lists, numbers and dicts for JSON; a
    dataclass field marked `metadata={"saved": False}` is left out."""
    if isinstance(value, torch.Tensor):
        return value.tolist()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _plain({f.name: getattr(value, f.name) for f in dataclasses.fields(value)
                       if f.metadata.get("saved", True)})
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def save_results(key: str, value: Any, *, device_name: str, folder: str | Path | None = None,
                 date: str | None = None, merge: bool = False) -> Path:
    """Store `value` under `key` in the device's results file, keeping its other keys.

    `folder` None means results_folder(). With merge=True a dict `value` is merged into the
    dict already under `key` (its other entries kept), so several notebooks can add to one key.
    Returns the file's path.
    """
    if not key or not isinstance(key, str):
        raise ValueError(f"key must be a non-empty string, got {key!r}.")
    if merge and not isinstance(value, dict):
        raise TypeError(f"merge=True needs a dict value, got {type(value).__name__}.")
    path = results_file(device_name, folder)
    data = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    data.update(device=device_name, torch=torch.__version__, cuda=torch.version.cuda,
                date=date or datetime.date.today().isoformat())
    if merge and isinstance(data.get(key), dict):
        data[key] = {**data[key], **_plain(value)}
    else:
        data[key] = _plain(value)
    text = json.dumps(data, indent=1)
    # One line per list of numbers keeps the file short and readable.
    text = re.sub(r"\[([^\[\]{}\"]*)\]", lambda m: "[" + " ".join(m.group(1).split()) + "]", text)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n", encoding="utf-8")
    return path


def save_file(path: str | Path, *, device_name: str, folder: str | Path | None = None) -> Path:
    """Keep a file a run wrote (a profiler trace) beside the device's results, compressed.

    It goes to <folder>/<device>/<name>.gz, the folder that holds the recording's executed
    notebooks; `folder` None means results_folder(). Returns the new file's path.
    """
    source = Path(path)
    target = results_file(device_name, folder).with_suffix("") / f"{source.name}.gz"
    target.parent.mkdir(parents=True, exist_ok=True)
    with source.open("rb") as src, gzip.open(target, "wb") as dst:
        dst.write(src.read())
    return target


def load_results(key: str, folder: str | Path | None = None) -> list[Recorded]:
    """Read `key` from every results file that has it (no folder, or no such file: []).

    `folder` None reads the recordings shipped with the course and the reader's own
    (results_folder()), each file once. Newest first: a notebook that shows one recorded GPU
    shows the newest (the one whose executed notebooks show_recorded shows too).
    """
    folders = [Path(folder)] if folder else [data_path("results"), results_folder()]
    paths = {p.resolve(): p for f in folders if f.is_dir() for p in sorted(f.glob("*.json"))}
    found = []
    for path in paths.values():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as err:
            raise ValueError(f"{path} is not valid JSON: {err}") from None
        if isinstance(data, dict) and data.get(key):
            found.append(Recorded(value=data[key], device=str(data.get("device", path.stem)),
                                  date=str(data.get("date", "date unknown")),
                                  torch=str(data.get("torch", "?")), cuda=data.get("cuda"),
                                  path=path))
    return sorted(found, key=lambda r: r.date, reverse=True)  # stable: ties keep path order

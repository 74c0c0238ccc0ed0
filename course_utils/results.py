"""Recorded measurements: course_utils/data/results/<device-slug>.json, one file per machine measured.

Each file holds who measured what: the device name, torch and CUDA versions and the date at the
top, then one entry per notebook topic under its own key ("sweeps", "transfers", "training", ...).
Writing one key keeps the others, so every notebook can add its part to the same file.
"""

from __future__ import annotations

import datetime
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from course_utils.paths import data_path


def results_dir() -> Path:
    """Return the folder of recorded results, course_utils/data/results/."""
    return data_path("results")


def device_slug(name: str) -> str:
    """A file-name-safe form of a device name: 'NVIDIA H100 80GB HBM3' -> 'nvidia-h100-80gb-hbm3'."""
    slug = re.sub(r"[^a-z0-9]+", "-", str(name).lower()).strip("-")
    if not slug:
        raise ValueError(f"cannot make a file name from device name {name!r}.")
    return slug


@dataclass(frozen=True)
class Entry:
    """One key of one results file, with where, when and with what it was measured."""

    path: Path
    device: str
    date: str
    torch: str
    cuda: str | None
    value: Any

    @property
    def label(self) -> str:
        """A caption that says the figures were recorded, not measured now."""
        return f"recorded on {self.device} ({self.date}, torch {self.torch})"


def write_entry(path: str | Path, key: str, value: Any, *, device_name: str,
                torch_version: str | None = None, date: str | None = None) -> Path:
    """Store `value` under `key` of the results file at `path`, keeping its other keys."""
    if not key or not isinstance(key, str):
        raise ValueError(f"key must be a non-empty string, got {key!r}.")
    path = Path(path)
    data: dict[str, Any] = {}
    if path.exists():
        data = json.loads(path.read_text(encoding="utf-8"))
    data.update(device=device_name, torch=torch_version or torch.__version__,
                cuda=torch.version.cuda, date=date or datetime.date.today().isoformat())
    data[key] = value
    text = json.dumps(data, indent=1)
    # One line per list of numbers keeps the file short and readable.
    text = re.sub(r"\[([^\[\]{}\"]*)\]", lambda m: "[" + " ".join(m.group(1).split()) + "]", text)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n", encoding="utf-8")
    return path


def read_entries(folder: str | Path, key: str) -> list[Entry]:
    """Read `key` from every *.json file in `folder` that has it (no folder, or none: [])."""
    folder = Path(folder)
    found: list[Entry] = []
    if not folder.is_dir():
        return found
    for path in sorted(folder.glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as err:
            raise ValueError(f"{path} is not valid JSON: {err}") from None
        if not isinstance(data, dict) or not data.get(key):
            continue
        found.append(Entry(path=path, device=str(data.get("device", path.stem)),
                           date=str(data.get("date", "date unknown")),
                           torch=str(data.get("torch", "?")), cuda=data.get("cuda"),
                           value=data[key]))
    return found

"""What a GPU cell showed when the course was recorded, shown where this machine cannot run it.

A recording made by `make gpu-run` (tools/gpu_run.py) is results/<device>.json beside a folder
results/<device>/ holding the executed notebooks of that run. `show_recorded("05", "58c4b161")`
finds the cell with that id in the recorded notebook 05 and shows its outputs (text, tables,
figures) under a label naming the device, date, torch and course commit, and saying whether
this notebook's code has changed since. Layout: data/README.md.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from course_utils.datasets import data_path


def code_hashes(notebook: str | Path) -> dict[str, Any]:
    """A SHA-256 of each code cell of a notebook (first 16 hex digits), and of them all."""
    cells = [c["source"] if isinstance(c["source"], str) else "".join(c["source"])
             for c in json.loads(Path(notebook).read_text(encoding="utf-8"))["cells"]
             if c["cell_type"] == "code"]
    each = [hashlib.sha256(c.encode()).hexdigest()[:16] for c in cells]
    return {"sha256": hashlib.sha256("\0".join(cells).encode()).hexdigest(), "cells": each}


def changed_code_cells(recorded: dict[str, Any], current: str | Path) -> int:
    """How many code cells of the notebook `current` are not among the recorded hashes."""
    left = list(recorded.get("cells", []))
    changed = 0
    for h in code_hashes(current)["cells"]:
        if h in left:
            left.remove(h)
        else:
            changed += 1
    return changed


@dataclass(frozen=True)
class RecordedCell:
    """One cell of a recorded run: its outputs, and the words that say where they come from."""

    label: str
    outputs: list[dict[str, Any]]
    source: str


def _course_notebook(name: str) -> Path | None:
    """The course's own copy of a notebook, where this is a checkout (a wheel ships none)."""
    path = data_path().parent / "notebooks" / name
    return path if path.is_file() else None


def recorded_notebooks(notebook: str, folder: str | Path | None = None) -> list[tuple[Path, dict]]:
    """Every recorded run of notebook `notebook` ("05" or a file name), newest first: the
    executed notebook's path and its recording's data. `folder` None reads the recordings
    shipped with the course and the reader's own."""
    from course_utils.results import results_folder

    folders = [Path(folder)] if folder else [data_path("results"), results_folder()]
    found = {}
    for f in folders:
        for run in sorted(f.glob("*.json")) if f.is_dir() else []:
            for nb_path in sorted((f / run.stem).glob(f"{notebook[:2]}_*.ipynb")):
                found[nb_path.resolve()] = (nb_path, json.loads(run.read_text(encoding="utf-8")))
    return sorted(found.values(), key=lambda t: str(t[1].get("date", "")), reverse=True)


def run_label(data: dict[str, Any], notebook_name: str, current: str | Path | None = None) -> str:
    """Where a recorded notebook ran (device, date, torch, course commit, preset), and how many
    code cells of `current` (default: the course's copy, in a checkout) changed since."""
    course = data.get("course", {})
    preset = [k.split(" (")[1].rstrip(")") for k in data.get("run_seconds", {})
              if k.startswith(notebook_name + " (")]
    label = (f"recorded on {data.get('device', '?')} ({data.get('date', 'date unknown')}, torch "
             f"{data.get('torch', '?')}, course {str(course.get('commit') or '?')[:7]}"
             + (f", preset {preset[-1]}" if preset else "") + ")")
    here = Path(current) if current else _course_notebook(notebook_name)
    hashes = course.get("notebooks", {}).get(notebook_name)
    if here is None or hashes is None:
        return label + "; not compared with this notebook's code"
    n = changed_code_cells(hashes, here)
    return label + (f"; recorded with an earlier version of this notebook: {n} code "
                    f"cell{'s' if n != 1 else ''} changed since" if n else
                    "; this notebook's code is unchanged since")


def recorded_cell(notebook: str, cell_id: str, folder: str | Path | None = None,
                  current: str | Path | None = None) -> RecordedCell | None:
    """The newest recorded run's copy of cell `cell_id` of notebook `notebook` ("05" or a
    file name), or None where no recording holds it; `folder` and `current` as above."""
    for nb_path, data in recorded_notebooks(notebook, folder):
        cells = [c for c in json.loads(nb_path.read_text(encoding="utf-8"))["cells"]
                 if c.get("id") == cell_id]
        if cells:
            source = cells[0]["source"]
            return RecordedCell(label=run_label(data, nb_path.name, current),
                                outputs=cells[0].get("outputs", []),
                                source=source if isinstance(source, str) else "".join(source))
    return None


def show_recorded(notebook: str, cell_id: str, folder: str | Path | None = None) -> None:
    """Show what cell `cell_id` of `notebook` printed and drew on the recorded GPU, labelled;
    one line where no recording holds it."""
    from IPython.display import display

    cell = recorded_cell(notebook, cell_id, folder)
    if cell is None:
        print(f"no recorded GPU run of this cell (notebook {notebook[:2]}) in data/results/")
        return
    print(f"--- {cell.label}:")
    for out in cell.outputs:
        if out["output_type"] == "stream":
            text = out["text"] if isinstance(out["text"], str) else "".join(out["text"])
            print(text, end="" if text.endswith("\n") else "\n")
        elif out["output_type"] in ("display_data", "execute_result"):
            display({k: "".join(v) if isinstance(v, list) else v
                     for k, v in out["data"].items()}, raw=True)
        elif out["output_type"] == "error":
            print(f"{out['ename']}: {out['evalue']}")
    print("--- end of the recorded output")

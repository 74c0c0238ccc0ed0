"""What a GPU cell showed when the course was recorded, shown where this machine cannot run it.

A recording made by `make gpu-run` (tools/gpu_run.py) is results/<device>.json beside a folder
results/<device>/ holding the executed notebooks of that run. `show_recorded("05", "58c4b161")`
finds the cell with that id in the recorded notebook 05 and shows its outputs (text, tables,
figures) under a label naming the device, date, torch, course commit and parameters, and
which of this notebook's code cells changed since (the lines that only show a recording
aside). Layout: data/README.md.
"""

from __future__ import annotations

import hashlib
import json
import re
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


def gpu_count(data: dict[str, Any]) -> int:
    """How many CUDA GPUs the machine of a recording had (1 where the recording does not say)."""
    return int(data.get("machine", {}).get("gpu_count") or 1)


# nvidia-smi topo -m's codes for the path between two GPUs (its legend, in short).
LINK_CODES = {"SYS": "PCIe, across CPU sockets", "NODE": "PCIe, through host bridges in one "
              "NUMA node", "PHB": "PCIe, through a host bridge", "PXB": "PCIe, through several "
              "PCIe switches", "PIX": "PCIe, through one PCIe switch"}


def pair_link(topology: str, a: int = 0, b: int = 1) -> str | None:
    """The link between GPUs `a` and `b` in `nvidia-smi topo -m` output, as the code it
    prints and what the code means ("NV18: NVLink, 18 links"); None where it is not there."""
    lines = [re.sub(r"\x1b\[[0-9;]*m", "", ln).split() for ln in topology.splitlines()]
    header = next((ln for ln in lines if ln[:1] == ["GPU0"]), None)  # the columns' names
    row = next((ln for ln in lines if ln[:1] == [f"GPU{a}"] and ln is not header), None)
    if header is None or row is None or f"GPU{b}" not in header:
        return None
    code = row[1 + header.index(f"GPU{b}")]
    nvlink = re.fullmatch(r"NV(\d+)", code)
    meaning = f"NVLink, {nvlink[1]} links" if nvlink else LINK_CODES.get(code, "see topo's legend")
    return f"{code}: {meaning}"


def recorded_notebooks(notebook: str, folder: str | Path | None = None,
                       min_gpus: int = 1) -> list[tuple[Path, dict]]:
    """Every recorded run of notebook `notebook` ("05", a file name, or "*": every notebook)
    on a machine with at least `min_gpus` CUDA GPUs, newest first: the executed notebook's
    path and its recording's data. `folder` None reads the recordings shipped with the course and the
    reader's own."""
    from course_utils.results import results_folder

    folders = [Path(folder)] if folder else [data_path("results"), results_folder()]
    found = {}
    for f in folders:
        for run in sorted(f.glob("*.json")) if f.is_dir() else []:
            for nb_path in sorted((f / run.stem).glob(f"{notebook[:2]}_*.ipynb")):
                data = json.loads(run.read_text(encoding="utf-8"))
                if gpu_count(data) >= min_gpus:
                    found[nb_path.resolve()] = (nb_path, data)
    return sorted(found.values(), key=lambda t: str(t[1].get("date", "")), reverse=True)


def recorded_files(name: str, folder: str | Path | None = None) -> list[tuple[Path, dict]]:
    """Every recording's kept file called `name` (save_file's <device>/<name>), newest first:
    its path and its recording's data (device, date, torch). `folder` as above."""
    from course_utils.results import results_folder

    folders = [Path(folder)] if folder else [data_path("results"), results_folder()]
    found = {}
    for f in folders:
        for run in sorted(f.glob("*.json")) if f.is_dir() else []:
            path = f / run.stem / name
            if path.is_file():
                found[path.resolve()] = (path, json.loads(run.read_text(encoding="utf-8")))
    return sorted(found.values(), key=lambda t: str(t[1].get("date", "")), reverse=True)


def _code_cells(path: Path) -> dict[str, str]:
    """A notebook's code cells by id (papermill's injected parameters left out)."""
    cells = json.loads(Path(path).read_text(encoding="utf-8"))["cells"]
    return {c.get("id", str(i)): c["source"] if isinstance(c["source"], str) else "".join(c["source"])
            for i, c in enumerate(cells) if c["cell_type"] == "code"
            and "injected-parameters" not in c.get("metadata", {}).get("tags", [])}


def _without_display(source: str) -> str:
    """Code as it computes: the lines that only show a recording (show_recorded calls, the
    if/else/for lines left with nothing under them, the name in an import) and spaces dropped."""
    kept: list[str] = []  # built from the last line up, so emptied blocks nest
    for ln in reversed([ln for ln in source.splitlines() if "show_recorded(" not in ln]):
        code = ln.split("#")[0].rstrip()
        if not code.strip():
            continue
        indent = len(code) - len(code.lstrip())
        if re.match(r"\s*(if|elif|else|for)\b.*:$", code) and (
                not kept or len(kept[0]) - len(kept[0].lstrip()) <= indent):
            continue  # nothing left under it
        kept.insert(0, code)
    text = re.sub(r"\s+", "", "\n".join(kept))
    return text.replace("show_recorded,", "").replace(",show_recorded", "")


def changed_cells(recorded: str | Path, current: str | Path) -> set[str]:
    """The ids of the code cells that differ between a recorded run of a notebook and the
    notebook now (new and removed cells too), showing a recording aside."""
    old, new = _code_cells(Path(recorded)), _code_cells(Path(current))
    # A cell added or removed counts as no code at all on the other side: one that only
    # shows a recording changes nothing the recording computed.
    return {i for i in old.keys() | new.keys()
            if _without_display(old.get(i, "")) != _without_display(new.get(i, ""))}


def run_label(data: dict[str, Any], recorded: str | Path, current: str | Path | None = None,
              cell_id: str | None = None) -> str:
    """Where the recorded notebook `recorded` ran (device, date, torch, course commit), with
    which parameters, and which code cells of `current` (default: the course's copy, in a
    checkout) changed since; `cell_id` names the cell being shown."""
    label = _label_head(data, recorded)
    here = Path(current) if current else _course_notebook(Path(recorded).name)
    if here is None:
        return label + "; not compared with this notebook's code"
    changed = changed_cells(recorded, here)
    if not changed:
        return label + "; the notebook's code is as recorded"
    n = len(changed)
    this = "" if cell_id is None else (", this one among them" if cell_id in changed
                                       else ", not this one")
    return label + f"; since then {n} code cell{'s' if n != 1 else ''} of it changed{this}"


def _label_head(data: dict[str, Any], recorded: str | Path) -> str:
    """Where a recorded notebook ran (device, date, torch, course commit, GPUs, parameters)."""
    recorded = Path(recorded)
    course = data.get("course", {})
    label = (f"recorded on {data.get('device', '?')} ({data.get('date', 'date unknown')}, torch "
             f"{data.get('torch', '?')}, course {str(course.get('commit') or '?')[:7]})")
    if gpu_count(data) > 1:  # the link as the machine reported it, not a datasheet's
        link = pair_link(data.get("machine", {}).get("topology") or "")
        label += f", {gpu_count(data)} GPUs" + (
            f", GPU0-GPU1 {link} (nvidia-smi topo -m)" if link else ", their link not recorded")
    cells = json.loads(recorded.read_text(encoding="utf-8"))["cells"]
    injected = [c for c in cells if "injected-parameters" in c.get("metadata", {}).get("tags", [])]
    if injected:
        source = injected[0]["source"]
        source = source if isinstance(source, str) else "".join(source)
        params = [ln.strip() for ln in source.splitlines() if "=" in ln and not ln.startswith("#")
                  and ln.split("=")[0].strip() not in ("DEVICE", "SAVE_RESULTS")]
        label += ", with " + ", ".join(params) if params else ", at the default parameters"
    return label


def recorded_cell(notebook: str, cell_id: str, folder: str | Path | None = None,
                  current: str | Path | None = None, min_gpus: int = 1) -> RecordedCell | None:
    """The newest recorded run's copy of cell `cell_id` of notebook `notebook` ("05" or a
    file name) from a machine with at least `min_gpus` GPUs, or None where no recording holds
    it; `folder` and `current` as above. A cell moved here from another notebook keeps its
    id: until a recording of this notebook holds it, the newest recording of the notebook it
    came from is used (one that the course's copy of that notebook no longer has), labelled
    so."""
    for nb_path, data in recorded_notebooks(notebook, folder, min_gpus):
        cell = _cell_in(nb_path, cell_id)
        if cell is not None:
            return RecordedCell(label=run_label(data, nb_path, current, cell_id),
                                outputs=cell.get("outputs", []), source=_text(cell["source"]))
    return _moved_cell(notebook, cell_id, folder, current, min_gpus)


def _text(source: str | list[str]) -> str:
    return source if isinstance(source, str) else "".join(source)


def _cell_in(path: Path, cell_id: str) -> dict[str, Any] | None:
    """Cell `cell_id` of the notebook at `path`, or None."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return next((c for c in cells if c.get("id") == cell_id), None)


def _moved_cell(notebook: str, cell_id: str, folder: str | Path | None,
                current: str | Path | None, min_gpus: int) -> RecordedCell | None:
    """Cell `cell_id` from the newest recording of another notebook that held it then and
    no longer does, where notebook `notebook` (the course's copy, or `current`) holds it now."""
    here = Path(current) if current else next(
        iter(sorted((data_path().parent / "notebooks").glob(f"{notebook[:2]}_*.ipynb"))), None)
    if here is None or not here.is_file() or _cell_in(here, cell_id) is None:
        return None
    for nb_path, data in recorded_notebooks("*", folder, min_gpus):
        then = _cell_in(nb_path, cell_id)
        now = _course_notebook(nb_path.name)
        if then is None or (now is not None and _cell_in(now, cell_id) is not None):
            continue  # not there then, or still there: not moved from it
        same = _without_display(_text(then["source"])) == _without_display(
            _text(_cell_in(here, cell_id)["source"]))
        label = (_label_head(data, nb_path) + f"; as a cell of notebook {nb_path.name[:2]}, "
                 "since moved here; " + ("its code is as recorded" if same else
                                         "its code changed since"))
        return RecordedCell(label=label, outputs=then.get("outputs", []),
                            source=_text(then["source"]))
    return None


def _is_rule(line: str) -> bool:
    """A line that only draws a text table's rules: |====|, |----|, +----+ (no figures)."""
    body = line.strip()
    return len(body) > 2 and set(body) <= set("|+=-") and bool(set(body) & set("=-"))


def show_recorded(notebook: str, cell_id: str, folder: str | Path | None = None,
                  min_gpus: int = 1, drop_rules: bool = False) -> None:
    """Show what cell `cell_id` of `notebook` printed and drew on the recorded GPU, labelled;
    one line where no recording holds it. With `min_gpus` above 1, a recording from a machine
    with that many GPUs or more comes first; without one, a line says so and the newest
    recording from fewer GPUs is shown. `drop_rules` leaves out the printed lines that only
    draw a text table's rules (such as `torch.cuda.memory_summary`'s) and the empty ones, so
    that the table fits a slide; every figure is kept."""
    from IPython.display import display

    cell = recorded_cell(notebook, cell_id, folder, min_gpus=min_gpus)
    if cell is None and min_gpus > 1:
        print(f"no recording from a machine with {min_gpus} or more GPUs yet (README.md, "
              "Contribute a recording); the newest from fewer GPUs:")
        cell = recorded_cell(notebook, cell_id, folder)
    if cell is None:
        runs = recorded_notebooks(notebook, folder)
        if runs:  # the notebook was recorded, before this cell was written
            data = runs[0][1]
            print(f"no recorded GPU output of this cell yet: the newest recording of notebook "
                  f"{notebook[:2]} ({data.get('device', '?')}, {data.get('date', '?')}) "
                  "predates it; `make gpu-run` on a CUDA GPU records it")
        else:
            print(f"no GPU recording of this cell yet: the course has none of notebook "
                  f"{notebook[:2]}; `make gpu-run` on a CUDA GPU records it")
        return
    print(f"--- {cell.label}:")
    for out in cell.outputs:
        if out["output_type"] == "stream":  # the recording's own unanswered checks left out
            text = out["text"] if isinstance(out["text"], str) else "".join(out["text"])
            text = "".join(ln for ln in text.splitlines(keepends=True)
                           if not ln.rstrip().endswith(": not answered yet.")
                           and not (drop_rules and (_is_rule(ln) or not ln.strip())))
            if text:
                print(text, end="" if text.endswith("\n") else "\n")
        elif out["output_type"] in ("display_data", "execute_result"):
            display({k: "".join(v) if isinstance(v, list) else v
                     for k, v in out["data"].items()}, raw=True)
        elif out["output_type"] == "error":
            print(f"{out['ename']}: {out['evalue']}")
    print("--- end of the recorded output")

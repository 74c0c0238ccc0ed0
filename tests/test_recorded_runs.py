"""Recorded GPU cells shown beside a run without a GPU (course_utils.recorded_runs).

The recordings here are written by the tests themselves in a temporary folder, in the layout
tools/gpu_run.py writes (results/<device>.json beside results/<device>/NN_name.ipynb); the
last tests check the calls in the course's notebooks against the recording the course ships.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import nbformat
import pytest

from course_utils import data_path, show_recorded
from course_utils.recorded_runs import (changed_cells, code_hashes, pair_link, recorded_cell,
                                        recorded_files, recorded_notebooks)
from course_utils.results import save_file, save_results
from tests.nbtools import REPO, course_notebooks, read

PNG = "iVBORw0KGgo="  # any base64 text: the image is passed on, not decoded


def _source(path: Path, *codes: str) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# 05 demo")]
    for i, code in enumerate(codes):
        cell = nbformat.v4.new_code_cell(code)
        cell.id = f"cell-{i}"
        nb.cells.append(cell)
    nbformat.write(nb, path)
    return path


def _record(folder: Path, source: Path, device: str, date: str, commit: str,
            machine: dict | None = None) -> Path:
    """A recording of `source` as gpu_run writes it; cell-1 printed, drew and failed."""
    slug = device.lower().replace(" ", "-")
    (folder / slug).mkdir(parents=True)
    nb = nbformat.read(source, as_version=4)
    injected = nbformat.v4.new_code_cell("# Parameters\nDEVICE = None\nWIDTH = 8\n")
    injected.metadata["tags"] = ["injected-parameters"]  # as papermill adds it
    nb.cells.insert(1, injected)
    nb.cells[3].outputs = [
        nbformat.v4.new_output("stream", name="stdout",
                               text=f"[ ] 1. a question: not answered yet.\nran on {device}\n"),
        nbformat.v4.new_output("display_data", data={"image/png": PNG, "text/plain": "<Figure>"}),
        nbformat.v4.new_output("error", ename="OutOfMemoryError", evalue="CUDA out of memory",
                               traceback=[]),
    ]
    nbformat.write(nb, folder / slug / source.name)
    (folder / f"{slug}.json").write_text(json.dumps({
        "device": device, "date": date, "torch": "2.11.0+cu130",
        "course": {"commit": commit, "notebooks": {source.name: code_hashes(source)}},
        "run_seconds": {f"{source.name} (gpu)": 12.0}, "machine": machine or {}}))
    return folder / slug / source.name


def test_code_hashes_follow_code_cells_only(tmp_path: Path) -> None:
    path = _source(tmp_path / "30.ipynb", "x = 1", "y = 2")
    before = code_hashes(path)
    assert len(before["cells"]) == 2 and len(before["sha256"]) == 64
    nb = nbformat.read(path, as_version=4)
    nb.cells.append(nbformat.v4.new_markdown_cell("prose changes nothing"))
    nbformat.write(nb, path)
    assert code_hashes(path) == before
    nb.cells[2].source = "y = 3"
    nbformat.write(nb, path)
    after = code_hashes(path)
    assert after["cells"][0] == before["cells"][0] and after["cells"][1] != before["cells"][1]
    assert after["sha256"] != before["sha256"]


def test_a_recorded_cell_is_labelled_and_its_changes_counted(tmp_path: Path) -> None:
    source = _source(tmp_path / "05_demo.ipynb", "a = 1", "print(a)", "b = 2")
    _record(tmp_path / "results", source, "GPU X", "2026-01-02", "0123456789abcdef")
    cell = recorded_cell("05", "cell-1", tmp_path / "results", current=source)
    assert cell.label == ("recorded on GPU X (2026-01-02, torch 2.11.0+cu130, course 0123456), "
                          "with WIDTH = 8; the notebook's code is as recorded")
    assert [o["output_type"] for o in cell.outputs] == ["stream", "display_data", "error"]
    assert cell.source == "print(a)"

    def label_after(*sources: str) -> str:  # the course's copy edited: its code cells now
        nb = nbformat.read(source, as_version=4)
        for c, code in zip([c for c in nb.cells if c.cell_type == "code"], sources):
            c.source = code
        nb.cells.append(nbformat.v4.new_markdown_cell("more prose"))  # prose is not code
        nbformat.write(nb, source)
        return recorded_cell("05", "cell-1", tmp_path / "results", current=source).label

    # Showing the recording is not a change; computing something else is.
    shown = "print(a)\nif not on_gpu:  # the recorded one\n    show_recorded('05', 'cell-1')"
    assert label_after("a = 1", shown, "b = 2").endswith("; the notebook's code is as recorded")
    assert label_after("a = 10", shown, "b = 20").endswith(
        "; since then 2 code cells of it changed, not this one")
    assert label_after("a = 1", "print(a + 1)", "b = 2").endswith(
        "; since then 1 code cell of it changed, this one among them")
    # Without the notebook to compare with, the label says so instead of guessing.
    assert recorded_cell("05", "cell-1", tmp_path / "results").label.endswith(
        "; not compared with this notebook's code")
    assert recorded_cell("05", "no-such-cell", tmp_path / "results") is None
    assert recorded_cell("06", "cell-1", tmp_path / "results") is None


def test_a_cell_moved_to_another_notebook_shows_the_recording_it_had(tmp_path: Path) -> None:
    source = _source(tmp_path / "05_demo.ipynb", "a = 1", "print(a)")
    _record(tmp_path / "results", source, "GPU X", "2026-01-02", "0123456")
    (tmp_path / "now").mkdir()
    moved = _source(tmp_path / "now" / "06_next.ipynb", "b = 2", "print(a)")  # cell-1 moved
    cell = recorded_cell("06", "cell-1", tmp_path / "results", current=moved)
    assert cell.label == ("recorded on GPU X (2026-01-02, torch 2.11.0+cu130, course 0123456), "
                          "with WIDTH = 8; as a cell of notebook 05, since moved here; its code "
                          "is as recorded")
    assert [o["output_type"] for o in cell.outputs] == ["stream", "display_data", "error"]
    assert cell.source == "print(a)"
    # Code that changed on the way is said; a cell that is not in this notebook is not shown.
    edited = _source(tmp_path / "now" / "06_edited.ipynb", "b = 2", "print(a + 1)")
    assert recorded_cell("06", "cell-1", tmp_path / "results", current=edited).label.endswith(
        "; as a cell of notebook 05, since moved here; its code changed since")
    assert recorded_cell("06", "cell-7", tmp_path / "results", current=moved) is None
    # A recording of this notebook's own comes first, even an older one.
    _record(tmp_path / "results", moved, "GPU Y", "2025-01-02", "abcdef0")
    assert recorded_cell("06", "cell-1", tmp_path / "results", current=moved).label.startswith(
        "recorded on GPU Y (2025-01-02")


def test_a_cell_still_in_its_notebook_is_not_taken_for_a_moved_one(tmp_path: Path) -> None:
    """The course's notebook 11 still has cell 719d5284: a recording of it is 11's alone."""
    name = "11_training_step_memory.ipynb"
    course = read(REPO / "notebooks" / name)
    kept = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# 11"),
                                           nbformat.v4.new_code_cell("x = 1")]
                                    + [c for c in course.cells if c.id == "719d5284"])
    nbformat.write(kept, tmp_path / name)
    _record(tmp_path / "results", tmp_path / name, "GPU X", "2026-01-02", "0123456")
    other = tmp_path / "12_other.ipynb"
    nbformat.write(kept, other)  # the same cell id in another notebook
    assert recorded_cell("11", "719d5284", tmp_path / "results") is not None
    assert recorded_cell("12", "719d5284", tmp_path / "results", current=other) is None


def test_the_course_shows_moved_cells_from_the_recording_that_has_them() -> None:
    """Notebook 12's peak cell was recorded as a cell of notebook 11."""
    cell = recorded_cell("12", "a0ee1087", data_path("results"))
    assert "; as a cell of notebook 11, since moved here; " in cell.label
    assert cell.outputs


def test_the_newest_recording_is_shown(tmp_path: Path) -> None:
    source = _source(tmp_path / "05_demo.ipynb", "a = 1", "print(a)")
    _record(tmp_path / "results", source, "GPU Old", "2025-06-01", "aaaaaaa")
    _record(tmp_path / "results", source, "GPU New", "2026-06-01", "bbbbbbb")
    assert recorded_cell("05", "cell-1", tmp_path / "results").label.startswith(
        "recorded on GPU New (2026-06-01")


def test_show_recorded_prints_the_outputs_or_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj, raw=False: shown.append(obj))
    source = _source(tmp_path / "05_demo.ipynb", "a = 1", "print(a)")
    _record(tmp_path / "results", source, "GPU X", "2026-01-02", "0123456789")
    show_recorded("05", "cell-1", tmp_path / "results")
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("--- recorded on GPU X (2026-01-02")
    assert lines[1:] == ["ran on GPU X", "OutOfMemoryError: CUDA out of memory",
                         "--- end of the recorded output"]
    assert shown == [{"image/png": PNG, "text/plain": "<Figure>"}]
    (tmp_path / "empty").mkdir()
    show_recorded("05", "cell-1", tmp_path / "empty")
    assert capsys.readouterr().out == (
        "no GPU recording of this cell yet: the course has none of notebook 05; "
        "`make gpu-run` on a CUDA GPU records it\n")
    show_recorded("05", "cell-9", tmp_path / "results")  # written after the recording
    assert capsys.readouterr().out == (
        "no recorded GPU output of this cell yet: the newest recording of notebook 05 (GPU X, "
        "2026-01-02) predates it; `make gpu-run` on a CUDA GPU records it\n")


def test_a_kept_file_is_compressed_beside_its_recording_and_found_newest_first(
        tmp_path: Path) -> None:
    import gzip

    trace = tmp_path / "loop.json"
    trace.write_text('{"traceEvents": []}')
    results = tmp_path / "results"
    assert recorded_files("loop.json.gz", results) == []  # no folder yet
    for device, date in (("GPU Old", "2025-06-01"), ("GPU New", "2026-06-01")):
        save_results("headline", {"x": 1}, device_name=device, folder=results, date=date)
        kept = save_file(trace, device_name=device, folder=results)
        assert kept == results / device.lower().replace(" ", "-") / "loop.json.gz"
        assert gzip.decompress(kept.read_bytes()) == trace.read_bytes()
    save_results("headline", {"x": 1}, device_name="GPU None", folder=results)  # keeps none
    found = recorded_files("loop.json.gz", results)
    assert [(p.parent.name, run["device"], run["date"]) for p, run in found] == [
        ("gpu-new", "GPU New", "2026-06-01"), ("gpu-old", "GPU Old", "2025-06-01")]
    assert recorded_files("other.json.gz", results) == []


TOPO = ("\x1b[4m\tGPU0\tGPU1\tGPU2\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\x1b[0m\n"
        "GPU0\t X \tNV18\tSYS\tPIX\t0-55\t0\t\tN/A\n"
        "GPU1\tNV18\t X \tPHB\tNODE\t0-55\t0\t\tN/A\n"
        "GPU2\tSYS\tPHB\t X \tSYS\t56-111\t1\t\tN/A\n\nLegend:\n\n  X    = Self\n")


def test_the_link_between_two_gpus_is_read_from_topo() -> None:
    assert pair_link(TOPO) == "NV18: NVLink, 18 links"
    assert pair_link(TOPO, 0, 2) == "SYS: PCIe, across CPU sockets"
    assert pair_link(TOPO, 2, 1) == "PHB: PCIe, through a host bridge"
    assert pair_link(TOPO, 0, 3) is None  # no GPU3
    assert pair_link("\tGPU0\tNIC0\nGPU0\t X \tPIX\n") is None  # one GPU: no pair
    assert pair_link("") is None


def test_a_recording_from_several_gpus_comes_first_where_asked(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = _source(tmp_path / "12_demo.ipynb", "a = 1", "print(a)")
    results = tmp_path / "results"
    _record(results, source, "GPU One", "2026-06-01", "bbbbbbb", {"gpu_count": 1})
    assert recorded_cell("12", "cell-1", results, min_gpus=2) is None
    show_recorded("12", "cell-1", results, min_gpus=2)  # none from 2 GPUs: says so, then one
    out = capsys.readouterr().out.splitlines()
    assert out[0] == ("no recording from a machine with 2 or more GPUs yet (README.md, "
                      "Contribute a recording); the newest from fewer GPUs:")
    assert out[1].startswith("--- recorded on GPU One (2026-06-01")
    _record(results, source, "GPU Eight", "2025-06-01", "aaaaaaa",
            {"gpu_count": 8, "topology": TOPO})  # older, but from eight GPUs
    label = recorded_cell("12", "cell-1", results, min_gpus=2).label
    assert label.startswith("recorded on GPU Eight (2025-06-01, torch 2.11.0+cu130, course "
                            "aaaaaaa), 8 GPUs, GPU0-GPU1 NV18: NVLink, 18 links (nvidia-smi "
                            "topo -m), with WIDTH = 8")
    assert recorded_cell("12", "cell-1", results).label.startswith("recorded on GPU One")
    assert recorded_cell("12", "cell-1", results, min_gpus=9) is None


def _calls(path: Path) -> list[tuple[str, str]]:
    """The (notebook, cell id) pairs of the show_recorded calls in a course notebook."""
    found = []
    for cell in read(path).cells:
        if cell.cell_type != "code":
            continue
        code = "\n".join(ln for ln in cell.source.splitlines() if not ln.startswith("%"))
        for node in ast.walk(ast.parse(code)):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "show_recorded":
                found += [tuple(getattr(a, "value", None) for a in node.args)]
            if isinstance(node, ast.For) and "show_recorded" in ast.unparse(node.body[0]):
                found += [(path.name[:2], e.value) for e in node.iter.elts]  # a loop over ids
    return [f for f in found if all(isinstance(v, str) for v in f)]


@pytest.mark.parametrize("path", course_notebooks(), ids=lambda p: p.stem)
def test_each_recorded_cell_a_notebook_shows_ships_with_the_course(path: Path) -> None:
    ids = {c.id for c in read(path).cells}
    for notebook, cell_id in _calls(path):
        assert notebook == path.name[:2], f"{path.name} shows another notebook's cell"
        assert cell_id in ids, f"{path.name}: no cell {cell_id} to show the recording of"
        cell = recorded_cell(notebook, cell_id, data_path("results"))
        if cell is None:  # only a cell written after the newest recording may lack one
            runs = recorded_notebooks(notebook, data_path("results"))
            if not runs:  # a notebook newer than every recording: each such cell says so
                continue
            ((recorded, _), *_) = runs
            assert cell_id not in {c.id for c in read(recorded).cells}, (
                f"{path.name}: cell {cell_id} is in the recording but shows nothing")
            assert cell_id in changed_cells(recorded, path)  # so its label counts it
            continue
        assert cell.outputs, f"{path.name}: the recorded cell {cell_id} showed nothing"


def test_the_gpu_only_parts_show_a_recording() -> None:
    with_calls = {p.name[:2] for p in course_notebooks() if _calls(p)}
    assert with_calls >= {"00", "02", "03", "04", "05", "06", "07", "09", "10", "11", "12", "13",
                          "15", "16", "17"}


def test_a_cell_added_only_to_show_a_recording_is_no_change(tmp_path: Path) -> None:
    source = _source(tmp_path / "05_demo.ipynb", "a = 1", "print(a)")
    recorded = _record(tmp_path / "results", source, "GPU X", "2026-01-02", "0123456")
    (tmp_path / "now").mkdir()
    now = _source(tmp_path / "now" / "05_demo.ipynb", "a = 1", "print(a)",
                  "# Without a GPU: the recorded one.\nif not gpu:\n    show_recorded('05', 'cell-1')")
    assert changed_cells(recorded, now) == set()  # the new cell computes nothing
    changed = _source(tmp_path / "now" / "05_other.ipynb", "a = 1", "print(a)", "b = 2")
    assert changed_cells(recorded, changed) == {"cell-2"}  # a new cell with code counts


def test_recorded_files_newest_first_from_the_given_folder(tmp_path: Path) -> None:
    from course_utils.recorded_runs import recorded_files

    for stem, date in (("gpu-a", "2026-01-05"), ("gpu-b", "2026-03-01"), ("gpu-c", None)):
        (tmp_path / f"{stem}.json").write_text(json.dumps({"device": stem, "date": date}
                                                          if date else {"device": stem}))
        (tmp_path / stem).mkdir()
        (tmp_path / stem / "trace.json.gz").write_bytes(b"x")
    (tmp_path / "gpu-d.json").write_text("{}")  # a recording without the file
    found = recorded_files("trace.json.gz", tmp_path)
    assert [run["device"] for _, run in found] == ["gpu-b", "gpu-a", "gpu-c"]
    assert [p for p, _ in found] == [tmp_path / s / "trace.json.gz"
                                     for s in ("gpu-b", "gpu-a", "gpu-c")]
    assert recorded_files("trace.json.gz", tmp_path / "none") == []
    assert recorded_files("missing.gz", tmp_path) == []


def test_show_recorded_can_leave_out_a_tables_rules(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("IPython.display.display", lambda obj, raw=False: None)
    source = _source(tmp_path / "11_demo.ipynb", "a = 1", "print(a)")
    recorded = _record(tmp_path / "results", source, "GPU X", "2026-01-02", "0123456789")
    nb = nbformat.read(recorded, as_version=4)
    table = ("|=====|\n|  PyTorch CUDA memory summary  |\n|-----+-----|\n| Allocated | 0 B |\n"
             "+-----+\n\n|---|---|\n| a-b | 1 |\n|-|\n")
    nb.cells[3].outputs = [nbformat.v4.new_output("stream", name="stdout", text=table)]
    nbformat.write(nb, recorded)
    show_recorded("11", "cell-1", tmp_path / "results", drop_rules=True)
    assert capsys.readouterr().out.splitlines()[1:-1] == [
        "|  PyTorch CUDA memory summary  |", "| Allocated | 0 B |", "| a-b | 1 |"]
    show_recorded("11", "cell-1", tmp_path / "results")  # by default every line
    assert capsys.readouterr().out.splitlines()[1:-1] == table.splitlines()


def test_show_recorded_with_a_full_name_list_text_and_results(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj, raw=False: shown.append(obj))
    source = _source(tmp_path / "05_demo.ipynb", "a = 1", "print(a)")
    path = _record(tmp_path / "results", source, "GPU X", "2026-01-02", "0123456789")
    nb = nbformat.read(path, as_version=4)
    nb.cells[3].outputs = [  # text as a list of lines, no newline at its end; a result
        nbformat.v4.new_output("stream", name="stdout", text=["one\n", "two"]),
        nbformat.v4.new_output("execute_result", data={"text/plain": ["4", "2"]},
                               execution_count=3)]
    nbformat.write(nb, path)
    show_recorded("05_demo", "cell-1", tmp_path / "results")
    assert capsys.readouterr().out.splitlines()[1:] == ["one", "two",
                                                        "--- end of the recorded output"]
    assert shown == [{"text/plain": "42"}]
    (tmp_path / "empty").mkdir()
    show_recorded("05_demo", "cell-1", tmp_path / "empty")
    assert capsys.readouterr().out == (
        "no GPU recording of this cell yet: the course has none of notebook 05; "
        "`make gpu-run` on a CUDA GPU records it\n")
    json_path = tmp_path / "results" / "gpu-x.json"
    data = json.loads(json_path.read_text())
    del data["device"], data["date"]
    json_path.write_text(json.dumps(data))
    show_recorded("05_demo", "cell-9", tmp_path / "results")
    assert capsys.readouterr().out.startswith(
        "no recorded GPU output of this cell yet: the newest recording of notebook 05 (?, ?) ")


def test_run_label_with_little_recorded_and_with_two_gpus(tmp_path: Path) -> None:
    from course_utils.recorded_runs import run_label

    source = _source(tmp_path / "05_demo.ipynb", "a = 1")
    assert run_label({}, source, current=source) == (
        "recorded on ? (date unknown, torch ?, course ?); the notebook's code is as recorded")
    two = {"device": "G", "date": "2026-01-01", "torch": "2.11", "course": {"commit": "abcdef123"},
           "machine": {"gpu_count": 2, "topology": "\tGPU0\tGPU1\nGPU0\t X \tNV18\nGPU1\tNV18\t X \n"}}
    assert run_label(two, source, current=source) == (
        "recorded on G (2026-01-01, torch 2.11, course abcdef1), 2 GPUs, GPU0-GPU1 NV18: "
        "NVLink, 18 links (nvidia-smi topo -m); the notebook's code is as recorded")
    del two["machine"]["topology"]
    assert ", 2 GPUs, their link not recorded;" in run_label(two, source, current=source)


def test_code_that_only_shows_a_recording_is_not_code() -> None:
    from course_utils.recorded_runs import _without_display

    shown = ("from course_utils import (a, show_recorded,\n    b)\n"
             "x = 1  # a comment\n"
             "if not gpu:\n    if deeper:\n        show_recorded('05', 'c')\n"
             "else:\n    y = 2\n"
             "for i in range(3):\n    show_recorded('05', str(i))\n")
    assert _without_display(shown) == "fromcourse_utilsimport(a,b)x=1else:y=2"
    assert _without_display("from course_utils import b, show_recorded") == (
        "fromcourse_utilsimportb")
    assert _without_display("if a:\n    b = 1\n") == "ifa:b=1"  # a block with code stays


def test_code_hashes_against_hashlib_with_sources_stored_as_lines(tmp_path: Path) -> None:
    import hashlib

    path = tmp_path / "n.ipynb"  # nbformat stores a cell's source as a list of lines on disk
    path.write_text(json.dumps({"cells": [
        {"cell_type": "code", "source": ["x = 1\n", "y = 2"]},
        {"cell_type": "markdown", "source": "# prose"},
        {"cell_type": "code", "source": "z = 3"}]}))
    got = code_hashes(path)
    assert got["cells"] == [hashlib.sha256(b"x = 1\ny = 2").hexdigest()[:16],
                            hashlib.sha256(b"z = 3").hexdigest()[:16]]
    assert got["sha256"] == hashlib.sha256(b"x = 1\ny = 2\0z = 3").hexdigest()


def test_without_a_folder_the_shipped_recordings_and_the_readers_are_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """folder=None reads the course's own recordings and the reader's, newest first, and a
    label compares the recording with the course's own copy of the notebook."""
    import course_utils.recorded_runs as recorded_runs

    package = tmp_path / "course"  # the course's files: data/ and notebooks/ side by side
    monkeypatch.setattr(recorded_runs, "data_path",
                        lambda *parts: (package / "data").joinpath(*parts))
    monkeypatch.setenv("COURSE_RESULTS_DIR", str(tmp_path / "mine"))
    (package / "notebooks").mkdir(parents=True)
    source = _source(package / "notebooks" / "05_demo.ipynb", "a = 1", "print(a)")
    shipped = package / "data" / "results"
    _record(shipped, source, "GPU Shipped", "2026-01-02", "aaaaaaa")
    _record(tmp_path / "mine", source, "GPU Mine", "2026-02-03", "bbbbbbb")
    assert [run["device"] for _, run in recorded_notebooks("05")] == ["GPU Mine", "GPU Shipped"]
    assert recorded_cell("05", "cell-1").label == (
        "recorded on GPU Mine (2026-02-03, torch 2.11.0+cu130, course bbbbbbb), with WIDTH = 8; "
        "the notebook's code is as recorded")
    for folder in (shipped / "gpu-shipped", tmp_path / "mine" / "gpu-mine"):
        (folder / "trace.json.gz").write_bytes(b"x")
    assert [(path.parent.name, run["device"]) for path, run in recorded_files("trace.json.gz")] == [
        ("gpu-mine", "GPU Mine"), ("gpu-shipped", "GPU Shipped")]


def test_a_recording_without_a_date_comes_last(tmp_path: Path) -> None:
    """recorded_notebooks: a recording that gives no date sorts after every dated one."""
    source = _source(tmp_path / "05_demo.ipynb", "a = 1", "print(a)")
    results = tmp_path / "results"
    _record(results, source, "GPU Undated", "2026-09-09", "aaaaaaa")
    _record(results, source, "GPU Dated", "2025-01-01", "bbbbbbb")
    undated = results / "gpu-undated.json"
    undated.write_text(json.dumps({k: v for k, v in json.loads(undated.read_text()).items()
                                   if k != "date"}))
    assert [run["device"] for _, run in recorded_notebooks("05", results)] == [
        "GPU Dated", "GPU Undated"]


def test_pair_link_names_each_pcie_path_and_needs_the_header() -> None:
    """Every PCIe code of the legend is spelled out, a code it lacks (older drivers' SOC) sends
    the reader to topo's legend, and rows without their header line give no link."""
    topo = ("\tGPU0\tGPU1\tGPU2\tGPU3\tGPU4\n"
            "GPU0\t X \tNODE\tPXB\tPIX\tSOC\n")
    assert pair_link(topo, 0, 1) == "NODE: PCIe, through host bridges in one NUMA node"
    assert pair_link(topo, 0, 2) == "PXB: PCIe, through several PCIe switches"
    assert pair_link(topo, 0, 3) == "PIX: PCIe, through one PCIe switch"
    assert pair_link(topo, 0, 4) == "SOC: see topo's legend"
    assert pair_link("GPU1\tNV4\t X \n", 1, 0) is None  # the header line cut off


def _raw(path: Path, *cells: dict) -> Path:
    """A notebook written by hand or by an older tool: no cell ids, no metadata, sources and
    texts as one string each."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"cells": list(cells), "metadata": {}, "nbformat": 4,
                                "nbformat_minor": 4}), encoding="utf-8")
    return path


def test_cells_without_ids_are_compared_by_position(tmp_path: Path) -> None:
    """Without cell ids (nbformat before 4.5) a code cell is known by its place in the
    notebook, prose cells counted; the label of such a recording still counts the changes."""
    prose = {"cell_type": "markdown", "source": "# 05"}
    recorded = _raw(tmp_path / "run" / "05_demo.ipynb", prose,
                    {"cell_type": "code", "source": "a = 1", "outputs": []},
                    {"cell_type": "code", "source": "print(a)", "outputs": []})
    current = _raw(tmp_path / "05_demo.ipynb", prose,
                   {"cell_type": "code", "source": "a = 1"},
                   {"cell_type": "code", "source": "print(a + 1)"})
    assert changed_cells(recorded, current) == {"2"}
    assert changed_cells(recorded, recorded) == set()
    from course_utils.recorded_runs import run_label

    assert run_label({"device": "G", "date": "2026-01-01", "torch": "2.11"}, recorded,
                     current=current) == ("recorded on G (2026-01-01, torch 2.11, course ?); "
                                          "since then 1 code cell of it changed")


def test_the_label_names_the_parameters_a_run_was_given(tmp_path: Path) -> None:
    """Papermill's injected cell: the device and SAVE_RESULTS are not parameters of the
    computation, comments are not parameters, the others are listed in their order."""
    from course_utils.recorded_runs import run_label

    source = _source(tmp_path / "05_demo.ipynb", "a = 1", "print(a)")
    data = {"device": "G", "date": "2026-01-01", "torch": "2.11", "course": {"commit": "abc"}}

    def label(injected: str, current: Path = source, cell_id: str | None = None) -> str:
        nb = nbformat.read(source, as_version=4)
        cell = nbformat.v4.new_code_cell(injected)
        cell.metadata["tags"] = ["injected-parameters"]
        nb.cells.insert(1, cell)
        nbformat.write(nb, tmp_path / "run.ipynb")
        return run_label(data, tmp_path / "run.ipynb", current, cell_id)

    head = "recorded on G (2026-01-01, torch 2.11, course abc)"
    same = "; the notebook's code is as recorded"
    assert label("# Parameters\nDEVICE = None\nSAVE_RESULTS = True\n") == (
        head + ", at the default parameters" + same)
    assert label("# Parameters\n# n = 2 ** k below\nDEVICE='cuda:0'\nWIDTH = 8\nDEPTH = 2\n") == (
        head + ", with WIDTH = 8, DEPTH = 2" + same)
    edited = _source(tmp_path / "now.ipynb", "a = 2", "print(a)")
    assert label("# Parameters\n", edited) == (  # no cell named: no word about one
        head + ", at the default parameters; since then 1 code cell of it changed")


def test_changes_are_seen_past_blank_lines_and_showing_a_recording_is_none(
        tmp_path: Path) -> None:
    """A blank or comment-only line hides no code above it; importing show_recorded first,
    or removing a cell that only showed a recording, changes nothing computed."""
    recorded = _source(tmp_path / "05_demo.ipynb", "a = 1\n\n# then\nb = 2",
                       "from course_utils import pick_device", "show_recorded('05', 'cell-0')")
    (tmp_path / "now").mkdir()

    def changed(*codes: str) -> set[str]:
        return changed_cells(recorded, _source(tmp_path / "now" / "05_demo.ipynb", *codes))

    assert changed("a = 3\n\n# then\nb = 2", "from course_utils import pick_device",
                   "show_recorded('05', 'cell-0')") == {"cell-0"}
    assert changed("a = 1\nb = 2", "from course_utils import show_recorded, pick_device") == set()


def test_a_recorded_cell_keeps_its_source_and_a_prose_cell_shows_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A multi-line source comes back as written; a markdown cell has no outputs to show."""
    source = _source(tmp_path / "05_demo.ipynb", "a = 1\nb = 2", "print(a)")
    results = tmp_path / "results"
    recorded = _record(results, source, "GPU X", "2026-01-02", "0123456")
    assert recorded_cell("05", "cell-0", results).source == "a = 1\nb = 2"
    prose = read(recorded).cells[0]
    assert prose.cell_type == "markdown"
    assert recorded_cell("05", prose.id, results).outputs == []
    show_recorded("05", prose.id, results)
    assert capsys.readouterr().out.splitlines()[1:] == ["--- end of the recorded output"]


def test_drop_rules_keeps_a_row_without_rule_characters(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A rule drawn with all four characters goes; a row of bars alone (empty cells) stays."""
    source = _source(tmp_path / "11_demo.ipynb", "a = 1", "print(a)")
    recorded = _record(tmp_path / "results", source, "GPU X", "2026-01-02", "0123456789")
    nb = nbformat.read(recorded, as_version=4)
    nb.cells[3].outputs = [nbformat.v4.new_output(
        "stream", name="stdout", text="| a | b |\n|=====+-----|\n|||\n| 1 | 2 |\n")]
    nbformat.write(nb, recorded)
    show_recorded("11", "cell-1", tmp_path / "results", drop_rules=True)
    assert capsys.readouterr().out.splitlines()[1:-1] == ["| a | b |", "|||", "| 1 | 2 |"]


def test_show_recorded_passes_a_display_on_as_it_was_recorded(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Text stored as one string is printed; a display's data goes to IPython raw (as a
    mimebundle, not the repr of a dict), JSON data as the object it is."""
    shown = []
    monkeypatch.setattr("IPython.display.display",
                        lambda obj, raw=False: shown.append((obj, raw)))
    results = tmp_path / "results"
    (results / "gpu-x.json").parent.mkdir(parents=True)
    (results / "gpu-x.json").write_text(json.dumps({"device": "GPU X", "date": "2026-01-02"}))
    _raw(results / "gpu-x" / "05_demo.ipynb", {
        "cell_type": "code", "id": "c1", "source": "show()", "metadata": {}, "outputs": [
            {"output_type": "stream", "name": "stdout", "text": "one\ntwo\n"},
            {"output_type": "display_data", "metadata": {},
             "data": {"application/json": {"a": [1, 2]}, "text/plain": "{'a': [1, 2]}"}}]})
    show_recorded("05", "c1", results)
    assert capsys.readouterr().out.splitlines()[1:] == ["one", "two",
                                                        "--- end of the recorded output"]
    assert shown == [({"application/json": {"a": [1, 2]}, "text/plain": "{'a': [1, 2]}"}, True)]


def test_recordings_are_read_as_utf8_whatever_the_locale(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Notebooks and recordings holding non-ASCII text (ρ, bytes cp1252 cannot decode) are read
    as UTF-8 where the locale's encoding is another (Windows' cp1252, simulated)."""
    import hashlib
    import io

    source = _source(tmp_path / "05_demo.ipynb", "ρ = 1", "print('ρ', ρ)")
    results = tmp_path / "results"
    recorded = _record(results, source, "GPU X", "2026-01-02", "0123456")
    (results / "gpu-x" / "trace.gz").write_bytes(b"x")
    run = json.loads((results / "gpu-x.json").read_text(encoding="utf-8"))
    (results / "gpu-x.json").write_text(json.dumps({**run, "device": "GPU ρ"}, ensure_ascii=False),
                                        encoding="utf-8")
    monkeypatch.setattr(io, "text_encoding", lambda encoding, stacklevel=2: encoding or "cp1252")
    assert code_hashes(source)["cells"][0] == hashlib.sha256("ρ = 1".encode()).hexdigest()[:16]
    assert changed_cells(recorded, source) == set()
    cell = recorded_cell("05", "cell-1", results, current=source)
    assert cell.source == "print('ρ', ρ)"
    assert cell.label.startswith("recorded on GPU ρ (2026-01-02")
    assert cell.label.endswith("; the notebook's code is as recorded")
    assert [run["device"] for _, run in recorded_files("trace.gz", results)] == ["GPU ρ"]

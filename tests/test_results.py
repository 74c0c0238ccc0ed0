"""The results files: one per machine, one key per topic, metadata at the top."""

from __future__ import annotations

import dataclasses
import datetime
import gzip
import json
from pathlib import Path

import pytest
import torch

import course_utils.results as results_module
from course_utils import (Timing, benchmark, data_path, load_results, results_file,
                          results_folder, save_file, save_results)


def test_save_then_load_keeps_every_key(tmp_path: Path) -> None:
    path = save_results("sweeps", {"matmul": {"sizes": (1, 2), "seconds": [0.5, 0.25]}},
                        device_name="GPU X", folder=tmp_path)
    assert path == tmp_path / "gpu-x.json"
    save_results("transfers", {"h2d": {"sizes": torch.tensor([4096])}}, device_name="GPU X",
                 folder=tmp_path)
    data = json.loads(path.read_text())
    assert set(data) == {"device", "torch", "cuda", "date", "sweeps", "transfers"}
    assert data["device"] == "GPU X" and data["torch"] == torch.__version__
    assert data["cuda"] == torch.version.cuda
    assert data["date"] == datetime.date.today().isoformat()
    assert data["transfers"] == {"h2d": {"sizes": [4096]}}  # a tensor stored as a list
    assert '"sizes": [1, 2]' in path.read_text()  # number lists kept on one line
    (entry,) = load_results("sweeps", tmp_path)
    assert entry.value == {"matmul": {"sizes": [1, 2], "seconds": [0.5, 0.25]}}
    assert entry.device == "GPU X" and entry.path == path
    assert entry.label.startswith("recorded on GPU X (")


def test_a_timing_is_stored_with_its_fields(tmp_path: Path) -> None:
    t = Timing(median=0.5, iqr=0.1, runs=10, device="cpu", num_threads=2, times=(0.4, 0.5, 0.6))
    save_results("training", {"epoch": t}, device_name="A", folder=tmp_path)
    (entry,) = load_results("training", tmp_path)
    assert entry.value["epoch"]["median"] == 0.5 and entry.value["epoch"]["times"] == [0.4, 0.5, 0.6]


def test_a_measured_timing_is_stored_without_torchs_measurement(tmp_path: Path) -> None:
    """benchmark()'s Timing carries torch's Measurement for printing; the file keeps the
    figures (every other field), not that object."""
    t = benchmark(lambda: None, device="cpu", min_run_time=0.01)
    assert t.measurement is not None
    save_results("training", {"epoch": t}, device_name="A", folder=tmp_path)
    (entry,) = load_results("training", tmp_path)
    stored = entry.value["epoch"]
    assert set(stored) == {f.name for f in dataclasses.fields(Timing)} - {"measurement"}
    assert stored["median"] == t.median and stored["times"] == list(t.times)


def test_the_newest_recording_comes_first(tmp_path: Path) -> None:
    # File names in the other order: "a-old" sorts before "z-new".
    save_results("training", {"x": 1}, device_name="Z new", folder=tmp_path, date="2026-05-01")
    save_results("training", {"x": 2}, device_name="A old", folder=tmp_path, date="2025-05-01")
    assert [r.device for r in load_results("training", tmp_path)] == ["Z new", "A old"]


def test_load_skips_files_without_the_key(tmp_path: Path) -> None:
    save_results("training", {"x": 1}, device_name="A", folder=tmp_path, date="2026-01-02")
    save_results("sweeps", {"y": 2}, device_name="B", folder=tmp_path)
    (found,) = load_results("training", tmp_path)
    assert found.device == "A" and found.date == "2026-01-02"
    assert load_results("absent-key", tmp_path) == []
    assert load_results("training", tmp_path / "no-such-folder") == []


def test_bad_input(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_results("sweeps", tmp_path)
    with pytest.raises(ValueError, match="key"):
        save_results("", {}, device_name="x", folder=tmp_path)
    with pytest.raises(ValueError, match="file name"):
        results_file("***")


def test_merge_adds_to_a_dict_key(tmp_path: Path) -> None:
    save_results("headline", {"a": 1, "b": 2}, device_name="G", folder=tmp_path)
    path = save_results("headline", {"b": 3, "c": None}, device_name="G", folder=tmp_path,
                        merge=True)
    assert json.loads(path.read_text())["headline"] == {"a": 1, "b": 3, "c": None}
    save_results("headline", {"d": 4}, device_name="G", folder=tmp_path)  # no merge: replaced
    assert json.loads(path.read_text())["headline"] == {"d": 4}
    with pytest.raises(TypeError, match="dict"):
        save_results("headline", [1], device_name="G", folder=tmp_path, merge=True)


def test_results_go_where_the_reader_says(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COURSE_RESULTS_DIR", str(tmp_path / "mine"))
    assert results_folder() == tmp_path / "mine"
    path = save_results("sweeps", {"x": 1}, device_name="GPU Y")
    assert path == tmp_path / "mine" / "gpu-y.json"
    paths = [r.path for r in load_results("sweeps")]  # read back with no folder named
    assert paths.count(path) == 1  # beside the course's own recordings, if it ships any
    assert all(p.parent == data_path("results") for p in paths if p != path)


def test_an_installed_package_writes_to_the_working_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Outside a checkout (a wheel in site-packages) the package's own folder is not the reader's.
    monkeypatch.delenv("COURSE_RESULTS_DIR", raising=False)
    site = tmp_path / "site-packages" / "course_utils" / "data" / "results"
    monkeypatch.setattr(results_module, "data_path", lambda *parts: site)
    monkeypatch.chdir(tmp_path)
    assert results_folder() == tmp_path / "course_results"
    checkout = tmp_path / "course"
    (checkout / "notebooks").mkdir(parents=True)
    (checkout / "pyproject.toml").write_text("")
    in_checkout = checkout / "data" / "results"
    monkeypatch.setattr(results_module, "data_path", lambda *parts: in_checkout)
    assert results_folder() == in_checkout  # a checkout: its recordings can be committed


def test_each_shipped_recording_is_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    shipped = sorted(p.resolve() for p in data_path("results").glob("*.json"))
    keyed = [p for p in shipped if json.loads(p.read_text()).get("machine")]
    assert keyed, "the course ships recordings with a machine block"
    for where in (None, str(data_path("results")), str(data_path("results")) + "/"):
        if where is None:
            monkeypatch.delenv("COURSE_RESULTS_DIR", raising=False)
        else:  # the reader's folder is the shipped one: still one entry each
            monkeypatch.setenv("COURSE_RESULTS_DIR", where)
        paths = [r.path.resolve() for r in load_results("machine")]
        assert sorted(paths) == keyed


def test_shipped_recordings_are_found_beside_the_readers_own(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COURSE_RESULTS_DIR", str(tmp_path))  # empty: the reader has none
    shipped = {p.resolve() for p in data_path("results").glob("*.json")
               if json.loads(p.read_text()).get("machine")}
    assert {r.path.resolve() for r in load_results("machine")} == shipped
    dates = [r.date for r in load_results("machine")]
    assert dates == sorted(dates, reverse=True)  # newest first


def test_saved_file_layout_and_fields(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.version, "cuda", "12.4")
    folder = tmp_path / "deep" / "er"  # made, parents and all
    path = save_results("sweeps", {"n": [1, 2, 3]}, device_name="GPU Z", folder=folder,
                        date="2026-01-02")
    assert path.read_text(encoding="utf-8") == (
        '{\n "device": "GPU Z",\n "torch": "%s",\n "cuda": "12.4",\n "date": "2026-01-02",\n'
        ' "sweeps": {\n  "n": [1, 2, 3]\n }\n}\n' % torch.__version__)
    with pytest.raises(TypeError, match=r"^merge=True needs a dict value, got list\.$"):
        save_results("x", [1], device_name="GPU Z", folder=folder, merge=True)
    (folder / "old.json").write_text(json.dumps({"headline": {"a": 1}}))  # no fields at all
    got = {r.path.name: r for r in load_results("headline", folder)}["old.json"]
    assert (got.device, got.date, got.torch, got.cuda) == ("old", "date unknown", "?", None)
    got = load_results("sweeps", folder)[0]
    assert (got.device, got.date, got.torch, got.cuda, got.value) == (
        "GPU Z", "2026-01-02", torch.__version__, "12.4", {"n": [1, 2, 3]})


def test_the_readers_folder_in_a_checkout_and_outside(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COURSE_RESULTS_DIR", raising=False)
    assert results_folder() == data_path("results")  # this checkout: commit a recording
    package = tmp_path / "pkg"
    site = package / "data" / "results"
    monkeypatch.setattr(results_module, "data_path", lambda *parts: site)
    monkeypatch.chdir(tmp_path)
    package.mkdir()
    (package / "pyproject.toml").write_text("")  # a project, but not the course (no notebooks/)
    assert results_folder() == tmp_path / "course_results"
    (package / "pyproject.toml").unlink()
    (package / "notebooks").mkdir()  # notebooks, but no project file: not a checkout either
    assert results_folder() == tmp_path / "course_results"


def test_kept_files_go_to_a_new_folder_one_beside_the_other(tmp_path: Path) -> None:
    """save_file makes the device's folder, parents and all, and keeps a second file beside
    the first."""
    folder = tmp_path / "new" / "results"  # nothing there yet: no results file either
    for name in ("trace.json", "memory.pickle"):
        (tmp_path / name).write_bytes(name.encode())
        kept = save_file(tmp_path / name, device_name="GPU Q", folder=folder)
        assert kept == folder / "gpu-q" / f"{name}.gz"
        assert gzip.decompress(kept.read_bytes()) == name.encode()
    assert sorted(p.name for p in (folder / "gpu-q").iterdir()) == [
        "memory.pickle.gz", "trace.json.gz"]


def test_results_are_read_as_utf8_whatever_the_locale(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A results file holding non-ASCII text (a key such as "host→device", or ρ, which cp1252
    cannot decode) is read as UTF-8 where the locale's encoding is another (Windows' cp1252,
    simulated), by load_results and by save_results adding a key."""
    import io

    path = tmp_path / "gpu-x.json"
    path.write_text(json.dumps({"device": "GPU ρ", "date": "2026-01-02",
                                "transfers": {"host→device": 1.5}}, ensure_ascii=False),
                    encoding="utf-8")
    monkeypatch.setattr(io, "text_encoding", lambda encoding, stacklevel=2: encoding or "cp1252")
    (found,) = load_results("transfers", tmp_path)
    assert (found.device, found.value) == ("GPU ρ", {"host→device": 1.5})
    save_results("sweeps", {"n": 1}, device_name="GPU X", folder=tmp_path, date="2026-01-03")
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["transfers"] == {"host→device": 1.5} and data["sweeps"] == {"n": 1}

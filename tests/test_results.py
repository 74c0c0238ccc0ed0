"""The shared results files: one per machine, one key per topic, metadata at the top."""

from __future__ import annotations

import datetime
import json
from pathlib import Path

import pytest
import torch

from course_utils import data_path
from course_utils.results import device_slug, read_entries, results_dir, write_entry


def test_write_then_read_keeps_every_key(tmp_path: Path) -> None:
    path = tmp_path / "gpu-x.json"
    write_entry(path, "sweeps", {"matmul": {"sizes": [1, 2], "seconds": [0.5, 0.25]}},
                device_name="GPU X")
    write_entry(path, "transfers", {"h2d": {"sizes": [4096]}}, device_name="GPU X")
    data = json.loads(path.read_text())
    assert set(data) == {"device", "torch", "cuda", "date", "sweeps", "transfers"}
    assert data["device"] == "GPU X" and data["torch"] == torch.__version__
    assert data["cuda"] == torch.version.cuda
    assert data["date"] == datetime.date.today().isoformat()
    assert '"sizes": [1, 2]' in path.read_text()  # number lists kept on one line
    (entry,) = read_entries(tmp_path, "sweeps")
    assert entry.value == {"matmul": {"sizes": [1, 2], "seconds": [0.5, 0.25]}}
    assert entry.device == "GPU X" and entry.path == path
    assert entry.label.startswith("recorded on GPU X (")


def test_read_skips_files_without_the_key(tmp_path: Path) -> None:
    write_entry(tmp_path / "a.json", "training", {"x": 1}, device_name="A", date="2026-01-02")
    write_entry(tmp_path / "b.json", "sweeps", {"y": 2}, device_name="B")
    (found,) = read_entries(tmp_path, "training")
    assert found.device == "A" and found.date == "2026-01-02"
    assert read_entries(tmp_path, "absent-key") == []
    assert read_entries(tmp_path / "no-such-folder", "training") == []


def test_bad_input(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        read_entries(tmp_path, "sweeps")
    with pytest.raises(ValueError, match="key"):
        write_entry(tmp_path / "x.json", "", {}, device_name="x")


def test_device_slug_and_folder() -> None:
    assert device_slug("NVIDIA H100 80GB HBM3") == "nvidia-h100-80gb-hbm3"
    with pytest.raises(ValueError):
        device_slug("***")
    assert results_dir() == data_path("results")

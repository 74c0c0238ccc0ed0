"""Notebook 19's recorded ladder: what its saving cell writes is what its chart draws.

CI has no GPU, so 18 never records there (it saves on an accelerator only) and no ladder is
shipped yet: without this test, the path a reader without a GPU sees once a recording exists
(the recorded GPU's ladder beside this run's) would first run on that reader's machine. The
two cells run here as they are in the notebook, on a stand-in ladder.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib
import pandas as pd
import pytest
import torch

from course_utils import load_results, save_results
from tests.nbtools import NOTEBOOK_DIR, read

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

NOTEBOOK = NOTEBOOK_DIR / "19_how_fast_can_training_go.ipynb"
FIELDS = ("to target", "epochs", "step", "operators", "verdict", "peak", "accuracy")


def _cell(starts: str) -> str:
    (source,) = [c.source for c in read(NOTEBOOK).cells
                 if c.cell_type == "code" and c.source.startswith(starts)]
    return source


def _rows(seconds: list[float]) -> list[dict]:
    """A ladder of two rungs, in the notebook's row layout (one dict per rung climbed)."""
    return [{"rung": rung, "to target": s, "epochs": 9 - k, "step": 1e-3 / (k + 1),
             "operators": 40 - 10 * k, "verdict": "launch-bound", "peak": 2**20 * (k + 1),
             "accuracy": 0.9, "gain": 1.0}
            for k, (rung, s) in enumerate(zip(("baseline", "fused Adam"), seconds))]


@pytest.fixture
def recordings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("COURSE_RESULTS_DIR", str(tmp_path))  # the reader's folder, empty
    return tmp_path


def test_a_recorded_ladder_is_saved_then_drawn_beside_this_run(
        recordings: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gpu_rows = _rows([12.0, 3.0])
    ns = {"SAVE_RESULTS": True, "device": torch.device("cuda"), "ladder_rows": lambda: gpu_rows,
          "device_report": lambda device: {"device_name": "NVIDIA H200"},
          "save_results": save_results}
    exec(_cell("# Record this machine's ladder"), ns)
    assert "ladder saved:" in capsys.readouterr().out
    (recorded,) = load_results("ladder", recordings)
    assert recorded.device == "NVIDIA H200"
    assert recorded.value == {r["rung"]: {k: r[k] for k in FIELDS} for r in gpu_rows}

    here = pd.DataFrame(_rows([40.0, 20.0])).set_index("rung")  # this run's, on the CPU
    ns = {"load_results": lambda key: load_results(key, recordings),  # not the shipped ones
          "plt": plt, "pd": pd, "ladder": here, "device": torch.device("cpu")}
    plt.close("all")
    exec(_cell("# Time to target per rung"), ns)
    assert "recorded GPU ladders: 1" in capsys.readouterr().out
    ax = plt.gcf().axes[0]
    (mine, theirs) = ax.get_lines()
    assert list(mine.get_ydata()) == [40.0, 20.0] and mine.get_label() == "this run: cpu"
    assert list(theirs.get_ydata()) == [12.0, 3.0]  # the recorded times to the target
    assert theirs.get_label() == recorded.label and "NVIDIA H200" in theirs.get_label()
    plt.close("all")


def test_a_cpu_run_does_not_record_a_ladder(
        recordings: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ns = {"SAVE_RESULTS": True, "device": torch.device("cpu"),
          "ladder_rows": lambda: _rows([1.0, 2.0]),
          "device_report": lambda device: {"device_name": "a CPU"}, "save_results": save_results}
    exec(_cell("# Record this machine's ladder"), ns)
    assert capsys.readouterr().out.startswith("not saved: the recording is for accelerators")
    assert load_results("ladder", recordings) == [] and not list(recordings.iterdir())


def test_without_a_recording_the_chart_says_how_to_make_one(
        recordings: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ns = {"load_results": lambda key: load_results(key, recordings), "plt": plt, "pd": pd,
          "ladder": pd.DataFrame(_rows([4.0, 2.0])).set_index("rung"),
          "device": torch.device("cpu")}
    plt.close("all")
    exec(_cell("# Time to target per rung"), ns)
    assert "recorded GPU ladders: 0 (make gpu-run on a GPU records one" in capsys.readouterr().out
    assert len(plt.gcf().axes[0].get_lines()) == 1  # this run's alone
    plt.close("all")

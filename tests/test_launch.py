"""course_utils.torchrun: a launch's ranks read back in order, a failure and a hang reported."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from course_utils import torchrun

SCRIPT = """
import argparse, json, os, sys, time
p = argparse.ArgumentParser()
p.add_argument("--out")
p.add_argument("--mode", default="ok")
a = p.parse_args()
rank = int(os.environ["RANK"])
if a.mode == "fail" and rank == 0:
    print("rank 0 gives up"); sys.exit(3)
if a.mode == "hang":
    time.sleep(600)
os.makedirs(a.out, exist_ok=True)
with open(os.path.join(a.out, f"rank{rank}.json"), "w") as f:
    json.dump({"rank": rank, "world_size": int(os.environ["WORLD_SIZE"])}, f)
"""


@pytest.fixture()
def script(tmp_path: Path) -> Path:
    path = tmp_path / "ranks.py"
    path.write_text(SCRIPT)
    return path


def test_the_ranks_come_back_in_rank_order(script: Path, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    ranks = torchrun(script, tmp_path / "runs" / "two", 2, [])
    assert ranks == [{"rank": 0, "world_size": 2}, {"rank": 1, "world_size": 2}]
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("$ torchrun --standalone --nproc_per_node 2 ")
    assert "--out RUNS/two" in printed[0]  # the runs' folder, shortened
    assert printed[1].startswith("  2 rank(s), launch ")


def test_a_failed_launch_raises_with_its_log(script: Path, tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="rank 0 gives up"):
        torchrun(script, tmp_path / "runs" / "fail", 1, ["--mode", "fail"])


def test_a_hung_launch_is_stopped_ranks_and_all(script: Path, tmp_path: Path) -> None:
    start = time.perf_counter()
    with pytest.raises(subprocess.TimeoutExpired):
        torchrun(script, tmp_path / "runs" / "hang", 1, ["--mode", "hang"], timeout=4)
    assert time.perf_counter() - start < 90  # torchrun and its rank stopped, not waited out
    left = subprocess.run(["pgrep", "-f", str(script)], capture_output=True, text=True)
    assert left.stdout.strip() == "", "a rank outlived its launch"
    assert not list((tmp_path / "runs" / "hang").glob("rank*.json"))

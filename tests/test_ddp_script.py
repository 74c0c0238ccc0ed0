"""The DDP script's own checks, and its nccl run on GPUs.

Notebook 05 launches the script on the CPU and asserts what the runs must show: each rank's
share of the batch, ranks identical bit for bit, the one-process loss curve followed (to 1e-9
in float64, the CI preset's dtype). Those launches run in the notebook tests, so this module
does not repeat them.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from tests.nbtools import REPO

SCRIPT = REPO / "notebooks" / "scripts" / "ddp_train.py"
# Small, for the one GPU test below.
ARGS = ["--grid", "16", "--batch-size", "64", "--epochs", "5", "--hidden", "16",
        "--lr", "0.05", "--timing-steps", "2", "--seed", "3"]


def torchrun(nproc: int, out: Path, *extra: str) -> list[dict[str, Any]]:
    """Run the script with torchrun on this machine and return the ranks' records."""
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node",
           str(nproc), str(SCRIPT), "--out", str(out), *ARGS, *extra]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    records = [json.loads(p.read_text()) for p in out.glob("rank*.json")]
    return sorted(records, key=lambda r: r["rank"])


@pytest.fixture(scope="module")
def script() -> Any:
    """The script as a module, to call its main() in this process (no interpreter start-up)."""
    spec = importlib.util.spec_from_file_location("ddp_train", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("env,args,message", [
    ({}, [], "launch this script with torchrun"),
    ({"WORLD_SIZE": "2"}, ["--batch-size", "5"], "must be a multiple of the 2 rank(s)"),
    ({}, ["--strategy", "zero3"], "argument --strategy: invalid choice: 'zero3'"),
])
def test_clear_errors(script: Any, env: dict[str, str], args: list[str], message: str,
                      tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                      capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(SystemExit) as stopped:
        script.main(["--out", str(tmp_path), *args])
    # sys.exit("...") carries the message, which Python prints; argparse prints its own.
    said = capsys.readouterr().err + (stopped.value.code if isinstance(stopped.value.code, str)
                                      else "")
    assert stopped.value.code != 0 and message in said
    assert not list(tmp_path.glob("rank*.json"))


@pytest.mark.gpu
def test_one_rank_per_gpu_with_nccl(tmp_path: Path) -> None:
    n = min(torch.cuda.device_count(), 2)
    ranks = torchrun(n, tmp_path, "--device", "cuda", "--batch-size", str(64 // n * n))
    assert [r["device"] for r in ranks] == [f"cuda:{i}" for i in range(n)]
    assert all(r["backend"] == "nccl" and r["params"] == ranks[0]["params"] for r in ranks)

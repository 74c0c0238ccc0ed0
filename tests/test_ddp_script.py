"""The DDP script's own checks, and its nccl run on GPUs.

Notebook 05 launches the script on the CPU and asserts what the runs must show: each rank's
share of the batch, ranks identical bit for bit, the one-process loss curve followed (to 1e-9
in float64, the CI preset's dtype). Those launches run in the notebook tests, so this module
does not repeat them.
"""

from __future__ import annotations

import json
import os
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


@pytest.mark.parametrize("env,args,message", [
    ({}, [], "launch this script with torchrun"),
    ({"WORLD_SIZE": "2"}, ["--batch-size", "5"], "must be a multiple of the 2 rank(s)"),
    ({}, ["--strategy", "zero3"], "argument --strategy: invalid choice: 'zero3'"),
])
def test_clear_errors(env: dict[str, str], args: list[str], message: str, tmp_path: Path) -> None:
    clean = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK")}
    done = subprocess.run([sys.executable, str(SCRIPT), "--out", str(tmp_path), *args],
                          capture_output=True, text=True, timeout=120, env={**clean, **env})
    assert done.returncode != 0 and message in done.stderr
    assert not list(tmp_path.glob("rank*.json"))


@pytest.mark.gpu
def test_one_rank_per_gpu_with_nccl(tmp_path: Path) -> None:
    n = min(torch.cuda.device_count(), 2)
    ranks = torchrun(n, tmp_path, "--device", "cuda", "--batch-size", str(64 // n * n))
    assert [r["device"] for r in ranks] == [f"cuda:{i}" for i in range(n)]
    assert all(r["backend"] == "nccl" and r["params"] == ranks[0]["params"] for r in ranks)

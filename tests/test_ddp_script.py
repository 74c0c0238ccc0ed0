"""The DDP script under torchrun: ranks share the data, agree, and match one process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from course_utils import repo_root

SCRIPT = repo_root() / "notebooks" / "scripts" / "ddp_train.py"
# Small and in float64, so that 2 ranks and 1 process agree to float64 rounding.
ARGS = ["--grid", "16", "--batch-size", "64", "--epochs", "5", "--hidden", "16",
        "--lr", "0.05", "--timing-steps", "2", "--dtype", "float64", "--seed", "3"]


def torchrun(nproc: int, out: Path, *extra: str) -> list[dict[str, Any]]:
    """Run the script with torchrun on this machine and return the ranks' records."""
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node",
           str(nproc), str(SCRIPT), "--out", str(out), *ARGS, *extra]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    records = [json.loads(p.read_text()) for p in out.glob("rank*.json")]
    return sorted(records, key=lambda r: r["rank"])


@pytest.fixture(scope="module")
def cpu_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[int, list[dict[str, Any]]]:
    """One launch with 2 ranks and one with 1 process, both on the CPU (gloo)."""
    root = tmp_path_factory.mktemp("ddp")
    return {n: torchrun(n, root / f"n{n}", "--device", "cpu", "--threads", "1") for n in (1, 2)}


def test_every_rank_reports(cpu_runs: dict[int, list[dict[str, Any]]]) -> None:
    for n, ranks in cpu_runs.items():
        assert [r["rank"] for r in ranks] == list(range(n))
        for r in ranks:
            assert r["world_size"] == n and r["backend"] == "gloo" and r["device"] == "cpu"
            assert r["threads"] == 1 and r["n_samples"] == 256
            assert len(r["losses"]) == 5 * r["steps_per_epoch"] == 5 * 256 // 64
            assert len(r["epoch_times"]) == 5 and min(r["epoch_times"]) > 0
            assert len(r["step_sync_times"]) == len(r["step_no_sync_times"]) == 2
            assert r["allreduce_median"] > 0


def test_each_rank_gets_its_share(cpu_runs: dict[int, list[dict[str, Any]]]) -> None:
    (one,), two = cpu_runs[1], cpu_runs[2]
    assert one["local_batch"] == 64 and [r["local_batch"] for r in two] == [32, 32]
    assert [r["samples_per_rank"] for r in two] == [128, 128] and one["samples_per_rank"] == 256
    # The sampler deals the same shuffled order alternately: rank r gets positions r, r+2, ...
    for r in two:
        assert r["first_batch"] == one["first_batch"][r["rank"] :: 2]
    assert set(two[0]["first_batch"]).isdisjoint(two[1]["first_batch"])


def test_ranks_end_with_identical_parameters(cpu_runs: dict[int, list[dict[str, Any]]]) -> None:
    two = cpu_runs[2]
    assert two[0]["params"] == two[1]["params"]  # bit for bit
    n_params = 2 * 16 + 16 + 16 * 16 + 16 + 16 + 1
    assert len(two[0]["params"]) == n_params


def test_two_ranks_follow_the_one_process_run(cpu_runs: dict[int, list[dict[str, Any]]]) -> None:
    (one,), two = cpu_runs[1], cpu_runs[2]
    loss_two = torch.tensor([r["losses"] for r in two], dtype=torch.float64).mean(0)
    loss_one = torch.tensor(one["losses"], dtype=torch.float64)
    assert loss_one[-4:].mean() < 0.7 * loss_one[:4].mean()  # it learned something
    torch.testing.assert_close(loss_two, loss_one, rtol=1e-10, atol=0)
    torch.testing.assert_close(torch.tensor(two[0]["params"], dtype=torch.float64),
                               torch.tensor(one["params"], dtype=torch.float64),
                               rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("env,args,message", [
    ({}, [], "launch this script with torchrun"),
    ({"WORLD_SIZE": "2"}, ["--batch-size", "5"], "must be a multiple of the 2 rank(s)"),
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

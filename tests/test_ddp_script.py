"""The DDP script's own checks, and its nccl run on GPUs.

Notebooks 14 to 16 launch the script on the CPU and assert what the runs must show: each rank's
share of the batch, ranks identical bit for bit, the one-process loss curve followed (to 1e-9
in float64, the CI preset's dtype). Those launches run in the notebook tests, so this module
does not repeat them.
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import statistics
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


# One rank, on the CPU, in a fresh interpreter (it ends with os._exit, as the script does, so
# that no process group is torn down while FSDP holds it): wrap the model with FSDP, watching
# every fully_shard call, and time an all-reduce with per_call().
MESH_CHECK = """
import json, os, sys
import torch, torch.distributed as dist, torch.distributed.fsdp as fsdp_api
from importlib.util import module_from_spec, spec_from_file_location
spec = spec_from_file_location("ddp_train", sys.argv[1])
script = module_from_spec(spec)
spec.loader.exec_module(script)
meshes, real = [], fsdp_api.fully_shard
def spy(module, **kw):
    meshes.append(kw.get("mesh"))
    return real(module, **kw)
fsdp_api.fully_shard = spy
rank, local_rank, world_size, device = script.setup("cpu", 0, 60.0)
model = script.wrap(script.make_model(4), "fsdp", device)
t = script.per_call(lambda: dist.all_reduce(torch.ones(8)), 3, device)
print(json.dumps({"device": str(device), "calls": len(meshes), "t": t,
                  "passed": [m.device_type if m is not None else None for m in meshes],
                  "params": sorted({(p.device_mesh.device_type, p.device.type)
                                    for p in model.parameters()})}))
sys.stdout.flush()
os._exit(0)
"""


def test_fsdp_mesh_is_on_the_runs_device(tmp_path: Path) -> None:
    # Without mesh=, fully_shard builds its mesh on the machine's accelerator, so on a GPU
    # machine a CPU (gloo) run would be moved to the GPUs. Every call must get a CPU mesh.
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {"RANK": "0", "LOCAL_RANK": "0", "WORLD_SIZE": "1", "LOCAL_WORLD_SIZE": "1",
           "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port)}
    done = subprocess.run([sys.executable, "-c", MESH_CHECK, str(SCRIPT)], cwd=tmp_path,
                          env={**os.environ, **env}, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["device"] == "cpu"
    assert seen["calls"] == 4 and seen["passed"] == ["cpu"] * 4  # 3 Linear layers, the root
    assert seen["params"] == [["cpu", "cpu"]]  # DTensors on a CPU mesh, data on the CPU
    assert seen["t"] > 0


@pytest.mark.gpu
def test_one_rank_per_gpu_with_nccl(tmp_path: Path) -> None:
    n = min(torch.cuda.device_count(), 2)
    ranks = torchrun(n, tmp_path, "--device", "cuda", "--batch-size", str(64 // n * n))
    assert [r["device"] for r in ranks] == [f"cuda:{i}" for i in range(n)]
    assert all(r["backend"] == "nccl" and r["params"] == ranks[0]["params"] for r in ranks)


@pytest.mark.parametrize("strategy", ["ddp", "fsdp"])
def test_each_rank_times_its_collectives_and_a_one_number_all_reduce(
        tmp_path: Path, strategy: str) -> None:
    (rank,) = torchrun(1, tmp_path, "--device", "cpu", "--threads", "1", "--strategy", strategy)
    timed = {"ddp": ["step_sync", "step_no_sync", "allreduce", "allreduce_tiny"],
             "fsdp": ["step_sync", "allgather", "reduce_scatter", "allreduce_tiny"]}[strategy]
    assert sorted(k[:-len("_median")] for k in rank if k.endswith("_median")) == sorted(timed)
    for name in timed:  # the median of the kept rounds, each a positive time
        times = rank[f"{name}_times"]
        assert len(times) == int(rank["args"]["timing_steps"]) and min(times) > 0
        assert rank[f"{name}_median"] == statistics.median(times)

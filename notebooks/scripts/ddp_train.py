"""Train a small regression network with DDP or FSDP2: a process per device.

torchrun starts the processes and tells each who it is (RANK, LOCAL_RANK, WORLD_SIZE):

    python -m torch.distributed.run --standalone --nproc_per_node 2 \
        notebooks/scripts/ddp_train.py --out runs/two

Every process (a "rank") does the same thing:
1. joins the process group: backend gloo on CPUs, nccl on NVIDIA GPUs (cuda:LOCAL_RANK,
   or cuda:FIRST_GPU+LOCAL_RANK with --first-gpu), with a timeout on every collective;
2. builds the same model from the same seed and wraps it in DDP (a full copy on every
   rank), or with --strategy fsdp shards it with FSDP2's fully_shard (each rank keeps
   1/WORLD_SIZE of the parameters, gradients and optimizer state);
3. reads only its share of every batch, chosen by a DistributedSampler;
4. trains: during backward, DDP averages the gradients over all ranks (an all-reduce),
   so every rank takes the same optimizer step and the parameters stay identical;
   FSDP all-gathers each layer's parameters before its forward and again before its
   backward, and reduce-scatters (averages, then shares out) the gradients;
5. counts the bytes it holds of parameters, gradients and optimizer state;
6. times training steps with and without that all-reduce (no_sync) to show its cost,
   and the all-reduce alone, as a run of back-to-back calls (FSDP: a step, and an
   all-gather and a reduce-scatter of the parameters' size), and an all-reduce of one
   number: the fixed cost of a call, its latency;
7. writes what it saw to OUT/rank<R>.json, which notebooks 13 to 15 read and compare.

The same file runs unchanged on one CPU, on several GPUs and on several machines.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import sys
import time
from datetime import timedelta
from pathlib import Path

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.device_mesh import init_device_mesh
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data.distributed import DistributedSampler

from course_utils import peaks_grid


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Read the command line; --batch-size is the global batch, shared among ranks."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, required=True, help="folder for rank<R>.json")
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto",
                   help="auto: one GPU per rank when CUDA is available, else the CPU")
    p.add_argument("--first-gpu", type=int, default=0,
                   help="with CUDA, local rank r uses GPU first_gpu + r")
    p.add_argument("--grid", type=int, default=64, help="grid side: grid**2 samples")
    p.add_argument("--batch-size", type=int, default=512, help="all ranks together")
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--hidden", type=int, default=64, help="width of the hidden layers")
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    p.add_argument("--strategy", choices=["ddp", "fsdp"], default="ddp",
                   help="ddp: a full copy per rank; fsdp: parameters, gradients and "
                        "optimizer state sharded over the ranks (FSDP2, fully_shard)")
    p.add_argument("--timing-steps", type=int, default=20,
                   help="steps timed with and without the gradient all-reduce")
    p.add_argument("--repeats", type=int, default=10,
                   help="collectives per timed run, back to back: the time is per call")
    p.add_argument("--timeout", type=float, default=300,
                   help="seconds a rank waits in a collective before it fails")
    p.add_argument("--threads", type=int, default=0,
                   help="CPU threads per rank; 0: the cores shared among local ranks")
    return p.parse_args(argv)


def check_args(args: argparse.Namespace, world_size: int) -> None:
    """Stop with a clear message when the sizes do not share out evenly over ranks."""
    n = args.grid**2
    if args.grid < 2 or min(args.epochs, args.hidden, args.timing_steps, args.repeats,
                            args.timeout) <= 0 or args.first_gpu < 0:
        sys.exit("need --grid >= 2, positive --epochs, --hidden, --timing-steps, "
                 "--repeats and --timeout, and --first-gpu >= 0")
    if not world_size <= args.batch_size <= n or args.batch_size % world_size:
        sys.exit(f"--batch-size {args.batch_size} must be a multiple of the "
                 f"{world_size} rank(s) and at most the {n} samples (--grid squared)")


def make_model(hidden: int) -> nn.Sequential:
    """The network: inputs (x, y), two hidden ReLU layers, one output (peaks(x, y))."""
    return nn.Sequential(nn.Linear(2, hidden), nn.ReLU(), nn.Linear(hidden, hidden),
                         nn.ReLU(), nn.Linear(hidden, 1))


def wrap(model: nn.Sequential, strategy: str, device: torch.device) -> nn.Module:
    """DDP around the whole model; or FSDP2: each Linear sharded, then the root."""
    if strategy == "ddp":
        return DDP(model, device_ids=[device.index] if device.type == "cuda" else None)
    from torch.distributed.fsdp import fully_shard  # here: its import takes most of a second

    # The ranks, on this run's device type. Without mesh=, fully_shard builds its mesh on
    # the machine's accelerator: on a GPU machine a CPU run would move to the GPUs.
    mesh = init_device_mesh(device.type, (dist.get_world_size(),))
    for layer in model:
        if isinstance(layer, nn.Linear):
            fully_shard(layer, mesh=mesh)  # gathered just before it is used, freed after
    return fully_shard(model, mesh=mesh)  # the root: its parameters now DTensors


def local_bytes(tensors: list[torch.Tensor]) -> int:
    """Bytes this rank holds of `tensors`: its own shard of a (sharded) DTensor."""
    return sum((t.to_local() if hasattr(t, "to_local") else t).nbytes for t in tensors)


def setup(device_choice: str, first_gpu: int, timeout: float
          ) -> tuple[int, int, int, torch.device]:
    """Join the process group; return rank, local rank, world size and this device."""
    rank = int(os.environ["RANK"])  # 0 .. WORLD_SIZE-1 over all machines
    local_rank = int(os.environ["LOCAL_RANK"])  # 0 .. nproc_per_node-1 on this machine
    world_size = int(os.environ["WORLD_SIZE"])
    if device_choice == "auto":
        device_choice = "cuda" if torch.cuda.is_available() else "cpu"
    # A rank that waits longer than this in a collective (another rank died or hung)
    # fails with an error instead of holding its device forever.
    wait_at_most = timedelta(seconds=timeout)
    if device_choice == "cuda":
        if first_gpu + local_rank >= torch.cuda.device_count():
            sys.exit(f"local rank {local_rank} has no GPU: this machine has "
                     f"{torch.cuda.device_count()}: use --nproc_per_node <= that "
                     f"minus --first-gpu ({first_gpu})")
        device = torch.device("cuda", first_gpu + local_rank)  # each rank owns one GPU
        torch.cuda.set_device(device)
        dist.init_process_group("nccl", device_id=device, timeout=wait_at_most)
    else:
        device = torch.device("cpu")
        dist.init_process_group("gloo", timeout=wait_at_most)
    return rank, local_rank, world_size, device


def wait(device: torch.device) -> float:
    """Wait for the device's queued work, then read the clock (GPU work is async)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return time.perf_counter()


def per_call(collective, repeats: int, device: torch.device) -> float:
    """Seconds per call of `collective`, timed over `repeats` calls back to back.

    One call between two clock readings would add the launch and the synchronisation to
    it. On a GPU, CUDA events on the stream time the calls; on the CPU, gloo's calls are
    done when they return, so the clock does.
    """
    dist.barrier()  # start together: a rank's wait for a late one is not timed
    if device.type == "cuda":
        start, end = (torch.cuda.Event(enable_timing=True) for _ in range(2))
        start.record()
        for _ in range(repeats):
            collective()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / 1e3 / repeats  # elapsed_time is in ms
    t0 = time.perf_counter()
    for _ in range(repeats):
        collective()
    return (time.perf_counter() - t0) / repeats


def main(argv: list[str] | None = None) -> None:
    """Train, time and write OUT/rank<R>.json; see the module docstring."""
    args = parse_args(argv)
    check_args(args, int(os.environ.get("WORLD_SIZE", "1")))
    if "RANK" not in os.environ:
        sys.exit("launch this script with torchrun (python -m torch.distributed.run "
                 "...), which sets RANK, LOCAL_RANK and WORLD_SIZE")
    local_world = int(os.environ.get("LOCAL_WORLD_SIZE", "1"))
    threads = args.threads or max(1, (os.cpu_count() or 1) // local_world)
    torch.set_num_threads(threads)  # the ranks on one machine share its cores
    rank, local_rank, world_size, device = setup(args.device, args.first_gpu, args.timeout)
    dtype = getattr(torch, args.dtype)

    # Every rank keeps the whole (small) data set on its device, as notebook 10 advises.
    X, y = (t.to(dtype) for t in peaks_grid(args.grid, device=device))
    torch.manual_seed(args.seed)  # same start on every rank (DDP also copies rank 0's)
    model = make_model(args.hidden).to(device, dtype)
    dist_model = wrap(model, args.strategy, device)  # DDP or FSDP: the same loop below
    opt = torch.optim.Adam(dist_model.parameters(), lr=args.lr)
    loss_fn = nn.MSELoss()  # a mean over the local batch; DDP then averages over ranks

    # The sampler shuffles all indices with the same seed on every rank, then deals
    # them out: rank r gets every WORLD_SIZE-th index from r on. Disjoint shares that
    # together cover the data.
    sampler = DistributedSampler(range(len(X)), num_replicas=world_size, rank=rank,
                                 shuffle=True, seed=args.seed, drop_last=True)
    local_batch = args.batch_size // world_size
    steps = len(sampler) // local_batch  # an incomplete last batch is dropped
    # (For data too big for the device, DataLoader(dataset, local_batch,
    # sampler=sampler) does the same; indexing tensors already on the device is faster.)

    losses, epoch_times, first_batch = [], [], []
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)  # a new shuffle each epoch, the same on every rank
        order = torch.tensor(list(sampler), device=device)
        start = wait(device)
        for i in range(0, steps * local_batch, local_batch):
            idx = order[i : i + local_batch]
            if not first_batch:
                first_batch = idx.tolist()
            loss = loss_fn(dist_model(X[idx]), y[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()  # DDP all-reduces (averages) the gradients during backward
            opt.step()  # the same averaged gradient on every rank: the same step
            losses.append(loss.detach())  # stays on the device: no sync per step
        epoch_times.append(wait(device) - start)

    # What this rank holds (the last step's gradients are still there): full tensors
    # with DDP, this rank's shards with FSDP. Adam's state: two moments per parameter
    # tensor, and a one-element step count.
    weights = list(model.parameters())
    state = [v for s in opt.state.values() for v in s.values() if torch.is_tensor(v)]
    held = {"param_bytes": local_bytes(weights),
            "grad_bytes": local_bytes([p.grad for p in weights]),
            "opt_state_bytes": local_bytes(state)}
    # The full parameters, to compare runs (with FSDP, full_tensor() all-gathers them).
    full = [p.full_tensor() if hasattr(p, "full_tensor") else p for p in weights]
    params = torch.cat([p.detach().reshape(-1) for p in full]).tolist()

    # What does the gradient exchange cost? Time forward + backward on one batch with
    # the all-reduce and under no_sync() (no communication), and an all-reduce of a
    # buffer the size of all gradients alone, per call of --repeats back to back (FSDP:
    # the step, and an all-gather and a reduce-scatter of that size). Every rank must run
    # the same collectives, so the counts are fixed: an adaptive timer could stop one
    # rank early and leave the others waiting forever.
    xb, yb = X[order[:local_batch]], y[order[:local_batch]]

    def fwd_bwd() -> None:
        dist_model.zero_grad(set_to_none=True)
        loss_fn(dist_model(xb), yb).backward()

    def fwd_bwd_no_sync() -> None:
        with dist_model.no_sync():  # gradients stay local: no communication
            fwd_bwd()

    grads = torch.zeros(len(params), device=device, dtype=dtype)
    piece = torch.zeros(-(-len(params) // world_size), device=device, dtype=dtype)
    pieces = torch.zeros(len(piece) * world_size, device=device, dtype=dtype)
    all_gather = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor
    reduce_scatter = (getattr(dist, "reduce_scatter_single", None)  # newer names first
                      or dist.reduce_scatter_tensor)
    tiny = torch.zeros(1, device=device, dtype=dtype)  # one number: a call's fixed cost
    steps_timed = {"step_sync": fwd_bwd, "step_no_sync": fwd_bwd_no_sync}
    collectives = {"allreduce": lambda: dist.all_reduce(grads)}
    if args.strategy == "fsdp":  # its step all-gathers parameters, reduce-scatters
        steps_timed = {"step_sync": fwd_bwd}
        collectives = {"allgather": lambda: all_gather(pieces, piece),
                       "reduce_scatter": lambda: reduce_scatter(piece, pieces)}
    collectives["allreduce_tiny"] = lambda: dist.all_reduce(tiny)  # the latency
    times: dict[str, list[float]] = {name: [] for name in [*steps_timed, *collectives]}
    dist.barrier()  # start the measurements together
    for k in range(3 + args.timing_steps):  # 3 warm-up rounds, not kept
        for name, step in steps_timed.items():  # interleaved: the same conditions
            t0 = wait(device)
            step()
            t = wait(device) - t0
            if k >= 3:
                times[name].append(t)
        for name, collective in collectives.items():
            t = per_call(collective, args.repeats, device)
            if k >= 3:
                times[name].append(t)

    record = {
        "rank": rank, "local_rank": local_rank, "world_size": world_size,
        "strategy": args.strategy, "n_params": len(params), **held,
        "backend": dist.get_backend(), "device": str(device), "threads": threads,
        "host": socket.gethostname(),
        "args": {k: str(v) for k, v in vars(args).items()},
        "n_samples": len(X), "samples_per_rank": len(sampler),
        "local_batch": local_batch,
        "steps_per_epoch": steps, "first_batch": first_batch,
        "losses": torch.stack(losses).tolist(), "epoch_times": epoch_times,
        "params": params,
        **{f"{name}_times": values for name, values in times.items()},
        **{f"{name}_median": statistics.median(v) for name, v in times.items()},
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"rank{rank}.json").write_text(json.dumps(record))
    dist.destroy_process_group()
    # End the process here, before Python frees the model. DDP and FSDP still hold the
    # process group; freeing it joins gloo's worker threads, and one of them may be
    # waiting for the interpreter lock to free a tensor: a hang, or an abort at exit
    # ("terminate called without an active exception"). Rare, seen with torch 2.13 on
    # the CPU. Everything this rank had to say is written, so nothing is lost.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()

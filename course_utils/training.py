"""Training plumbing for the training-loop notebook: the peaks network, loops, step timing.

Recorded results live in course_utils/data/results/<device-slug>.json (layout in course_utils/data/README.md: top-level
"device", "date" and "torch", one key per notebook). Notebook 03 keeps its time-per-epoch
curves under SWEEP_KEY in course_utils.sweeps' layout, and its other figures (seconds per
epoch or step, by name) under RECORD_KEY with `save_training_record`/`load_training_records`.
"""

from __future__ import annotations

import contextlib
import copy
import os
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import torch
from torch import nn

from course_utils.devices import synchronize
from course_utils.results import read_entries, write_entry
from course_utils.timing import Timing, benchmark

# The lab's network: 2 inputs (x, y), hidden layers of 20 and 5 units, 1 output.
PEAKS_WIDTHS = (2, 20, 5, 1)
RECORD_KEY = "training"
SWEEP_KEY = "training_epochs"

Step = Callable[[], torch.Tensor]


def peaks_mlp(widths: Sequence[int] = PEAKS_WIDTHS) -> nn.Sequential:
    """Linear layers of the given widths with a ReLU between each pair (default 2->20->5->1)."""
    widths = tuple(widths)
    if len(widths) < 2 or any(isinstance(w, bool) or not isinstance(w, int) or w < 1
                              for w in widths):
        raise ValueError(f"widths must be at least two integers >= 1, got {widths!r}.")
    layers: list[nn.Module] = []
    for i, (n_in, n_out) in enumerate(zip(widths, widths[1:])):
        if i > 0:
            layers.append(nn.ReLU())
        layers.append(nn.Linear(n_in, n_out))
    return nn.Sequential(*layers)


def same_weights(a: nn.Module, b: nn.Module) -> bool:
    """True when two models hold the same tensors by name, bit for bit (compared on the CPU)."""
    sa, sb = a.state_dict(), b.state_dict()
    if sa.keys() != sb.keys():
        return False
    return all(sa[k].shape == sb[k].shape and torch.equal(sa[k].cpu(), sb[k].cpu()) for k in sa)


def _device_of(model: nn.Module) -> torch.device:
    """The device of a model's first parameter (the CPU for a model without parameters)."""
    return next((p.device for p in model.parameters()), torch.device("cpu"))


def _check_data(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> None:
    """Raise a clear error when the model and the data are not on one device or do not pair up."""
    if x.device != y.device or _device_of(model) != x.device:
        raise ValueError(f"model, x and y must be on one device; got model on {_device_of(model)}, "
                         f"x on {x.device}, y on {y.device}. Move all three with .to(device).")
    if x.shape[0] != y.shape[0]:
        raise ValueError(f"x and y need the same number of rows, got {x.shape[0]} and {y.shape[0]}.")


def make_step(model: nn.Module, x: torch.Tensor, y: torch.Tensor,
              opt: torch.optim.Optimizer, loss_fn: Callable[..., torch.Tensor] | None = None,
              ) -> Step:
    """Return a function doing one full-batch step; it returns the loss without waiting for it."""
    _check_data(model, x, y)
    loss_fn = loss_fn if loss_fn is not None else nn.MSELoss()

    def step() -> torch.Tensor:
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss.detach()

    return step


def train_full_batch(model: nn.Module, x: torch.Tensor, y: torch.Tensor, n_epochs: int, *,
                     lr: float = 0.08, progress: bool = False, desc: str = "") -> torch.Tensor:
    """Train `model` in place (Adam, MSE, whole batch); return the per-epoch losses on the CPU.

    The losses stay on the device during training and are copied to the host once at the end,
    so the loop never waits for the device.
    """
    if isinstance(n_epochs, bool) or not isinstance(n_epochs, int) or n_epochs < 1:
        raise ValueError(f"n_epochs must be an integer >= 1, got {n_epochs!r}.")
    step = make_step(model, x, y, torch.optim.Adam(model.parameters(), lr=lr))
    losses = torch.empty(n_epochs, device=x.device)
    epochs: Any = range(n_epochs)
    if progress:
        from tqdm.auto import tqdm  # imported here: only runs with a bar need it

        epochs = tqdm(epochs, desc=desc or str(x.device), unit="epoch")
    for epoch in epochs:
        losses[epoch] = step()
    return losses.cpu()


def timed_call(fn: Callable[[], Any], device: str | torch.device) -> tuple[Any, float]:
    """Run fn() between two waits for `device`; return its result and the wall time in seconds."""
    synchronize(device)
    start = time.perf_counter()
    result = fn()
    synchronize(device)
    return result, time.perf_counter() - start


def time_per_epoch(model: nn.Module, x: torch.Tensor, y: torch.Tensor, *, lr: float = 0.08,
                   optimizer_options: dict[str, Any] | None = None, min_run_time: float = 0.2,
                   warmup: int = 3, label: str = "") -> Timing:
    """Time one full-batch Adam step of a copy of `model` moved to x's device (model untouched)."""
    work = copy.deepcopy(model).to(x.device)
    opt = torch.optim.Adam(work.parameters(), lr=lr, **(optimizer_options or {}))
    step = make_step(work, x, y, opt)
    return benchmark(step, device=x.device, warmup=warmup, min_run_time=min_run_time, label=label)


@dataclass(frozen=True)
class StepProfile:
    """What the profiler saw in one call: operator calls and, on CUDA, the kernels the GPU ran."""

    aten_calls: int
    top_level_calls: int
    device_kernels: int | None
    top_ops: tuple[tuple[str, int], ...]


def _is_nested(event: Any) -> bool:
    """True when an aten operator event was called from inside another aten operator."""
    parent = event.cpu_parent
    while parent is not None:
        if parent.name.startswith("aten::"):
            return True
        parent = parent.cpu_parent
    return False


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """Send file descriptor 2 to /dev/null for a while (the profiler's C++ start/stop lines)."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w", encoding="utf-8") as devnull:
            os.dup2(devnull.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def profile_step(fn: Callable[[], Any], device: str | torch.device, top: int = 6) -> StepProfile:
    """Profile one call of fn() (after one warm-up call) and count its operators and kernels.

    aten_calls counts every operator call, nested ones included; top_level_calls only those
    made from Python or autograd (each one a trip through PyTorch's dispatcher). device_kernels
    (CUDA only, else None) counts the kernels the profiler saw running on the GPU.
    """
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    dev = torch.device(device)
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if dev.type == "cuda" else [])
    fn()
    synchronize(dev)
    with _quiet_stderr(), profile(activities=activities) as prof:
        fn()
        synchronize(dev)
    events = list(prof.events())
    aten = [e for e in events if e.device_type == DeviceType.CPU and e.name.startswith("aten::")]
    top_level = [e for e in aten if not _is_nested(e)]
    kernels = None
    if dev.type == "cuda":
        # The GPU timeline also mirrors record_function ranges (Optimizer.step#Adam.step) as
        # CUDA-typed user-annotation events: they are not kernels, so leave them out.
        ranges = {e.name for e in events if e.is_user_annotation}
        kernels = sum(1 for e in events if e.device_type == DeviceType.CUDA
                      and not e.is_user_annotation and e.name not in ranges
                      and not e.name.startswith(("Memcpy", "Memset")))
    counts = Counter(e.name for e in top_level).most_common(top)
    return StepProfile(len(aten), len(top_level), kernels, tuple(counts))


def launch_floor(device: str | torch.device, min_run_time: float = 0.2) -> Timing:
    """Time the smallest useful operation on `device`: adding 1 in place to a one-element tensor."""
    dev = torch.device(device)
    t = torch.zeros(1, device=dev)
    return benchmark(t.add_, 1.0, device=dev, min_run_time=min_run_time, label="x.add_(1)")


def cuda_graph_step(model: nn.Module, x: torch.Tensor, y: torch.Tensor, *, lr: float = 0.08,
                    warmup_steps: int = 3) -> tuple[Callable[[], None], torch.Tensor]:
    """Capture one whole training step of `model` (on CUDA) in a CUDA graph.

    Returns (replay, loss): each replay() runs a full step with one launch and writes its loss
    into the static tensor `loss`. x and y are captured by address: copy new data into them.
    The optimizer is Adam with capturable=True, the form that may be captured.
    """
    if x.device.type != "cuda":
        raise RuntimeError(f"CUDA graphs need a CUDA device; the data is on {x.device}.")
    _check_data(model, x, y)
    opt = torch.optim.Adam(model.parameters(), lr=lr, capturable=True)
    loss_fn = nn.MSELoss()
    with torch.cuda.device(x.device):
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):  # warm up on the stream the capture will use
            for _ in range(warmup_steps):
                opt.zero_grad(set_to_none=True)
                loss_fn(model(x), y).backward()
                opt.step()
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        opt.zero_grad(set_to_none=True)  # gradients are then allocated inside the graph
        with torch.cuda.graph(graph, stream=stream):
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()

    # The graph reads and writes the model's, the optimizer's and the data's memory by address
    # but holds no reference to them: the default argument keeps them alive as long as replay.
    def replay(_keep_alive: tuple[Any, ...] = (model, opt, x, y)) -> None:
        """Run the captured step once."""
        graph.replay()

    return replay, loss.detach()


def _json_ready(value: Any) -> Any:
    """Turn tensors, tuples and Timings into plain lists, numbers and dicts for json.dumps."""
    if isinstance(value, Timing):
        return {"median": value.median, "iqr": value.iqr, "device": value.device,
                "num_threads": value.num_threads}
    if isinstance(value, torch.Tensor):
        return value.tolist()
    if isinstance(value, dict):
        return {str(k): _json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_ready(v) for v in value]
    return value


def save_training_record(path: str | Path, record: dict[str, Any], *, device_name: str) -> Path:
    """Write `record` under the key "training" of the results file at `path`, keeping its other keys."""
    if not isinstance(record, dict) or not record:
        raise ValueError("record must be a non-empty dict of measurements.")
    return write_entry(path, RECORD_KEY, _json_ready(record), device_name=device_name)


def load_training_records(folder: str | Path) -> list[dict[str, Any]]:
    """Read the "training" entry of every *.json file in `folder` (none, or no folder: [])."""
    return [{"path": str(e.path), "device": e.device, "date": e.date, "torch": e.torch, **e.value}
            for e in read_entries(folder, RECORD_KEY) if isinstance(e.value, dict)]

"""Recording and reading torch.profiler traces: the calls a step made, the part of the step
each ran in, the kernels a GPU ran, quietly; and a trace drawn as a timeline."""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Callable, Iterable
from typing import Any

import torch
from torch.autograd import DeviceType
from torch.profiler import ProfilerActivity

from course_utils.devices import pick_device, synchronize


def quiet_profiler() -> None:
    """Keep the profiler's own log lines and its one-cycle warning out of cell outputs."""
    os.environ.setdefault("KINETO_LOG_LEVEL", "6")  # read when the profiler first starts
    warnings.filterwarnings("ignore", message="Warning: Profiler clears events")


def profiler_activities(device: str | torch.device | None = None) -> list[ProfilerActivity]:
    """The CPU's operators, plus the GPU's kernels on a CUDA device whose build has CUPTI."""
    activities = [ProfilerActivity.CPU]
    dev = pick_device(device)
    if dev.type == "cuda" and ProfilerActivity.CUDA in torch.profiler.supported_activities():
        activities.append(ProfilerActivity.CUDA)
    return activities


def _events(trace: Any) -> list:
    return list(trace.events() if hasattr(trace, "events") else trace)


def ancestors(event: Any) -> list[str]:
    """Names of the ranges and operators `event` ran inside, innermost first."""
    names, parent = [], event.cpu_parent
    while parent is not None:
        names.append(parent.name)
        parent = parent.cpu_parent
    return names


def top_level_ops(trace: Any) -> list:
    """The host's `aten::` operators not called from inside another: one per call the code
    made (a `record_function` range around them does not count as an operator)."""
    return [e for e in _events(trace)
            if e.device_type == DeviceType.CPU and e.name.startswith("aten::")
            and not any(name.startswith("aten::") for name in ancestors(e))]


def gpu_kernels(trace: Any, copies: bool = True) -> list:
    """What the GPU ran: its kernels and, if `copies`, its memory copies and fills; never the
    GPU's mirrors of `record_function` ranges (the profiler adds those as user annotations)."""
    events = _events(trace)
    ranges = {e.name for e in events if e.is_user_annotation}
    return [e for e in events if e.device_type == DeviceType.CUDA
            and not e.is_user_annotation and e.name not in ranges
            and (copies or not e.name.startswith(("Memcpy", "Memset")))]


def busy_seconds(events: Iterable[Any]) -> float:
    """The summed lengths of `events`, in seconds (overlaps counted twice)."""
    return sum(e.time_range.elapsed_us() for e in events) / 1e6


DATA_RANGE = "enumerate(DataLoader)"  # the profiler's name for a DataLoader fetching a batch
PHASE_COLOURS = {"step": "lightgrey", "data": "tab:orange", "forward": "tab:blue",
                 "backward": "tab:green", "optimizer": "tab:purple", "GPU kernels": "tab:red"}


def phase(event: Any) -> str:
    """The part of a training step `event` ran in, read from the ranges around it: "data"
    inside a DataLoader fetch, "backward" inside the autograd engine, "optimizer" inside
    `Optimizer.step` or `zero_grad`, else "forward"."""
    names = ancestors(event)
    for prefix, part in ((DATA_RANGE, "data"), ("autograd::engine", "backward"),
                         ("Optimizer.", "optimizer")):
        if any(n.startswith(prefix) for n in names):
            return part
    return "forward"


def profile_calls(fn: Callable[[], Any], device: str | torch.device | None = None,
                  tries: int = 3) -> tuple[torch.profiler.profile, float]:
    """Profile `fn()` as a measurement: one warm-up call, then `tries` recorded calls, each
    synchronised on `device` before and after, with the profiler's CPU (and on CUDA, kernel)
    activities. Returns the fastest try's trace and its wall time in seconds: the one other
    programs disturbed least."""
    if tries < 1:
        raise ValueError(f"tries must be at least 1, got {tries}")
    dev = pick_device(device)
    activities = profiler_activities(dev)
    fn()  # warm-up: the first call allocates memory and picks kernels
    traces = []
    for _ in range(tries):
        synchronize(dev)
        with torch.profiler.profile(activities=activities) as prof:
            synchronize(dev)  # the profiler's start-up can land here
            start = time.perf_counter()
            fn()
            synchronize(dev)  # work still queued on the device is part of the call
            traces.append((prof, time.perf_counter() - start))
    return min(traces, key=lambda trace: trace[1])


def draw_timeline(trace: Any, title: str) -> None:
    """Draw a trace as rows of bars against time: the outermost `record_function` ranges
    (grey, a DataLoader's fetches orange), the host's top-level operators coloured by
    `phase`, and one row per CUDA stream of the GPU's kernels (red); white is idle."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    events = _events(trace)
    ranges = [e for e in events if e.device_type == DeviceType.CPU
              and e.cpu_parent is None and e.is_user_annotation]
    rows = {"ranges": [(e, "data" if DATA_RANGE in e.name else "step") for e in ranges],
            "operators": [(e, phase(e)) for e in top_level_ops(events)]}
    kernels = gpu_kernels(events)
    for e in kernels:
        rows.setdefault(f"GPU stream {e.device_resource_id}", []).append((e, "GPU kernels"))
    starts = [e.time_range.start for bars in rows.values() for e, _ in bars]
    t0 = min(starts, default=0)  # the first bar at 0 ms
    _, ax = plt.subplots(figsize=(9, 2.4), layout="constrained")
    for i, bars in enumerate(rows.values()):
        ax.broken_barh([((e.time_range.start - t0) / 1e3, e.time_range.elapsed_us() / 1e3)
                        for e, _ in bars], (i - 0.35, 0.7),
                       color=[PHASE_COLOURS[part] for _, part in bars], ec="face", lw=0.5)
    ax.set(yticks=range(len(rows)), yticklabels=list(rows), xlabel="time (ms)",
           title=title, ylim=(len(rows) - 0.5, -0.5))
    shown = [k for k in PHASE_COLOURS if k != "GPU kernels" or kernels]
    ax.legend(handles=[Patch(color=PHASE_COLOURS[k], label=k) for k in shown], fontsize=7,
              loc="upper left", bbox_to_anchor=(1.01, 1))
    plt.show()

"""Reading torch.profiler traces: the calls a step made, the kernels a GPU ran, quietly."""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable
from typing import Any

import torch
from torch.autograd import DeviceType
from torch.profiler import ProfilerActivity

from course_utils.devices import pick_device


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

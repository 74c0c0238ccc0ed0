"""Timing code on any device with torch.utils.benchmark, synchronising the device."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

import torch
import torch.utils.benchmark as torch_benchmark

from course_utils.devices import pick_device, synchronize


def format_seconds(t: float) -> str:
    """Write a duration in seconds with a readable unit: '12.3 ms', '4.56 µs', '1.23 s'."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if abs(t) >= scale:
            return f"{t / scale:.3g} {unit}"
    return f"{t / 1e-9:.3g} ns"


@dataclass(frozen=True)
class Timing:
    """The result of benchmark(): median and interquartile range in seconds, with context."""

    median: float
    iqr: float
    runs: int
    device: str
    num_threads: int
    times: tuple[float, ...] = field(repr=False)
    label: str = ""

    @property
    def mean(self) -> float:
        """Mean of the per-run times, in seconds."""
        return sum(self.times) / len(self.times)

    def __str__(self) -> str:
        threads = f"{self.num_threads} thread{'s' if self.num_threads != 1 else ''}"
        head = f"{self.label}: " if self.label else ""
        return (
            f"{head}{format_seconds(self.median)} ± {format_seconds(self.iqr)} "
            f"({self.device}, {threads}, {self.runs} runs)"
        )


def _find_device(args: tuple[Any, ...], kwargs: dict[str, Any]) -> torch.device | None:
    """Return the device of the first tensor among the arguments, if any."""
    for value in (*args, *kwargs.values()):
        if isinstance(value, torch.Tensor):
            return value.device
    return None


def benchmark(
    fn: Callable[..., Any],
    *args: Any,
    device: str | torch.device | None = None,
    warmup: int = 3,
    min_run_time: float = 0.2,
    num_threads: int | None = None,
    label: str = "",
    **kwargs: Any,
) -> Timing:
    """Time fn(*args, **kwargs): warm up, then torch.utils.benchmark with the device synchronised.

    `device` is the device whose queue must be waited on; by default the device of the first
    tensor argument, else the best available one. CPU work uses torch.get_num_threads() threads
    unless `num_threads` says otherwise (torch.utils.benchmark alone would use one).
    """
    if not callable(fn):
        raise TypeError(f"benchmark needs a callable, got {type(fn).__name__}.")
    if warmup < 0 or min_run_time <= 0:
        raise ValueError(f"need warmup >= 0 and min_run_time > 0, got {warmup} and {min_run_time}.")
    dev = pick_device(device) if device is not None else (_find_device(args, kwargs) or pick_device())
    threads = torch.get_num_threads() if num_threads is None else int(num_threads)
    if threads < 1:
        raise ValueError(f"num_threads must be at least 1, got {threads}.")

    def timer() -> float:
        # The Timer reads the clock before and after each block: wait for the device first.
        synchronize(dev)
        return time.perf_counter()

    saved_threads = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        for _ in range(warmup):
            fn(*args, **kwargs)
        synchronize(dev)
    finally:
        torch.set_num_threads(saved_threads)
    timer_obj = torch_benchmark.Timer(
        stmt="fn(*args, **kwargs)",
        globals={"fn": fn, "args": args, "kwargs": kwargs},
        num_threads=threads,
        timer=timer,
        label=label or getattr(fn, "__name__", "fn"),
    )
    m = timer_obj.blocked_autorange(min_run_time=min_run_time)
    return Timing(
        median=float(m.median),
        iqr=float(m.iqr),
        runs=len(m.times) * int(m.number_per_run),
        device=str(dev),
        num_threads=threads,
        times=tuple(float(t) for t in m.times),
        label=label,
    )

"""Timing code on any device: a fixed number of synchronised blocks, and a verdict on the noise."""

from __future__ import annotations

import math
import time
import timeit
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

import psutil
import torch
from torch.utils.benchmark import Measurement
from torch.utils.benchmark.utils.common import TaskSpec

from course_utils.devices import pick_device, synchronize

# A spread (interquartile range) at or above this share of the median is noise, not the code:
# the level at which torch.utils.benchmark warns of "significant environmental influence".
NOISY_SPREAD = 0.25
# Fewer blocks than this give no usable spread.
MIN_BLOCKS = 5
# Other programs using at least this many CPU cores while we time count as load.
LOAD_CORES = 0.5
# The clock read around each block (a module attribute, so tests can simulate one).
_clock = time.perf_counter


def format_seconds(t: float) -> str:
    """Write a duration in seconds with a readable unit: '12.3 ms', '4.56 µs', '1.23 s'."""
    t = float(f"{t:.3g}")  # rounded first, so 999.96 µs reads '1 ms', not '1e+03 µs'
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if abs(t) >= scale:
            return f"{t / scale:.3g} {unit}"
    return f"{t / 1e-9:.3g} ns"


def format_rate(per_second: float, unit: str = "FLOP") -> str:
    """Write a throughput with a decimal prefix: '12.3 TFLOP/s' (unit "FLOP"), '45.6 GB/s' ("B")."""
    if unit not in ("FLOP", "B"):
        raise ValueError(f"unit must be 'FLOP' or 'B', got {unit!r}.")
    per_second = float(f"{per_second:.3g}")  # rounded first, as in format_seconds
    for scale, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(per_second) >= scale:
            return f"{per_second / scale:.3g} {prefix}{unit}/s"
    return f"{per_second:.3g} {unit}/s"


@dataclass(frozen=True)
class Timing:
    """The result of benchmark(): median and interquartile range in seconds, with context.

    `times` holds the seconds per call of each block. `other_load` is how many CPU cores other
    programs kept busy while the blocks ran, and `cpu_cores` how many the machine has (None
    where unknown). `measurement` is torch.utils.benchmark's own record of the blocks (printing
    it gives torch's summary), where benchmark() made this timing.
    """

    median: float
    iqr: float
    runs: int
    device: str
    num_threads: int
    times: tuple[float, ...] = field(repr=False)
    label: str = ""
    other_load: float | None = None
    cpu_cores: int | None = None
    measurement: Measurement | None = field(default=None, repr=False, compare=False,
                                            metadata={"saved": False})  # not in results files

    @property
    def blocks(self) -> int:
        """How many timed blocks the median and spread come from."""
        return len(self.times)

    @property
    def spread(self) -> float:
        """The interquartile range as a share of the median (0.1 means 10%)."""
        return self.iqr / self.median if self.median > 0 else math.inf

    @property
    def noise(self) -> tuple[str, ...]:
        """The reasons not to trust this timing; empty when it looks reliable."""
        reasons = []
        if self.blocks < MIN_BLOCKS:
            reasons.append(f"only {self.blocks} timed block{'s' if self.blocks != 1 else ''}")
        if self.spread >= NOISY_SPREAD:
            reasons.append(f"spread {self.spread:.0%} of the median")
        if _disturbing(self.other_load, self.num_threads, self.cpu_cores):
            reasons.append(f"other programs kept {self.other_load:.1f} of {self.cpu_cores} "
                           "CPU cores busy")
        return tuple(reasons)

    @property
    def noisy(self) -> bool:
        """True when the timing should not be trusted (see `noise` for why)."""
        return bool(self.noise)

    def short(self) -> str:
        """'12.3 ms ± 400 µs', with ' (noisy)' appended when the timing is noisy."""
        text = f"{format_seconds(self.median)} ± {format_seconds(self.iqr)}"
        return text + (" (noisy)" if self.noisy else "")

    def __str__(self) -> str:
        threads = f"{self.num_threads} thread{'s' if self.num_threads != 1 else ''}"
        head = f"{self.label}: " if self.label else ""
        text = (f"{head}{format_seconds(self.median)} ± {format_seconds(self.iqr)} "
                f"({self.device}, {threads}, {self.runs} runs)")
        if self.noisy:
            text += f" noisy: {'; '.join(self.noise)}; re-run on an idle machine"
        return text


def noise_summary(timings: Iterable[Timing]) -> str:
    """One line saying whether `timings` can be trusted: how many are noisy, and why."""
    timings = list(timings)
    noisy = [t for t in timings if t.noisy]
    if not noisy:
        return (f"none of the {len(timings)} timings flagged noisy (each one's spread under "
                f"{NOISY_SPREAD:.0%} of its median, no other program competing for the CPU)")
    # The kinds of reason, each once: every spread's own figure is in its timing's line.
    reasons = sorted({f"a spread of {NOISY_SPREAD:.0%} or more" if r.startswith("spread")
                      else r.split(" kept ")[0] for t in noisy for r in t.noise})
    return (f"noisy: {len(noisy)} of {len(timings)} timings ({', '.join(reasons)}); "
            "re-run on an idle machine before trusting them")


def _wait_for_accelerator() -> None:
    """Wait for the current accelerator's queue, if this process has started using it."""
    if not torch.accelerator.is_available():
        return
    acc = torch.accelerator.current_accelerator()
    if acc is not None and acc.type == "cuda" and not torch.cuda.is_initialized():
        return  # CUDA not started here: nothing queued (and no context to create for it)
    synchronize(None)


def _disturbing(other_load: float | None, threads: int, cpu_cores: int | None) -> bool:
    """Whether other programs' load (cores kept busy) disturbs work on `threads` threads: at
    least LOAD_CORES of it, and more than the cores the work leaves free."""
    return (other_load is not None and cpu_cores is not None and other_load >= LOAD_CORES
            and other_load + threads > cpu_cores)


class OtherLoad:
    """How many CPU cores other programs kept busy during a `with` block (`benchmark` reads it
    around its timed blocks): `with OtherLoad() as load: ...`, then `load.cores`.
    For work that is not a `benchmark` timing, such as a profiler trace: `load.disturbs(n)`
    says whether that load would flag a timing on n threads noisy."""

    def __init__(self) -> None:
        self.cores: float | None = None  # known once the block has ended
        self.cpu_cores = psutil.cpu_count()

    def __enter__(self) -> "OtherLoad":
        self._machine, self._own = _busy_seconds()
        self._start = _clock()
        return self

    def __exit__(self, *exc: object) -> None:
        machine, own = _busy_seconds()
        wall = _clock() - self._start
        self.cores = max(0.0, (machine - self._machine) - (own - self._own)) / max(wall, 1e-9)

    def disturbs(self, threads: int) -> bool:
        """True when the block's other load would make a timing on `threads` threads noisy."""
        return _disturbing(self.cores, threads, self.cpu_cores)


def _busy_seconds() -> tuple[float, float]:
    """CPU seconds spent so far by the whole machine (all cores) and by this process."""
    machine = psutil.cpu_times()
    busy = sum(machine) - machine.idle - getattr(machine, "iowait", 0.0)
    own = psutil.Process().cpu_times()
    return busy, own.user + own.system


def benchmark(fn: Callable[..., Any], *args: Any, device: str | torch.device | None = None,
              warmup: int = 3, min_run_time: float = 0.2, blocks: int = 10,
              num_threads: int | None = None, label: str = "", **kwargs: Any) -> Timing:
    """Time fn(*args, **kwargs): warm up, then `blocks` blocks of calls between synchronisations.

    Each block repeats the call enough times to last about min_run_time / blocks seconds, so
    the whole measurement takes about `min_run_time` (at least MIN_BLOCKS calls of a slow
    function). `device` is the device whose queue must be waited on; by default the device of
    the first tensor argument, else the best available one. Timing a CPU device also waits for
    the current accelerator, in case `fn` launches work there. CPU work uses
    torch.get_num_threads() threads unless `num_threads` says otherwise. The statistics come
    from torch.utils.benchmark's Measurement; the result also records the load that other
    programs put on the CPU meanwhile, so that it can say when it is too noisy to trust.
    """
    if not callable(fn):
        raise TypeError(f"benchmark needs a callable, got {type(fn).__name__}.")
    if warmup < 0 or not min_run_time > 0:
        raise ValueError(f"need warmup >= 0 and min_run_time > 0, got {warmup} and {min_run_time}.")
    if isinstance(blocks, bool) or not isinstance(blocks, int) or blocks < 1:
        raise ValueError(f"blocks must be an integer >= 1, got {blocks!r}.")
    # By default, the device of the first tensor argument, else the best one here.
    found = (v.device for v in (*args, *kwargs.values()) if isinstance(v, torch.Tensor))
    dev = pick_device(device if device is not None else next(found, None))
    threads = torch.get_num_threads() if num_threads is None else int(num_threads)
    if threads < 1:
        raise ValueError(f"num_threads must be at least 1, got {threads}.")

    def clock() -> float:
        # Read before and after each block: wait for the device's queue to drain first, and
        # for the current accelerator's too, which a function given CPU tensors may still use.
        synchronize(dev)
        if dev.type in ("cpu", "meta"):
            _wait_for_accelerator()
        return _clock()

    timer = timeit.Timer(stmt="fn(*args, **kwargs)", timer=clock,
                         globals={"fn": fn, "args": args, "kwargs": kwargs})
    saved_threads = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        for _ in range(warmup):
            fn(*args, **kwargs)
        clock()
        # Seconds per call: time 1, 10, 100, ... calls until a batch lasts a tenth of a block.
        block_time = min_run_time / blocks
        number = 1
        while True:
            batch = timer.timeit(number)
            per_call = max(batch / number, 1e-12)
            if per_call * number >= block_time / 10 or number >= 10**8:
                break
            number *= 10
        # A call slowed by a preemption can make per_call far too large, the blocks far too
        # short: when they last under half of min_run_time, size them again from their median.
        for attempt in range(3):
            n_blocks = min(blocks, max(MIN_BLOCKS, math.floor(min_run_time / per_call)))
            block_number = max(1, round(min_run_time / n_blocks / per_call))
            # A slow function: its one calibration call was already a whole block; keep it.
            kept = [batch] if attempt == 0 and number == block_number == 1 else []
            with OtherLoad() as load:  # what other programs ran while the blocks did
                start = _clock()
                raw = kept + [timer.timeit(block_number) for _ in range(n_blocks - len(kept))]
                wall = _clock() - start
            if wall >= min_run_time / 2:
                break
            per_call = max(sorted(raw)[len(raw) // 2] / block_number, 1e-12)
    finally:
        torch.set_num_threads(saved_threads)
    spec = TaskSpec(stmt="fn(*args, **kwargs)", setup="pass",
                    label=label or getattr(fn, "__name__", "fn"), num_threads=threads)
    m = Measurement(number_per_run=block_number, raw_times=raw, task_spec=spec)
    return Timing(median=float(m.median), iqr=float(m.iqr), runs=n_blocks * block_number,
                  device=str(dev), num_threads=threads, times=tuple(float(t) for t in m.times),
                  label=label, other_load=load.cores, cpu_cores=load.cpu_cores, measurement=m)

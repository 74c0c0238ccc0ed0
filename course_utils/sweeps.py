"""Timing one operation over a range of sizes: work counts, throughput, crossover, recorded runs."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import torch

from course_utils.results import device_slug as device_slug  # re-exported for the notebooks
from course_utils.results import read_entries, write_entry
from course_utils.timing import Timing, benchmark

# What make_case returns: the function to time and the arguments to call it with.
Case = tuple[Callable[..., Any], tuple[Any, ...]]
# Units of work per call; throughput is work per second (FLOP/s or byte/s).
UNITS = ("FLOP", "byte")
_PREFIXES = ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""))


def _positive_int(name: str, value: Any) -> int:
    """Return `value` if it is an integer >= 1, else raise ValueError naming `name`."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}.")
    return value


def _pair(name: str, value: int | Sequence[int], minimum: int = 1) -> tuple[int, int]:
    """Turn an int or a pair of ints (each >= minimum) into a pair, as torch's conv2d does."""
    pair = (value, value) if isinstance(value, int) and not isinstance(value, bool) else tuple(value)
    if len(pair) != 2 or any(isinstance(v, bool) or not isinstance(v, int) or v < minimum
                             for v in pair):
        raise ValueError(f"{name} must be an integer >= {minimum} or a pair of them, got {value!r}.")
    return pair[0], pair[1]


def matmul_flops(m: int, k: int, n: int) -> int:
    """Floating-point operations of an (m, k) @ (k, n) product: a multiply and an add per term."""
    return 2 * _positive_int("m", m) * _positive_int("k", k) * _positive_int("n", n)


def matmul_bytes(m: int, k: int, n: int, itemsize: int = 4) -> int:
    """Bytes an (m, k) @ (k, n) product must at least read and write: both inputs and the output."""
    m, k, n = (_positive_int(a, v) for a, v in (("m", m), ("k", k), ("n", n)))
    return (m * k + k * n + m * n) * _positive_int("itemsize", itemsize)


def conv2d_output_size(size: int, kernel: int, stride: int = 1, padding: int = 0,
                       dilation: int = 1) -> int:
    """Length of one spatial side of a conv2d's output (the formula in torch.nn.Conv2d's docs)."""
    out = (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1
    if out < 1:
        raise ValueError(f"a side of {size} with kernel {kernel}, padding {padding}, "
                         f"dilation {dilation} leaves no output positions.")
    return out


def conv2d_flops(batch: int, c_in: int, c_out: int, height: int, width: int,
                 kernel: int | Sequence[int], stride: int | Sequence[int] = 1,
                 padding: int | Sequence[int] = 0, dilation: int | Sequence[int] = 1,
                 groups: int = 1) -> int:
    """FLOPs of a conv2d without bias: each output value is a dot product of c_in/groups*kh*kw terms."""
    for name, value in (("batch", batch), ("c_in", c_in), ("c_out", c_out), ("height", height),
                        ("width", width), ("groups", groups)):
        _positive_int(name, value)
    if c_in % groups or c_out % groups:
        raise ValueError(f"groups={groups} must divide c_in={c_in} and c_out={c_out}.")
    kh, kw = _pair("kernel", kernel)
    sh, sw = _pair("stride", stride)
    ph, pw = _pair("padding", padding, minimum=0)
    dh, dw = _pair("dilation", dilation)
    h_out = conv2d_output_size(height, kh, sh, ph, dh)
    w_out = conv2d_output_size(width, kw, sw, pw, dw)
    return 2 * batch * c_out * h_out * w_out * (c_in // groups) * kh * kw


def elementwise_bytes(numel: int, n_inputs: int = 2, n_outputs: int = 1, itemsize: int = 4) -> int:
    """Bytes an elementwise operation reads and writes: every element of every operand once."""
    _positive_int("numel", numel)
    if isinstance(n_inputs, bool) or not isinstance(n_inputs, int) or n_inputs < 0:
        raise ValueError(f"n_inputs must be an integer >= 0, got {n_inputs!r}.")
    _positive_int("n_outputs", n_outputs)
    return numel * (n_inputs + n_outputs) * _positive_int("itemsize", itemsize)


def format_rate(per_second: float, unit: str = "FLOP") -> str:
    """Write a throughput with a decimal prefix: '12.3 GFLOP/s', '45.6 GB/s'."""
    if unit not in UNITS:
        raise ValueError(f"unit must be one of {UNITS}, got {unit!r}.")
    symbol = "FLOP/s" if unit == "FLOP" else "B/s"
    for scale, prefix in _PREFIXES:
        if abs(per_second) >= scale or scale == 1.0:
            return f"{per_second / scale:.3g} {prefix}{symbol}"
    return f"{per_second:.3g} {symbol}"  # pragma: no cover


@dataclass(frozen=True)
class SweepResult:
    """Median seconds per call of one operation at each size on one device, with the work done."""

    op: str
    device: str
    sizes: tuple[int, ...]
    seconds: tuple[float, ...]
    work: tuple[float, ...] | None = None
    unit: str = "FLOP"
    iqr: tuple[float, ...] = ()
    num_threads: int | None = None
    label: str = field(default="", compare=False)
    # The benchmark results behind `seconds` when measured now (empty when read from a file).
    timings: tuple[Timing, ...] = field(default=(), compare=False, repr=False)

    def __post_init__(self) -> None:
        """Check the lengths, the order of the sizes, the times and the unit."""
        n = len(self.sizes)
        if n == 0 or len(self.seconds) != n:
            raise ValueError(f"{self.op}: need as many seconds as sizes (at least one), got "
                             f"{len(self.seconds)} and {n}.")
        if any(b <= a for a, b in zip(self.sizes, self.sizes[1:])):
            raise ValueError(f"{self.op}: sizes must be strictly increasing, got {self.sizes}.")
        if not all(math.isfinite(t) and t > 0 for t in self.seconds):
            raise ValueError(f"{self.op}: seconds must be finite and positive, got {self.seconds}.")
        if self.work is not None and len(self.work) != n:
            raise ValueError(f"{self.op}: need one work count per size, got {len(self.work)}.")
        if self.iqr and len(self.iqr) != n:
            raise ValueError(f"{self.op}: need one iqr per size, got {len(self.iqr)}.")
        if self.unit not in UNITS:
            raise ValueError(f"{self.op}: unit must be one of {UNITS}, got {self.unit!r}.")

    def throughput(self) -> tuple[float, ...]:
        """Work per second at each size (FLOP/s or byte/s, as `unit` says)."""
        if self.work is None:
            raise ValueError(f"{self.op}: no work counts recorded, so no throughput.")
        return tuple(w / t for w, t in zip(self.work, self.seconds))

    def best(self) -> tuple[int, float]:
        """The size with the highest throughput, and that throughput."""
        rates = self.throughput()
        i = max(range(len(rates)), key=rates.__getitem__)
        return self.sizes[i], rates[i]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the layout of a sweep in course_utils/data/results/*.json)."""
        out: dict[str, Any] = {"device": self.device, "sizes": list(self.sizes),
                               "seconds": list(self.seconds), "unit": self.unit}
        if self.work is not None:
            out["work"] = list(self.work)
        if self.iqr:
            out["iqr"] = list(self.iqr)
        if self.num_threads is not None:
            out["num_threads"] = self.num_threads
        return out

    @classmethod
    def from_dict(cls, op: str, data: dict[str, Any], label: str = "") -> SweepResult:
        """Rebuild a sweep from to_dict()'s layout; only 'sizes' and 'seconds' are required."""
        missing = [k for k in ("sizes", "seconds") if k not in data]
        if missing:
            raise ValueError(f"sweep {op!r} lacks {missing}; it needs 'sizes' and 'seconds'.")
        work = data.get("work")
        return cls(op=op, device=str(data.get("device", "?")),
                   sizes=tuple(int(s) for s in data["sizes"]),
                   seconds=tuple(float(t) for t in data["seconds"]),
                   work=None if work is None else tuple(float(w) for w in work),
                   unit=str(data.get("unit", "FLOP")),
                   iqr=tuple(float(q) for q in data.get("iqr", ())),
                   num_threads=data.get("num_threads"), label=label)


def run_sweep(op: str, make_case: Callable[[int], Case], sizes: Sequence[int], *,
              device: str | torch.device, work: Callable[[int], float] | None = None,
              unit: str = "FLOP", min_run_time: float = 0.1, warmup: int = 2) -> SweepResult:
    """Time the call make_case(size) returns at every size with benchmark(), waiting on `device`."""
    if not callable(make_case):
        raise TypeError(f"make_case must be callable (size -> (fn, args)), got {type(make_case).__name__}.")
    sizes = tuple(_positive_int("size", s) for s in sizes)
    timings = []
    for size in sizes:
        fn, args = make_case(size)
        timings.append(benchmark(fn, *args, device=device, warmup=warmup,
                                 min_run_time=min_run_time, label=f"{op} {size}"))
        del fn, args  # free this size's tensors before building the next
    return SweepResult(op=op, device=str(torch.device(device)), sizes=sizes,
                       seconds=tuple(t.median for t in timings),
                       work=None if work is None else tuple(float(work(s)) for s in sizes),
                       unit=unit, iqr=tuple(t.iqr for t in timings),
                       num_threads=timings[-1].num_threads if timings else None,
                       timings=tuple(timings))


def crossover(sizes: Sequence[int], baseline: Sequence[float], candidate: Sequence[float]) -> int | None:
    """Smallest size from which `candidate` takes less time than `baseline` at every larger size too.

    None when the candidate is not faster at the largest size. Times are seconds per call at
    the same sizes, in increasing order of size.
    """
    if not (len(sizes) == len(baseline) == len(candidate)) or not sizes:
        raise ValueError(f"need equal, non-empty lengths, got {len(sizes)}, {len(baseline)}, "
                         f"{len(candidate)}.")
    if any(b <= a for a, b in zip(sizes, sizes[1:])):
        raise ValueError(f"sizes must be strictly increasing, got {list(sizes)}.")
    found = None
    for size, slow, fast in zip(reversed(sizes), reversed(baseline), reversed(candidate)):
        if fast >= slow:
            break
        found = size
    return found


@dataclass(frozen=True)
class RecordedRun:
    """Sweeps read from one course_utils/data/results/*.json file, with where, when and with what they ran."""

    path: Path
    device_name: str
    date: str
    torch_version: str
    sweeps: dict[str, SweepResult]

    @property
    def label(self) -> str:
        """A caption that says the curves were recorded, not measured now."""
        return f"recorded on {self.device_name} ({self.date}, torch {self.torch_version})"


def load_recorded_sweeps(folder: str | Path, key: str = "sweeps") -> list[RecordedRun]:
    """Read the curves under `key` of every *.json file in `folder`; files without it are skipped."""
    runs: list[RecordedRun] = []
    for entry in read_entries(folder, key):
        sweeps = {op: SweepResult.from_dict(op, value, label=entry.label)
                  for op, value in entry.value.items()}
        runs.append(RecordedRun(path=entry.path, device_name=entry.device, date=entry.date,
                                torch_version=entry.torch, sweeps=sweeps))
    return runs


def save_sweeps(path: str | Path, sweeps: Iterable[SweepResult], *, device_name: str,
                torch_version: str | None = None, date: str | None = None,
                key: str = "sweeps") -> Path:
    """Write `sweeps` under `key` of the results file at `path`, keeping its other entries."""
    stored: dict[str, Any] = {}
    if Path(path).exists():
        stored = dict(json.loads(Path(path).read_text(encoding="utf-8")).get(key) or {})
    for sweep in sweeps:
        stored[sweep.op] = sweep.to_dict()
    return write_entry(path, key, stored, device_name=device_name,
                       torch_version=torch_version, date=date)

"""Timing copies of tensors between devices over a range of sizes, and recording the results.

Recorded results live in course_utils/data/results/<device-slug>.json (layout in course_utils/data/README.md): the file
names its device, date and torch version; this module keeps its curves under the key
"transfers", one entry per route with "sizes" (bytes) and "seconds" like notebook 01's sweeps.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from course_utils.devices import pick_device, synchronize
from course_utils.results import read_entries, write_entry
from course_utils.timing import Timing, benchmark

# The bytes of every test pattern repeat with this period (a prime, so it never lines up
# with a power-of-two size and a copy that lands at the wrong offset is caught).
_PERIOD = 251
_METHODS = ("copy_", "to")


def transfer_sizes(min_bytes: int = 4 * 2**10, max_bytes: int = 256 * 2**20,
                   factor: int = 4) -> list[int]:
    """Return byte counts min_bytes, min_bytes*factor, ... up to max_bytes (inclusive)."""
    for name, value in (("min_bytes", min_bytes), ("max_bytes", max_bytes), ("factor", factor)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} must be an int, got {type(value).__name__}.")
    if min_bytes < 1 or max_bytes < min_bytes or factor < 2:
        raise ValueError(
            f"need 1 <= min_bytes <= max_bytes and factor >= 2, got min_bytes={min_bytes}, "
            f"max_bytes={max_bytes}, factor={factor}."
        )
    sizes = [min_bytes]
    while sizes[-1] * factor <= max_bytes:
        sizes.append(sizes[-1] * factor)
    return sizes


def gb_per_s(nbytes: int | float, seconds: float) -> float:
    """Return the bandwidth of moving `nbytes` in `seconds`, in GB/s (10**9 bytes per second)."""
    if nbytes < 0 or not seconds > 0:
        raise ValueError(f"need nbytes >= 0 and seconds > 0, got {nbytes} and {seconds}.")
    return nbytes / seconds / 1e9


def pinned_memory_available() -> bool:
    """Return True when this PyTorch build can allocate page-locked (pinned) host memory here."""
    try:
        torch.empty(1, dtype=torch.uint8, pin_memory=True)
    except RuntimeError:  # CPU-only builds: no pinned-memory allocator without an accelerator
        return False
    return True


def pattern(nbytes: int, device: str | torch.device = "cpu", pinned: bool = False) -> torch.Tensor:
    """Return `nbytes` uint8 values 0, 1, ..., 250, 0, 1, ... on `device` (pinned if asked)."""
    if isinstance(nbytes, bool) or not isinstance(nbytes, int) or nbytes < 1:
        raise ValueError(f"nbytes must be a positive int, got {nbytes!r}.")
    dev = torch.device(device)
    if pinned and dev.type != "cpu":
        raise ValueError(f"only host (cpu) memory can be pinned, not {dev}.")
    if pinned and not pinned_memory_available():
        raise RuntimeError(
            "pinned host memory is not available in this PyTorch build (it needs an accelerator); "
            "check pinned_memory_available() first."
        )
    period = torch.arange(_PERIOD, dtype=torch.uint8)
    values = period.repeat(-(-nbytes // _PERIOD))[:nbytes]
    out = torch.empty(nbytes, dtype=torch.uint8, device=dev, pin_memory=pinned)
    if dev.type != "meta":
        out.copy_(values)
    return out


def pattern_holds(t: torch.Tensor, samples: int = 257) -> bool:
    """Return True when `t` (a flat uint8 tensor) holds pattern() at `samples` spread positions."""
    n, k = t.numel(), min(samples, t.numel())
    # Integer arithmetic: float positions would round past the end of large tensors.
    idx = (torch.arange(k) * (n - 1) // max(k - 1, 1)).unique()
    got = t[idx.to(t.device)].cpu()
    return bool(torch.equal(got, (idx % _PERIOD).to(torch.uint8)))


@dataclass(frozen=True)
class CopyTiming:
    """One size of a copy sweep: bytes copied, the benchmark timing, and the route taken."""

    nbytes: int
    timing: Timing
    route: str

    @property
    def seconds(self) -> float:
        """Median time of one copy, in seconds."""
        return self.timing.median

    @property
    def gbps(self) -> float:
        """Bandwidth of the median copy, in GB/s."""
        return gb_per_s(self.nbytes, self.timing.median)


def time_copy(nbytes: int, src_device: str | torch.device, dst_device: str | torch.device, *,
              pinned: bool = False, non_blocking: bool = False, method: str = "copy_",
              min_run_time: float = 0.05, num_threads: int | None = None) -> CopyTiming:
    """Time copying `nbytes` from src_device to dst_device with benchmark(), then check the copy.

    `pinned` pins the host end (the source when both ends are the host). `method` "copy_" copies
    into a destination allocated once; "to" calls src.to(dst_device, copy=True), which allocates
    the destination on every call (on the host alone, that is a clone). `num_threads` is the
    number of CPU threads a host-side copy may use (default: torch's, as in benchmark()).
    """
    src_dev, dst_dev = pick_device(src_device), pick_device(dst_device)
    if method not in _METHODS:
        raise ValueError(f"method must be one of {_METHODS}, got {method!r}.")
    if pinned and "cpu" not in (src_dev.type, dst_dev.type):
        raise ValueError(f"pinned=True needs a host (cpu) end; got {src_dev} -> {dst_dev}.")
    pin_src = pinned and src_dev.type == "cpu"
    pin_dst = pinned and not pin_src
    src = pattern(nbytes, "cpu", pinned=pin_src).to(src_dev)
    dst = torch.empty(nbytes, dtype=torch.uint8, device=dst_dev, pin_memory=pin_dst)
    result = [dst]

    def copy() -> None:
        if method == "copy_":
            dst.copy_(src, non_blocking=non_blocking)
        else:
            result[0] = src.to(dst_dev, non_blocking=non_blocking, copy=True)

    # Wait on the accelerator end (the destination's when both are accelerators).
    wait_on = dst_dev if dst_dev.type != "cpu" else src_dev
    timing = benchmark(copy, device=wait_on, min_run_time=min_run_time, num_threads=num_threads)
    synchronize(wait_on)
    if "meta" not in (src_dev.type, dst_dev.type) and not pattern_holds(result[0]):
        raise AssertionError(f"the copy {src_dev} -> {dst_dev} of {nbytes} bytes is wrong.")
    return CopyTiming(nbytes, timing, f"{src_dev} -> {dst_dev}")


def sweep_copies(sizes: list[int], src_device: str | torch.device,
                 dst_device: str | torch.device, **options: Any) -> list[CopyTiming]:
    """Run time_copy for every size in `sizes` (options as time_copy's); return the timings."""
    if not sizes:
        raise ValueError("sizes is empty: pass byte counts, e.g. transfer_sizes().")
    return [time_copy(n, src_device, dst_device, **options) for n in sizes]


def to_record(curves: dict[str, list[CopyTiming]]) -> dict[str, Any]:
    """Return `curves` in the layout of course_utils/data/results/*.json: label -> sizes, seconds, work."""
    return {
        label: {
            "sizes": [p.nbytes for p in points],
            "seconds": [p.seconds for p in points],
            "iqr": [p.timing.iqr for p in points],
            "work": [p.nbytes for p in points],
            "unit": "byte",
            "device": points[0].timing.device,
            "route": points[0].route,
        }
        for label, points in curves.items() if points
    }


def write_record(path: str | Path, curves: dict[str, list[CopyTiming]], *,
                 device_name: str) -> Path:
    """Store `curves` under the key "transfers" of the results file at `path`, keeping other keys."""
    return write_entry(path, "transfers", to_record(curves), device_name=device_name)


@dataclass(frozen=True)
class RecordedCurves:
    """Transfer curves read from one recorded results file: label -> (bytes, seconds) points."""

    path: Path
    device: str
    date: str
    torch: str
    curves: dict[str, list[tuple[int, float]]]


def read_records(folder: str | Path) -> list[RecordedCurves]:
    """Read the "transfers" of every *.json file in `folder` that has them (none: [])."""
    found = []
    for entry in read_entries(folder, "transfers"):
        try:
            curves = {label: list(zip(map(int, c["sizes"]), map(float, c["seconds"])))
                      for label, c in entry.value.items()}
        except (KeyError, TypeError, AttributeError, ValueError) as err:
            raise ValueError(f"{entry.path}: the 'transfers' entry is malformed ({err!r}); each "
                             "curve needs 'sizes' and 'seconds'.") from None
        found.append(RecordedCurves(entry.path, entry.device, entry.date, entry.torch, curves))
    return found

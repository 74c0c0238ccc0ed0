"""Reading how much memory a device (or, on CPU, this process) is using, and what autograd
saves for backward (SavedActivations, notebooks 11 and 13)."""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from typing import Any

import psutil
import torch

from course_utils.devices import _best_device, _parse, _type_count


def format_bytes(n: int | float | None) -> str:
    """Write a byte count with a binary unit: '512 B', '1.50 KiB', '3.00 GiB'."""
    if n is None:
        return "-"
    value = float(n)
    for unit in ("B", "KiB", "MiB"):
        if abs(value) < 1024:
            return f"{value:.0f} B" if unit == "B" else f"{value:.2f} {unit}"
        value /= 1024
    return f"{value:.2f} GiB"


def memory_report(device: str | torch.device | None = None) -> dict[str, Any]:
    """Return memory figures in bytes for `device`; on CPU, this process's resident memory."""
    if device is None:
        device = _best_device()
    elif isinstance(device, str):
        device = _parse(device)  # without requiring that the device exists
    elif not isinstance(device, torch.device):
        raise TypeError("memory_report expects None, a device string or a torch.device; "
                        f"got {type(device).__name__}.")
    report: dict[str, Any] = {"device": str(device), "available": _type_count(device.type) > 0}
    if device.type == "cpu":
        info = psutil.Process().memory_info()
        vm = psutil.virtual_memory()
        report.update(process_rss=int(info.rss), free=int(vm.available), total=int(vm.total))
    elif device.type == "cuda" and report["available"]:
        if device.index is not None and device.index >= torch.cuda.device_count():
            raise ValueError(f"{device} does not exist: this machine has "
                             f"{torch.cuda.device_count()} CUDA device(s).")
        free, total = torch.cuda.mem_get_info(device)
        report.update(allocated=int(torch.cuda.memory_allocated(device)),
                      reserved=int(torch.cuda.memory_reserved(device)),
                      peak_allocated=int(torch.cuda.max_memory_allocated(device)),
                      free=int(free), total=int(total))
    elif device.type == "mps" and report["available"]:
        report.update(allocated=int(torch.mps.current_allocated_memory()),
                      driver_allocated=int(torch.mps.driver_allocated_memory()),
                      recommended_max=int(torch.mps.recommended_max_memory()))
    elif not report["available"]:
        report["note"] = f"no {device.type} device on this machine: nothing to report"
    else:
        report["note"] = f"no memory readout for {device.type} devices in this course"
    return report


def memory_report_text(report: dict[str, Any]) -> str:
    """Render a memory_report() dict on one line, with byte counts in readable units."""
    parts = [f"{k}={format_bytes(v) if isinstance(v, int) and not isinstance(v, bool) else v}"
             for k, v in report.items()]
    return ", ".join(parts)


class SavedActivations:
    """Inside `with`, count the storages autograd saves for backward, each once, on any
    device. total_bytes, count: what was saved; peak_bytes: the most held at once;
    alive_bytes(): what autograd holds now. Storages of `exclude` are left out."""

    def __init__(self, exclude: Iterable[torch.Tensor] = ()) -> None:
        self.excluded = {(t.device, t.untyped_storage().data_ptr()) for t in exclude}
        self.blocks = {}  # (device, storage address) -> [bytes, weak refs to its tensors]
        self.total_bytes = self.count = self.peak_bytes = 0

    def held(self, key: tuple) -> bool:  # a saved tensor on this storage still lives
        return any(ref() is not None for ref in self.blocks[key][1])

    def alive_bytes(self) -> int:
        return sum(self.blocks[key][0] for key in self.blocks if self.held(key))

    def pack(self, t: torch.Tensor) -> torch.Tensor:
        packed = t.detach()  # same memory, no reference cycle through t's graph
        key = (t.device, t.untyped_storage().data_ptr() or -id(packed))  # 0: empty
        if key in self.excluded:
            return packed
        if key not in self.blocks or not self.held(key):  # new, or an address reused
            self.blocks[key] = [t.untyped_storage().nbytes(), []]
            self.total_bytes += self.blocks[key][0]
            self.count += 1
        self.blocks[key][1].append(weakref.ref(packed))
        self.peak_bytes = max(self.peak_bytes, self.alive_bytes())
        return packed

    def __enter__(self) -> "SavedActivations":
        self.hooks = torch.autograd.graph.saved_tensors_hooks(self.pack, lambda t: t)
        self.hooks.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.hooks.__exit__(*exc)

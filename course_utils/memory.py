"""Reading how much memory a device (or, on CPU, this process) is using."""

from __future__ import annotations

from typing import Any

import psutil
import torch

from course_utils.devices import _best_device, _parse, _type_available


def format_bytes(n: int | float | None) -> str:
    """Write a byte count with a binary unit: '512 B', '1.50 KiB', '3.00 GiB'."""
    if n is None:
        return "-"
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(value) < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.2f} {unit}"
        value /= 1024
    return f"{value:.2f} GiB"  # pragma: no cover


def _as_device(device: str | torch.device | None) -> torch.device:
    """Turn the argument into a torch.device without requiring that it exists."""
    if device is None:
        return _best_device()
    if isinstance(device, torch.device):
        return device
    if isinstance(device, str):
        return _parse(device)
    raise TypeError(
        f"memory_report expects None, a device string or a torch.device; got {type(device).__name__}."
    )


def memory_report(device: str | torch.device | None = None) -> dict[str, Any]:
    """Return memory figures in bytes for `device`; on CPU, this process's resident memory."""
    dev = _as_device(device)
    report: dict[str, Any] = {"device": str(dev), "available": _type_available(dev.type)}
    if dev.type == "cpu":
        info = psutil.Process().memory_info()
        vm = psutil.virtual_memory()
        report.update(process_rss=int(info.rss), free=int(vm.available), total=int(vm.total))
    elif dev.type == "cuda" and report["available"]:
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise ValueError(f"{dev} does not exist: this machine has {torch.cuda.device_count()} CUDA device(s).")
        free, total = torch.cuda.mem_get_info(dev)
        report.update(
            allocated=int(torch.cuda.memory_allocated(dev)),
            reserved=int(torch.cuda.memory_reserved(dev)),
            peak_allocated=int(torch.cuda.max_memory_allocated(dev)),
            free=int(free),
            total=int(total),
        )
    elif dev.type == "mps" and report["available"]:
        report.update(
            allocated=int(torch.mps.current_allocated_memory()),
            driver_allocated=int(torch.mps.driver_allocated_memory()),
            recommended_max=int(torch.mps.recommended_max_memory()),
        )
    elif not report["available"]:
        report["note"] = f"no {dev.type} device on this machine: nothing to report"
    else:
        report["note"] = f"no memory readout for {dev.type} devices in this course"
    return report


def memory_report_text(report: dict[str, Any]) -> str:
    """Render a memory_report() dict on one line, with byte counts in readable units."""
    parts = [f"{k}={format_bytes(v) if isinstance(v, int) and not isinstance(v, bool) else v}"
             for k, v in report.items()]
    return ", ".join(parts)

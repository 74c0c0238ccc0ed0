"""Choosing a device, waiting for it, and describing it."""

from __future__ import annotations

import os
import platform
import re
from typing import Any

import torch

from course_utils.gpu_check import diagnose_gpu

# A device string: a type name, optionally followed by ":<index>".
_DEVICE_RE = re.compile(r"^[a-z_][a-z0-9_]*(:\d+)?$")
# Device types that are always present in any build of PyTorch.
_ALWAYS_PRESENT = ("cpu", "meta")


def _type_count(device_type: str) -> int:
    """How many devices of `device_type` PyTorch can use here (1 for cpu and meta, 0 if none)."""
    if device_type in _ALWAYS_PRESENT:
        return 1
    best = _best_device()
    return torch.accelerator.device_count() if best.type == device_type else 0


def _best_device() -> torch.device:
    """The current accelerator (with its index) if there is one, else the CPU."""
    if torch.accelerator.is_available():
        acc = torch.accelerator.current_accelerator()
        assert acc is not None
        return torch.device(acc.type, torch.accelerator.current_device_index())
    return torch.device("cpu")


def available_devices() -> list[str]:
    """List the devices PyTorch can use on this machine, e.g. ['cpu', 'cuda:0', 'cuda:1']."""
    best = _best_device()
    return ["cpu"] + [f"{best.type}:{i}" for i in range(_type_count(best.type))
                      if best.type != "cpu"]


def _parse(prefer: str) -> torch.device:
    """Turn a device string into a torch.device, or raise ValueError if it is malformed."""
    text = prefer.strip().lower()
    if not _DEVICE_RE.match(text):
        raise ValueError(f"{prefer!r} is not a device string: write a type with an optional "
                         "index, such as 'cpu', 'cuda', 'cuda:1' or 'mps'.")
    try:
        return torch.device(text)
    except RuntimeError as err:  # an unknown type such as 'gpu' or 'cude'
        raise ValueError(f"{prefer!r} is not a device type PyTorch knows; use one of 'cpu', "
                         f"'cuda', 'cuda:N', 'mps', 'xpu' or 'meta' ({err}).") from None


def pick_device(prefer: str | torch.device | None = None) -> torch.device:
    """Return the device to compute on: the best accelerator when `prefer` is None, else `prefer`."""
    if prefer is None:
        return _best_device()
    if isinstance(prefer, str):
        device = _parse(prefer)
    elif isinstance(prefer, torch.device):
        device = prefer
    else:
        raise TypeError("pick_device expects None, a string such as 'cuda:0', or a "
                        f"torch.device; got {type(prefer).__name__}.")
    count = _type_count(device.type)
    if count == 0 or (device.index is not None and device.index >= count):
        raise RuntimeError(
            f"Asked for device '{device}', but this machine has only: "
            f"{', '.join(available_devices())}. Pass DEVICE=None (or call pick_device()) to take "
            "the best one available, or name one from that list.")
    if device.type not in _ALWAYS_PRESENT and device.index is None:
        # Name the index so that comparisons with a tensor's .device (always indexed) hold.
        best = _best_device()
        device = torch.device(device.type, best.index if best.type == device.type else 0)
    return device


def synchronize(device: str | torch.device | None = None) -> None:
    """Wait until all work queued on `device` (default: the current accelerator) has finished.

    A no-op on the CPU, on meta, and for a device type this machine does not have.
    """
    dev = None if device is None else torch.device(device)
    if torch.accelerator.is_available() and (dev is None or _type_count(dev.type) > 0
                                             and dev.type not in _ALWAYS_PRESENT):
        torch.accelerator.synchronize(dev)


def _cpu_model() -> str:
    """Return the CPU's model name as the operating system reports it."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def device_report(device: str | torch.device | None = None) -> dict[str, Any]:
    """Describe the software stack and `device` (default: the one pick_device() chooses).

    Its "gpu_check" lists what stops PyTorch from using a GPU here, each with its fix
    (course_utils.gpu_check.diagnose_gpu), or says that nothing does.
    """
    dev = pick_device(device)
    report: dict[str, Any] = {
        "torch": torch.__version__,
        "device": str(dev),
        "device_type": dev.type,
        "device_name": None,
        "accelerator": None,
        "accelerator_count": 0,
        "cuda": torch.version.cuda,
        "cudnn": None,
        "hip": getattr(torch.version, "hip", None),
        "memory_total_bytes": None,
        "compute_capability": None,
        "multiprocessors": None,
        "cpu_model": _cpu_model(),
        "cpu_logical_cores": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "python": platform.python_version(),
        "gpu_check": [str(f) for f in diagnose_gpu()] or ["no problem found"],
    }
    if torch.accelerator.is_available():
        acc = torch.accelerator.current_accelerator()
        report["accelerator"] = acc.type if acc is not None else None
        report["accelerator_count"] = torch.accelerator.device_count()
    if torch.backends.cudnn.is_available():
        report["cudnn"] = torch.backends.cudnn.version()
    if dev.type == "cpu":
        report["device_name"] = report["cpu_model"]
    elif dev.type == "cuda":
        props = torch.cuda.get_device_properties(dev)
        report["device_name"] = props.name
        report["memory_total_bytes"] = int(props.total_memory)
        report["compute_capability"] = f"{props.major}.{props.minor}"
        report["multiprocessors"] = int(props.multi_processor_count)
    elif dev.type == "mps":
        report["device_name"] = f"Apple GPU (MPS) on {platform.machine()}"
        report["memory_total_bytes"] = int(torch.mps.recommended_max_memory())
    else:
        report["device_name"] = str(dev)
    return report


def device_report_text(report: dict[str, Any]) -> str:
    """Render a device_report() dict as aligned 'key: value' lines for printing."""
    if not isinstance(report, dict):
        raise TypeError(f"device_report_text expects the dict from device_report(), got {type(report).__name__}.")
    lines = []
    width = max((len(k) for k in report), default=0)
    for key, value in report.items():
        if value is None:
            value = "-"
        elif key.endswith("_bytes") and isinstance(value, int):
            value = f"{value / 2**30:.1f} GiB"
        elif isinstance(value, (list, tuple)):  # one item per line, aligned under the first
            pad = "\n" + " " * (width + 3)
            value = pad.join(pad.join(str(item).splitlines()) for item in value) or "-"
        lines.append(f"{key:<{width}} : {value}")
    return "\n".join(lines)

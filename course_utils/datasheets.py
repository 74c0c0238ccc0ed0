"""What a GPU could do at best, as its vendor publishes it: data/gpu_peaks.csv."""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass

import torch

from course_utils.datasets import data_path


@dataclass(frozen=True)
class GpuPeak:
    """A GPU model's dense peak rates (no sparsity) and memory bandwidth, with their source."""

    model: str
    fp32_tflops: float  # FP32 on the CUDA cores, no tensor cores
    bf16_tflops: float | None  # dense BF16 on tensor cores; None where the GPU has none
    fp16_tflops: float | None  # dense FP16 on tensor cores (FP32 accumulation); None without
    memory_gb_s: float | None
    pcie_gb_s: float  # host link, one direction: PCIe x16 of the card's generation (GH200: C2C)
    nvlink_gb_s: float | None  # GPU-to-GPU, all links, both directions; None without NVLink
    nvlink_bridge: bool  # True where two cards reach nvlink_gb_s only through an NVLink bridge
    source: str  # where the rates, memory and NVLink figures come from
    pcie_source: str  # where the host link's rate comes from

    def half_tflops(self, dtype: torch.dtype) -> float | None:
        """The dense tensor-core peak for torch.bfloat16 or torch.float16 (None: not listed)."""
        if dtype == torch.bfloat16:
            return self.bf16_tflops
        if dtype == torch.float16:
            return self.fp16_tflops
        raise ValueError(f"half_tflops takes torch.bfloat16 or torch.float16, got {dtype}.")


def gpu_peak(device_name: str) -> GpuPeak | None:
    """The datasheet peaks of the GPU torch calls `device_name`, or None if it is not listed.

    Rows are tried in order and the first whose `name_pattern` (a regular expression) matches
    wins. A MIG slice ("... MIG 1g.10gb") has only part of the GPU's multiprocessors, so the
    whole GPU's peaks do not apply to it: None.
    """
    if not isinstance(device_name, str):
        raise TypeError(f"gpu_peak expects a device name string, got {type(device_name).__name__}.")
    if re.search(r"\bMIG\b", device_name):
        return None
    with open(data_path("gpu_peaks.csv"), encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f):
            if re.search(row["name_pattern"], device_name, flags=re.IGNORECASE):
                number = {k: float(v) if v else None for k, v in row.items()
                          if k.endswith(("_tflops", "_gb_s"))}
                return GpuPeak(model=row["model"], source=row["source"],  # type: ignore[arg-type]
                               pcie_source=row["pcie_source"],
                               nvlink_bridge=row["nvlink_bridge"] == "yes", **number)
    return None


def datasheet_row(device_name: str | None, reference: str) -> tuple[GpuPeak, str]:
    """The datasheet row for the GPU `device_name`, else the `reference` GPU's, and a line saying which.

    `device_name` None means no CUDA GPU is in use (the table lists NVIDIA GPUs). The line
    names the row used and, where the GPU is not in the table, that the reference row stands in.
    """
    ref = gpu_peak(reference)
    if ref is None:
        raise ValueError(f"the reference GPU {reference!r} is not in the datasheet table "
                         f"({data_path('gpu_peaks.csv').name}); name a listed one, e.g. 'NVIDIA H200'.")
    if device_name is None:
        return ref, f"datasheet: no CUDA GPU in use, so the {ref.model} row stands in ({ref.source})"
    own = gpu_peak(device_name)
    if own is not None:
        return own, f"datasheet: {device_name} is the {own.model} row ({own.source})"
    why = " (a MIG slice has only part of the GPU)" if re.search(r"\bMIG\b", device_name) else ""
    return ref, (f"datasheet: {device_name} is not in the table{why}, so the {ref.model} row "
                 f"stands in ({ref.source})")

"""What a GPU could do at best, as its vendor publishes it: data/gpu_peaks.csv."""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass

from course_utils.datasets import data_path


@dataclass(frozen=True)
class GpuPeak:
    """A GPU model's dense peak rates (no sparsity) and memory bandwidth, with their source."""

    model: str
    fp32_tflops: float  # FP32 on the CUDA cores, no tensor cores
    bf16_tflops: float | None  # dense BF16 on tensor cores; None where the GPU has none
    memory_gb_s: float | None
    pcie_gb_s: float  # host link, one direction: PCIe x16 of the card's generation
    nvlink_gb_s: float | None  # GPU-to-GPU, all links, both directions; None without NVLink
    source: str  # where the rates, memory and NVLink figures come from
    pcie_source: str  # where the host link's rate comes from


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
                               pcie_source=row["pcie_source"], **number)
    return None

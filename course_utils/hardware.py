"""What a GPU could do at best: datasheet peaks, CUDA cores per multiprocessor, peaks from clocks."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class GpuPeak:
    """A GPU model's peak rates as its vendor publishes them (dense, no sparsity)."""

    model: str
    fp32_tflops: float  # FP32 on the CUDA cores, no tensor cores
    bf16_tflops: float | None  # dense BF16 on tensor cores; None where the GPU has none
    memory_gb_s: float | None  # memory bandwidth
    source: str


# (regular expression matched against torch's device name, peaks). The first match wins, so a
# specific variant comes before its family. Names as torch reports them, e.g. "NVIDIA H100 80GB
# HBM3" (the SXM card), "NVIDIA H100 PCIe", "NVIDIA A100-SXM4-80GB", "NVIDIA GeForce RTX 3090".
# A Grace Hopper superchip ("NVIDIA GH200 480GB") is not an H200 and is left out.
GPU_PEAKS: tuple[tuple[str, GpuPeak], ...] = (
    (r"H100.*PCIe", GpuPeak("H100 PCIe", 51.0, 756.0, 2000.0, "NVIDIA H100 datasheet")),
    (r"H100.*NVL", GpuPeak("H100 NVL", 60.0, 835.0, 3900.0, "NVIDIA H100 datasheet")),
    (r"H100", GpuPeak("H100 SXM", 67.0, 989.0, 3350.0, "NVIDIA H100 datasheet")),
    (r"(?<!G)H200(?!.*NVL)", GpuPeak("H200 SXM", 67.0, 989.0, 4800.0, "NVIDIA H200 datasheet")),
    (r"A100.*PCIE.*80GB|A100.*80GB.*PCIe",
     GpuPeak("A100 80GB PCIe", 19.5, 312.0, 1935.0, "NVIDIA A100 datasheet")),
    (r"A100.*80GB", GpuPeak("A100 80GB SXM", 19.5, 312.0, 2039.0, "NVIDIA A100 datasheet")),
    (r"A100", GpuPeak("A100 40GB", 19.5, 312.0, 1555.0, "NVIDIA A100 datasheet")),
    (r"L40S", GpuPeak("L40S", 91.6, 362.0, 864.0, "NVIDIA L40S datasheet")),
    (r"\bL4\b", GpuPeak("L4", 30.3, 121.0, 300.0, "NVIDIA L4 datasheet")),
    (r"\bA10\b", GpuPeak("A10", 31.2, 125.0, 600.0, "NVIDIA A10 datasheet")),
    (r"V100.*PCIE", GpuPeak("V100 PCIe", 14.0, None, 900.0, "NVIDIA V100 datasheet")),
    (r"V100", GpuPeak("V100 SXM2", 15.7, None, 900.0, "NVIDIA V100 datasheet")),
    (r"\bT4\b", GpuPeak("T4", 8.1, None, 320.0, "NVIDIA T4 datasheet")),
    (r"RTX 4090", GpuPeak("GeForce RTX 4090", 82.6, 165.2, 1008.0,
                          "NVIDIA Ada GPU architecture whitepaper")),
    (r"RTX 3090(?! Ti)", GpuPeak("GeForce RTX 3090", 35.6, 71.0, 936.0,
                                 "NVIDIA Ampere GA102 GPU architecture whitepaper")),
)

# FP32 CUDA cores per streaming multiprocessor, by compute capability: the table
# _ConvertSMVer2Cores in NVIDIA's cuda-samples (Common/helper_cuda.h). Newer GPUs are not in it.
CUDA_CORES_PER_SM: dict[str, int] = {
    "3.0": 192, "3.2": 192, "3.5": 192, "3.7": 192,
    "5.0": 128, "5.2": 128, "5.3": 128,
    "6.0": 64, "6.1": 128, "6.2": 128,
    "7.0": 64, "7.2": 64, "7.5": 64,
    "8.0": 64, "8.6": 128, "8.7": 128, "8.9": 128,
    "9.0": 128,
}


def gpu_peak(device_name: str) -> GpuPeak | None:
    """The datasheet peaks of the GPU called `device_name`, or None if it is not in GPU_PEAKS.

    A MIG slice ("NVIDIA H100 80GB HBM3 MIG 1g.10gb") has only part of the GPU's SMs, so the
    whole GPU's peaks do not apply to it: None.
    """
    if not isinstance(device_name, str):
        raise TypeError(f"gpu_peak expects a device name string, got {type(device_name).__name__}.")
    if re.search(r"\bMIG\b", device_name):
        return None
    for pattern, peak in GPU_PEAKS:
        if re.search(pattern, device_name, flags=re.IGNORECASE):
            return peak
    return None


def cuda_cores_per_sm(compute_capability: str | None) -> int | None:
    """FP32 CUDA cores per multiprocessor for a compute capability such as '8.6'; None if unknown."""
    if compute_capability is None:
        return None
    if not re.fullmatch(r"\d+\.\d+", str(compute_capability)):
        raise ValueError(f"compute capability must look like '8.6', got {compute_capability!r}.")
    return CUDA_CORES_PER_SM.get(str(compute_capability))


def fp32_peak_flops(multiprocessors: int, cores_per_sm: int, clock_hz: float) -> float:
    """Peak FP32 FLOP/s of CUDA cores: each core finishes one fused multiply-add (2 FLOPs) a cycle."""
    if multiprocessors < 1 or cores_per_sm < 1 or not clock_hz > 0:
        raise ValueError(f"need positive counts and clock, got {multiprocessors}, {cores_per_sm}, "
                         f"{clock_hz}.")
    return 2.0 * multiprocessors * cores_per_sm * clock_hz


def fp32_peak_from_properties(props: Any) -> float | None:
    """Peak FP32 FLOP/s from torch.cuda.get_device_properties(); None if the clock or SM is unknown.

    Uses `major`, `minor`, `multi_processor_count` and `clock_rate` (the boost clock in kHz,
    which some CUDA versions report as 0).
    """
    cores = cuda_cores_per_sm(f"{props.major}.{props.minor}")
    clock_khz = getattr(props, "clock_rate", 0) or 0
    if cores is None or clock_khz <= 0:
        return None
    return fp32_peak_flops(int(props.multi_processor_count), cores, clock_khz * 1e3)

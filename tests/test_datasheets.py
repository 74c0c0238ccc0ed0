"""The datasheet table (data/gpu_peaks.csv) against GPU names and the vendors' own arithmetic."""

from __future__ import annotations

import csv
import re

import pytest

from course_utils import data_path, gpu_peak


@pytest.mark.parametrize("name,model", [
    ("NVIDIA H100 80GB HBM3", "H100 SXM"),
    ("NVIDIA H100 PCIe", "H100 PCIe"),
    ("NVIDIA H100 NVL", "H100 NVL"),
    ("NVIDIA H200", "H200 SXM"),
    ("NVIDIA A100-SXM4-80GB", "A100 80GB SXM"),
    ("NVIDIA A100 80GB PCIe", "A100 80GB PCIe"),
    ("NVIDIA A100-PCIE-40GB", "A100 40GB"),
    ("NVIDIA A10", "A10"),
    ("NVIDIA L4", "L4"),
    ("NVIDIA L40S", "L40S"),
    ("Tesla T4", "T4"),
    ("Tesla V100-SXM2-16GB", "V100 SXM2"),
    ("Tesla V100-PCIE-32GB", "V100 PCIe"),
    ("NVIDIA GeForce RTX 3090", "GeForce RTX 3090"),
    ("NVIDIA GeForce RTX 4090", "GeForce RTX 4090"),
])
def test_gpu_peak_matches_names(name: str, model: str) -> None:
    peak = gpu_peak(name)
    assert peak is not None and peak.model == model


@pytest.mark.parametrize("name", ["NVIDIA A10G", "NVIDIA L40", "NVIDIA H200 NVL", "NVIDIA GeForce RTX 3090 Ti",
                                  "NVIDIA GH200 480GB", "NVIDIA GH200 144G HBM3e",
                                  "NVIDIA H100 80GB HBM3 MIG 1g.10gb",
                                  "Intel(R) Xeon(R) Processor", "Apple GPU (MPS) on arm64"])
def test_unknown_gpus_have_no_peak(name: str) -> None:
    assert gpu_peak(name) is None


def test_gpu_peak_bad_input() -> None:
    with pytest.raises(TypeError):
        gpu_peak(None)  # type: ignore[arg-type]


def test_table_is_sane() -> None:
    with open(data_path("gpu_peaks.csv"), encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) >= 10
    for row in rows:
        re.compile(row["name_pattern"])
        peak = gpu_peak(row["model"].replace(" SXM", ""))  # each row is reachable by its name
        assert peak is not None and peak.model == row["model"] and peak.fp32_tflops > 0
        assert peak.source.startswith("NVIDIA")
        assert peak.bf16_tflops is None or peak.bf16_tflops > peak.fp32_tflops
        assert peak.memory_gb_s is not None and peak.memory_gb_s > 100
        assert peak.pcie_gb_s in (15.75, 31.5, 63.0)  # PCIe 3.0, 4.0, 5.0 x16, one way
        assert peak.pcie_source == "PCI-SIG's x16 rate"  # the link rate's own source
        assert peak.nvlink_gb_s is None or peak.nvlink_gb_s > peak.pcie_gb_s


# SMs x FP32 cores per SM x 2 FLOPs x boost clock reproduces the datasheet figures
# (SM counts, cores per SM and boost clocks from the same datasheets and whitepapers).
@pytest.mark.parametrize("name,sms,cores,clock_ghz", [
    ("NVIDIA GeForce RTX 3090", 82, 128, 1.695),  # 10,496 CUDA cores
    ("NVIDIA H100 80GB HBM3", 132, 128, 1.98),
    ("NVIDIA A100-SXM4-80GB", 108, 64, 1.41),
    ("Tesla V100-SXM2-16GB", 80, 64, 1.53),
])
def test_datasheet_fp32_is_cores_times_clock(name: str, sms: int, cores: int, clock_ghz: float) -> None:
    computed = 2 * sms * cores * clock_ghz * 1e9 / 1e12
    assert computed == pytest.approx(gpu_peak(name).fp32_tflops, rel=0.01)  # type: ignore[union-attr]

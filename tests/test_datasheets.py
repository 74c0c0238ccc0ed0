"""The datasheet table (data/gpu_peaks.csv) against GPU names and the vendors' own arithmetic."""

from __future__ import annotations

import csv
import re

import pytest

import torch

from course_utils import data_path, datasheet_row, gpu_peak


@pytest.mark.parametrize("name,model", [
    ("NVIDIA H100 80GB HBM3", "H100 SXM"),
    ("NVIDIA H100 PCIe", "H100 PCIe"),
    ("NVIDIA H100 NVL", "H100 NVL"),
    ("NVIDIA H200", "H200 SXM"),
    ("NVIDIA A100-SXM4-80GB", "A100 80GB SXM"),
    ("NVIDIA A100 80GB PCIe", "A100 80GB PCIe"),
    ("NVIDIA A100-PCIE-40GB", "A100 40GB PCIe"),
    ("NVIDIA A100-SXM4-40GB", "A100 40GB SXM"),
    ("NVIDIA H200 NVL", "H200 NVL"),
    ("NVIDIA GH200 480GB", "GH200 96GB HBM3"),
    ("NVIDIA GH200 144G HBM3e", "GH200 144GB HBM3e"),
    ("NVIDIA L40", "L40"),
    ("NVIDIA A40", "A40"),
    ("NVIDIA RTX 6000 Ada Generation", "RTX 6000 Ada Generation"),
    ("NVIDIA GeForce RTX 5090", "GeForce RTX 5090"),
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


@pytest.mark.parametrize("name", ["NVIDIA A10G", "NVIDIA GeForce RTX 3090 Ti", "NVIDIA L20",
                                  "NVIDIA H100 80GB HBM3 MIG 1g.10gb", "NVIDIA RTX A6000",
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
        # Every listed GPU has FP16 tensor cores (Volta on); bf16 came with Ampere, at FP16's rate.
        assert peak.fp16_tflops is not None and peak.fp16_tflops > peak.fp32_tflops
        assert peak.bf16_tflops is None or peak.bf16_tflops == peak.fp16_tflops
        assert peak.memory_gb_s is not None and peak.memory_gb_s > 100
        if row["model"].startswith("GH200"):  # the host link is NVLink-C2C, not PCIe
            assert peak.pcie_gb_s == 450 and "NVLink-C2C" in peak.pcie_source
        else:
            assert peak.pcie_gb_s in (15.75, 31.5, 63.0)  # PCIe 3.0, 4.0, 5.0 x16, one way
            assert peak.pcie_source == "PCI-SIG's x16 rate"  # the link rate's own source
        assert peak.nvlink_gb_s is None or peak.nvlink_gb_s > peak.pcie_gb_s
        assert row["nvlink_bridge"] in ("", "yes")
        # A bridge joins PCIe cards only: SXM modules and superchips have NVLink on the board.
        assert peak.nvlink_bridge == (peak.nvlink_gb_s is not None and (
            "PCIe" in peak.model or "NVL" in peak.model or peak.model in ("A40", "GeForce RTX 3090")))


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


def test_half_tflops_by_dtype() -> None:
    t4, h100 = gpu_peak("Tesla T4"), gpu_peak("NVIDIA H100 80GB HBM3")
    assert t4 is not None and h100 is not None
    assert t4.half_tflops(torch.bfloat16) is None and t4.half_tflops(torch.float16) == 65.0
    assert h100.half_tflops(torch.bfloat16) == h100.half_tflops(torch.float16) == 989.0
    with pytest.raises(ValueError, match="bfloat16 or torch.float16"):
        h100.half_tflops(torch.float32)


def test_datasheet_row_says_which_row_stands_in() -> None:
    peak, line = datasheet_row("NVIDIA H100 80GB HBM3", "NVIDIA H200")
    assert peak.model == "H100 SXM" and "is the H100 SXM row" in line
    peak, line = datasheet_row("NVIDIA A10G", "NVIDIA H200")
    assert peak.model == "H200 SXM"
    assert "NVIDIA A10G is not in the table" in line and "H200 SXM row stands in" in line
    peak, line = datasheet_row("NVIDIA H100 80GB HBM3 MIG 1g.10gb", "NVIDIA H200")
    assert peak.model == "H200 SXM" and "MIG slice" in line
    peak, line = datasheet_row(None, "Tesla T4")
    assert peak.model == "T4" and line.startswith("datasheet: no CUDA GPU in use, so the T4 row")
    with pytest.raises(ValueError, match="reference GPU"):
        datasheet_row("NVIDIA H100", "NVIDIA A10G")


def test_gpu_peak_names_the_wrong_type() -> None:
    from course_utils import gpu_peak
    with pytest.raises(TypeError, match=r"^gpu_peak expects a device name string, got int\.$"):
        gpu_peak(3)  # type: ignore[arg-type]


def test_datasheet_row_lines_read_whole() -> None:
    """The lines a notebook prints: a MIG slice says why its GPU's row does not apply, another
    unlisted GPU says nothing more; a reference not in the table names the file to look in."""
    h200 = gpu_peak("NVIDIA H200")
    assert h200 is not None
    _, line = datasheet_row("NVIDIA A10G", "NVIDIA H200")
    assert line == (f"datasheet: NVIDIA A10G is not in the table, so the H200 SXM row stands in "
                    f"({h200.source})")
    _, line = datasheet_row("NVIDIA H100 80GB HBM3 MIG 1g.10gb", "NVIDIA H200")
    assert line == ("datasheet: NVIDIA H100 80GB HBM3 MIG 1g.10gb is not in the table (a MIG "
                    "slice has only part of the GPU), so the H200 SXM row stands in "
                    f"({h200.source})")
    with pytest.raises(ValueError) as info:
        datasheet_row("NVIDIA H100", "NVIDIA A10G")
    assert str(info.value) == ("the reference GPU 'NVIDIA A10G' is not in the datasheet table "
                               "(gpu_peaks.csv); name a listed one, e.g. 'NVIDIA H200'.")

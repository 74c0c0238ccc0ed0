"""GPU peak tables against the vendors' own arithmetic, name matching, peaks from device properties."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from course_utils.hardware import (
    GPU_PEAKS,
    cuda_cores_per_sm,
    fp32_peak_flops,
    fp32_peak_from_properties,
    gpu_peak,
)


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
    for _, peak in GPU_PEAKS:
        assert peak.fp32_tflops > 0 and peak.source
        assert peak.bf16_tflops is None or peak.bf16_tflops > peak.fp32_tflops


# SMs x FP32 cores per SM x 2 FLOPs x boost clock reproduces the datasheet figures
# (SM counts and boost clocks from the same datasheets and whitepapers).
@pytest.mark.parametrize("name,sms,cc,clock_ghz", [
    ("NVIDIA GeForce RTX 3090", 82, "8.6", 1.695),  # 10,496 CUDA cores
    ("NVIDIA H100 80GB HBM3", 132, "9.0", 1.98),
    ("NVIDIA A100-SXM4-80GB", 108, "8.0", 1.41),
    ("Tesla V100-SXM2-16GB", 80, "7.0", 1.53),
])
def test_datasheet_fp32_is_cores_times_clock(name: str, sms: int, cc: str, clock_ghz: float) -> None:
    cores = cuda_cores_per_sm(cc)
    assert cores is not None
    computed = fp32_peak_flops(sms, cores, clock_ghz * 1e9) / 1e12
    assert computed == pytest.approx(gpu_peak(name).fp32_tflops, rel=0.01)  # type: ignore[union-attr]


def test_cores_per_sm() -> None:
    assert cuda_cores_per_sm("8.6") == 128 and cuda_cores_per_sm("8.0") == 64
    assert cuda_cores_per_sm("99.0") is None and cuda_cores_per_sm(None) is None
    with pytest.raises(ValueError, match="compute capability"):
        cuda_cores_per_sm("sm_90")


def test_fp32_peak_bad_input() -> None:
    with pytest.raises(ValueError):
        fp32_peak_flops(0, 128, 1e9)


def test_peak_from_properties() -> None:
    props = SimpleNamespace(major=8, minor=6, multi_processor_count=82, clock_rate=1_695_000)
    assert fp32_peak_from_properties(props) == pytest.approx(35.6e12, rel=0.01)
    assert fp32_peak_from_properties(SimpleNamespace(major=8, minor=6, multi_processor_count=82,
                                                     clock_rate=0)) is None
    assert fp32_peak_from_properties(SimpleNamespace(major=12, minor=0, multi_processor_count=82,
                                                     clock_rate=1_000_000)) is None


@pytest.mark.gpu
def test_peak_from_this_gpus_properties() -> None:
    props = torch.cuda.get_device_properties(0)
    computed = fp32_peak_from_properties(props)
    table = gpu_peak(props.name)
    if computed is not None and table is not None:
        assert computed / 1e12 == pytest.approx(table.fp32_tflops, rel=0.15)

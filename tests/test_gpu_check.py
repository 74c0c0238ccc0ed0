"""diagnose_gpu: each common reason for 'no GPU' found from simulated probes, with its fix."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest
import torch

import course_utils.gpu_check as gpu_check
from course_utils import device_report, diagnose_gpu, device_report_text
from course_utils.gpu_check import GpuProbes, NvidiaGpu, probe_gpu

CUDA13_ARCHS = ("sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120", "compute_120")
LINUX_CPU_ONLY = GpuProbes(system="Linux", torch_cuda=None, torch_hip=None, cuda_available=False,
                           arch_list=(), cuda_visible_devices=None, nvidia_gpus=None)
HEALTHY_CUDA = GpuProbes(system="Linux", torch_cuda="13.0", torch_hip=None, cuda_available=True,
                         arch_list=CUDA13_ARCHS, cuda_visible_devices=None,
                         nvidia_gpus=(NvidiaGpu("NVIDIA H200", "580.95.05", "9.0"),),
                         accelerator="cuda")


def probes(base: GpuProbes = HEALTHY_CUDA, **changes: object) -> GpuProbes:
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def only(findings: list[gpu_check.Finding], *words: str) -> gpu_check.Finding:
    assert len(findings) == 1, findings
    assert all(w in findings[0].problem for w in words), findings[0].problem
    assert findings[0].fix
    return findings[0]


def test_a_working_gpu_has_no_findings() -> None:
    assert diagnose_gpu(HEALTHY_CUDA) == []


def test_cpu_build_on_a_machine_with_an_nvidia_driver() -> None:
    p = probes(torch_cuda=None, cuda_available=False, arch_list=(), accelerator=None,
               nvidia_gpus=(NvidiaGpu("NVIDIA GeForce RTX 3090", "570.86.10", "8.6"),))
    f = only(diagnose_gpu(p), "CPU-only build", "RTX 3090", "570.86.10")
    assert "download.pytorch.org/whl/cu" in f.fix


@pytest.mark.parametrize("cuda,driver,too_old", [
    ("13.0", "550.54.15", True), ("13.0", "580.65.06", False),
    ("12.6", "520.61.05", True), ("12.6", "525.60.13", False), ("11.8", "450.36.06", True),
])
def test_driver_too_old_for_the_cuda_build(cuda: str, driver: str, too_old: bool) -> None:
    p = probes(torch_cuda=cuda, cuda_available=not too_old,
               nvidia_gpus=(NvidiaGpu("NVIDIA A100-SXM4-80GB", driver, "8.0"),))
    found = diagnose_gpu(p)
    if too_old:
        f = only(found, f"CUDA {cuda}", "needs NVIDIA driver", driver)
        assert "update the NVIDIA driver" in f.fix
    else:
        assert found == []


def test_windows_has_its_own_driver_minimum() -> None:
    p = probes(system="Windows", torch_cuda="12.6", cuda_available=False,
               nvidia_gpus=(NvidiaGpu("NVIDIA GeForce RTX 4090", "527.56", "8.9"),))
    only(diagnose_gpu(p), "needs NVIDIA driver 528.33")


@pytest.mark.parametrize("cc,too_old", [("6.1", True), ("7.0", True), ("7.5", False), ("9.0", False)])
def test_gpu_too_old_for_the_cuda_build(cc: str, too_old: bool) -> None:
    # Even where torch.cuda.is_available() is True, kernels fail on a GPU the build lacks.
    p = probes(nvidia_gpus=(NvidiaGpu("Some GPU", "580.95.05", cc),))
    found = diagnose_gpu(p)
    if too_old:
        f = only(found, f"compute capability {cc}", "oldest: 7.5", "CUDA 13.0")
        assert "older CUDA" in f.fix
    else:
        assert found == []


@pytest.mark.parametrize("value", ["", "-1", " "])
def test_cuda_visible_devices_empty(value: str) -> None:
    p = probes(cuda_available=False, accelerator=None, cuda_visible_devices=value)
    f = only(diagnose_gpu(p), "CUDA_VISIBLE_DEVICES", "hides every GPU")
    assert "restart the kernel" in f.fix
    assert diagnose_gpu(probes(cuda_visible_devices="0,1")) == []


def test_cuda_build_without_a_driver() -> None:
    p = probes(cuda_available=False, accelerator=None, nvidia_gpus=None)
    only(diagnose_gpu(p), "CUDA build", "no NVIDIA driver answers")


MAC = GpuProbes(system="Darwin", torch_cuda=None, torch_hip=None, cuda_available=False,
                arch_list=(), cuda_visible_devices=None, nvidia_gpus=None, mps_built=True,
                mps_available=True, mac_version="14.5", accelerator="mps")


def test_mac_cases() -> None:
    assert diagnose_gpu(MAC) == []
    rosetta = probes(MAC, rosetta=True, mps_built=False, mps_available=False, accelerator=None)
    assert "arm64" in only(diagnose_gpu(rosetta), "Rosetta", "x86-64").fix
    no_mps = probes(MAC, mps_built=False, mps_available=False, accelerator=None)
    assert "Intel Mac" in only(diagnose_gpu(no_mps), "built without MPS").fix
    old_macos = probes(MAC, mps_available=False, mac_version="12.1", accelerator=None)
    only(diagnose_gpu(old_macos), "macOS 14.0 or newer", "macOS 12.1")
    ventura = probes(MAC, mps_available=False, mac_version="13.6.1", accelerator=None)
    only(diagnose_gpu(ventura), "macOS 14.0 or newer", "macOS 13.6.1")  # older torch ran here
    unavailable = probes(MAC, mps_available=False, accelerator=None)
    only(diagnose_gpu(unavailable), "is_available() is False")


def test_no_gpu_at_all() -> None:
    f = only(diagnose_gpu(LINUX_CPU_ONLY), "No GPU here")
    assert "runs on the CPU" in f.fix


def test_probes_of_this_machine_match_torch() -> None:
    p = probe_gpu()
    assert p.torch_cuda == torch.version.cuda
    assert p.cuda_available == torch.cuda.is_available()
    assert p.arch_list == tuple(torch.cuda.get_arch_list())
    assert p.mps_built == torch.backends.mps.is_built()
    assert p.cuda_visible_devices == os.environ.get("CUDA_VISIBLE_DEVICES")


def test_a_real_nvidia_smi_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A stand-in nvidia-smi on PATH, answering the query as the real one does.
    fake = tmp_path / "nvidia-smi"
    fake.write_text("#!/bin/sh\necho 'NVIDIA GeForce GTX 1080, 535.104.05, 6.1'\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    gpu_check._nvidia_smi.cache_clear()
    try:
        p = probe_gpu()
        assert p.nvidia_gpus == (NvidiaGpu("NVIDIA GeForce GTX 1080", "535.104.05", "6.1"),)
        if torch.version.cuda is None and not torch.version.hip:  # this CPU-only build
            only(diagnose_gpu(), "CPU-only build", "GTX 1080")
    finally:
        gpu_check._nvidia_smi.cache_clear()


def test_device_report_carries_the_check() -> None:
    report = device_report("cpu")
    assert report["gpu_check"] == ([str(f) for f in diagnose_gpu()] or ["no problem found"])
    text = device_report_text(report)
    assert text.splitlines()[-1].lstrip().startswith(("fix:", "no problem found"))

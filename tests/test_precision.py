"""Pinned FP32 precision, TF32 capability and the 16-bit type per device, against torch's own state."""

from __future__ import annotations

import pytest
import torch

from course_utils import half_dtype, pin_fp32_precision, tf32_capable


@pytest.fixture
def restore_precision():
    saved = (torch.get_float32_matmul_precision(), torch.backends.cuda.matmul.allow_tf32,
             torch.backends.cudnn.allow_tf32)
    yield
    torch.set_float32_matmul_precision(saved[0])
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved[1:]


def test_pin_switches_tf32_off_everywhere(restore_precision, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", raising=False)
    monkeypatch.setenv("NVIDIA_TF32_OVERRIDE", "0")  # NVIDIA's switch only turns TF32 off
    torch.set_float32_matmul_precision("high")  # TF32 allowed, as NGC containers set it
    torch.backends.cudnn.allow_tf32 = True  # PyTorch's default for convolutions
    line = pin_fp32_precision()
    assert torch.get_float32_matmul_precision() == "highest"
    assert torch.backends.cuda.matmul.allow_tf32 is False
    assert torch.backends.cudnn.allow_tf32 is False
    assert "TF32 off" in line and "highest" in line and "but" not in line


def test_pin_flags_an_environment_override(restore_precision, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", "1")
    line = pin_fp32_precision()
    assert "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1 is set" in line
    monkeypatch.setenv("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", "0")  # 0 overrides nothing
    assert "is set" not in pin_fp32_precision()


@pytest.mark.parametrize("capability,tf32,half", [
    ((7, 5), False, torch.float16),  # T4: no TF32, no native bfloat16
    ((7, 0), False, torch.float16),  # V100
    ((8, 0), True, torch.bfloat16),  # A100
    ((9, 0), True, torch.bfloat16),  # H100
])
def test_by_compute_capability(monkeypatch: pytest.MonkeyPatch, capability, tf32, half) -> None:
    # Simulated NVIDIA GPUs: the answers follow the compute capability torch reports.
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: capability)
    monkeypatch.setattr(torch.version, "hip", None)
    assert tf32_capable("cuda:0") is tf32
    assert half_dtype("cuda:0") == half


def test_cpu_and_other_devices() -> None:
    assert tf32_capable("cpu") is False and half_dtype("cpu") == torch.bfloat16
    assert tf32_capable("mps") is False and half_dtype("mps") == torch.float16


@pytest.mark.gpu
def test_this_gpu_agrees_with_torch() -> None:
    major, _ = torch.cuda.get_device_capability()
    assert tf32_capable("cuda") is (major >= 8)
    assert (half_dtype("cuda") == torch.bfloat16) is torch.cuda.is_bf16_supported(including_emulation=False)


def test_cpu_bf16_instructions_are_read_from_the_cpu_flags() -> None:
    from course_utils import cpu_has_bf16

    x86 = "processor : 0\nflags : fpu sse avx2 avx512f{}\nmodel name : some CPU\n"
    assert cpu_has_bf16(x86.format("")) is False  # AVX-512 alone: no bfloat16 units
    assert cpu_has_bf16(x86.format(" avx512_bf16")) is True
    assert cpu_has_bf16(x86.format(" amx_tile amx_bf16")) is True
    assert cpu_has_bf16("processor : 0\nFeatures : fp asimd sve bf16 i8mm\n") is True  # Arm
    assert cpu_has_bf16("processor : 0\nFeatures : fp asimd evtstrm\n") is False
    assert cpu_has_bf16("processor : 0\nmodel name : no flag lines\n") is None  # unknown
    assert cpu_has_bf16() in (True, False, None)  # this machine, whatever it is


def test_cpu_has_bf16_asks_macos_and_reads_proc_elsewhere(monkeypatch, tmp_path):
    import builtins
    import platform
    import subprocess
    from types import SimpleNamespace

    from course_utils import cpu_has_bf16

    asked = []

    def sysctl(cmd, **kwargs):
        asked.append((cmd, kwargs))
        return SimpleNamespace(stdout=answer + "\n")

    monkeypatch.setattr(platform, "system", lambda: "Darwin")
    monkeypatch.setattr(subprocess, "run", sysctl)
    for answer, expected in (("1", True), ("0", False), ("", None), ("yes", None)):
        assert cpu_has_bf16() is expected
    assert asked[0] == (["sysctl", "-n", "hw.optional.arm.FEAT_BF16"],
                        {"capture_output": True, "text": True, "timeout": 5})
    assert cpu_has_bf16("Features : bf16\n") is True  # given text: not asked
    assert len(asked) == 4

    def no_sysctl(cmd, **kwargs):
        raise FileNotFoundError(cmd[0])

    monkeypatch.setattr(subprocess, "run", no_sysctl)
    assert cpu_has_bf16() is None
    # Linux: /proc/cpuinfo is read, and missing means unknown.
    monkeypatch.setattr(platform, "system", lambda: "Linux")
    real_open = builtins.open
    fake = tmp_path / "cpuinfo"
    fake.write_text("flags : avx2 avx512_bf16\n")
    monkeypatch.setattr(builtins, "open", lambda path, *a, **k: real_open(
        fake if path == "/proc/cpuinfo" else path, *a, **k))
    assert cpu_has_bf16() is True
    fake.unlink()
    assert cpu_has_bf16() is None

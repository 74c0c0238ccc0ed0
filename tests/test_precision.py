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


def test_pin_says_what_it_set_in_one_line(restore_precision,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The line a notebook prints, whole: the setting, then the override and what to do."""
    monkeypatch.delenv("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", raising=False)
    setting = ("float32 precision: full FP32 for matmuls and cuDNN convolutions (TF32 off; "
               "matmul precision 'highest')")
    assert pin_fp32_precision() == setting
    monkeypatch.setenv("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", "1")
    assert pin_fp32_precision() == setting + (
        "; but TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1 is set, which can make cuBLAS use TF32 anyway: "
        "unset it and restart the kernel for full-FP32 timings")


def _simulate_cuda(monkeypatch: pytest.MonkeyPatch, available: bool, capabilities: list,
                   hip: str | None = None) -> None:
    """A simulated machine: CUDA (or ROCm, `hip`) present or not, GPU i of compute capability
    capabilities[i] (the current GPU, 0, where no device is named)."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: available)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: capabilities[
        0 if device is None else torch.device(device).index or 0])
    monkeypatch.setattr(torch.version, "hip", hip)


def test_no_usable_cuda_means_no_tf32_and_float16(monkeypatch: pytest.MonkeyPatch) -> None:
    """A build or machine without CUDA: whatever a capability query would say, no TF32."""
    _simulate_cuda(monkeypatch, available=False, capabilities=[(9, 0)])
    assert tf32_capable("cuda:0") is False and half_dtype("cuda:0") == torch.float16


def test_other_device_types_beside_an_nvidia_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """With an A100 present, the CPU still has no TF32 and an Apple GPU still gets float16."""
    _simulate_cuda(monkeypatch, available=True, capabilities=[(8, 0)])
    assert tf32_capable("cpu") is False and tf32_capable("mps") is False
    assert half_dtype("mps") == torch.float16 and half_dtype("cpu") == torch.bfloat16


def test_each_gpu_of_a_mixed_machine_is_asked_for_its_own_capability(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """cuda:0 a T4 (7.5), cuda:1 an A100 (8.0): the answer follows the GPU named."""
    _simulate_cuda(monkeypatch, available=True, capabilities=[(7, 5), (8, 0)])
    assert tf32_capable("cuda:0") is False and half_dtype("cuda:0") == torch.float16
    assert tf32_capable("cuda:1") is True and half_dtype("cuda:1") == torch.bfloat16


def test_an_amd_gpu_has_no_tf32_and_rocm_is_asked_for_bfloat16(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """ROCm (an MI300X reports capability 9.4): TF32 is NVIDIA's; bfloat16 is what PyTorch's
    own is_bf16_supported says, not read from the capability."""
    _simulate_cuda(monkeypatch, available=True, capabilities=[(9, 4)], hip="6.2")
    assert tf32_capable("cuda:0") is False
    native = torch.cuda.is_bf16_supported(including_emulation=False)
    assert half_dtype("cuda:0") == (torch.bfloat16 if native else torch.float16)
    assert native  # ROCm's answer on every AMD GPU PyTorch supports


def test_cpuinfo_with_a_byte_that_is_not_utf8_is_still_read(monkeypatch, tmp_path) -> None:
    """A /proc/cpuinfo whose model name holds a byte that is not UTF-8 still gives its flags."""
    import builtins
    import platform

    from course_utils import cpu_has_bf16

    monkeypatch.setattr(platform, "system", lambda: "Linux")
    fake = tmp_path / "cpuinfo"
    fake.write_bytes(b"model name : CPU \xff\nflags : avx2 avx512_bf16\n")
    real_open = builtins.open
    monkeypatch.setattr(builtins, "open", lambda path, *a, **k: real_open(
        fake if path == "/proc/cpuinfo" else path, *a, **k))
    assert cpu_has_bf16() is True

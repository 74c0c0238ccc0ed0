"""Floating-point precision: full FP32 pinned for honest comparisons, and the 16-bit type a device runs."""

from __future__ import annotations

import os

import torch

# Environment variables that make cuBLAS use TF32 whatever the Python setting says. (NVIDIA's
# own NVIDIA_TF32_OVERRIDE only ever switches TF32 off, with 0, so it is not among them.)
TF32_OVERRIDES = ("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE",)


def pin_fp32_precision() -> str:
    """Compute float32 matmuls and cuDNN convolutions in full FP32 (no TF32); describe the setting.

    PyTorch's default already keeps matmuls in full FP32, but cuDNN convolutions use TF32 on
    NVIDIA GPUs that have it (compute capability 8.0 and newer), and a container or a script
    may have changed either. Returns one line to print.
    """
    torch.set_float32_matmul_precision("highest")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    line = ("float32 precision: full FP32 for matmuls and cuDNN convolutions (TF32 off; "
            f"matmul precision {torch.get_float32_matmul_precision()!r})")
    forced = [f"{name}={os.environ[name]}" for name in TF32_OVERRIDES
              if os.environ.get(name, "").strip() not in ("", "0")]
    if forced:
        line += (f"; but {', '.join(forced)} is set, which can make cuBLAS use TF32 anyway: "
                 "unset it and restart the kernel for full-FP32 timings")
    return line


def tf32_capable(device: str | torch.device) -> bool:
    """Whether `device` has TF32 hardware: an NVIDIA GPU of compute capability 8.0 or newer."""
    dev = torch.device(device)
    if dev.type != "cuda" or not torch.cuda.is_available() or torch.version.hip:
        return False
    return torch.cuda.get_device_capability(dev) >= (8, 0)


def half_dtype(device: str | torch.device) -> torch.dtype:
    """The 16-bit float `device` runs natively: bfloat16 on CPUs and on GPUs that have it, else float16.

    A T4 (compute capability 7.5) or an older GPU only emulates bfloat16, slowly: float16 there.
    Apple GPUs get float16, which every MPS release supports.
    """
    dev = torch.device(device)
    if dev.type == "cpu":
        return torch.bfloat16
    if dev.type == "cuda" and torch.cuda.is_available():
        if torch.version.hip:  # AMD GPUs: ask ROCm
            native = torch.cuda.is_bf16_supported(including_emulation=False)
        else:  # NVIDIA: bfloat16 tensor cores from compute capability 8.0 (Ampere) on
            native = torch.cuda.get_device_capability(dev) >= (8, 0)
        return torch.bfloat16 if native else torch.float16
    return torch.float16


# CPU feature flags that give bfloat16 its own instructions (Linux /proc/cpuinfo names):
# x86 AVX512_BF16 and AMX, Arm's BF16 (in "Features"); macOS: sysctl hw.optional.arm.FEAT_BF16.
CPU_BF16_FLAGS = ("avx512_bf16", "amx_bf16", "bf16")


def cpu_has_bf16(cpuinfo: str | None = None) -> bool | None:
    """Whether this CPU has bfloat16 instructions (then a bfloat16 product can beat float32);
    None where the system does not say. `cpuinfo`: the text of /proc/cpuinfo (read if None)."""
    import platform
    import subprocess

    if cpuinfo is None and platform.system() == "Darwin":
        try:
            out = subprocess.run(["sysctl", "-n", "hw.optional.arm.FEAT_BF16"],
                                 capture_output=True, text=True, timeout=5).stdout.strip()
        except OSError:
            return None
        return out == "1" if out in ("0", "1") else None
    if cpuinfo is None:
        try:
            with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
                cpuinfo = f.read()
        except OSError:
            return None
    flags = {word for line in cpuinfo.splitlines()
             if line.split(":")[0].strip() in ("flags", "Features") for word in line.split()}
    if not flags:
        return None
    return any(flag in flags for flag in CPU_BF16_FLAGS)

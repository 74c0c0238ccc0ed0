"""Why is there no GPU? The common reasons PyTorch cannot use one here, each with its fix."""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import platform
import re
import shutil
import subprocess
from dataclasses import dataclass
from typing import NamedTuple

import torch

# The oldest NVIDIA driver each CUDA major version runs on (minor-version compatibility), from
# the CUDA Toolkit release notes, table "CUDA Toolkit and Minimum Required Driver Version".
MIN_DRIVER = {"Linux": {13: (580, 0), 12: (525, 60), 11: (450, 80)},
              "Windows": {13: (580, 0), 12: (528, 33), 11: (452, 39)}}
# The oldest macOS on which PyTorch's MPS backend works: 14.0 (Sonoma) for the releases the
# course supports, 2.9 on (PyTorch's MPS notes; 12.3 and then 13.0 for older releases).
MIN_MACOS = (14, 0)


class NvidiaGpu(NamedTuple):
    """One GPU as nvidia-smi lists it."""

    name: str
    driver: str
    compute_capability: str | None  # '8.6'; None where this nvidia-smi cannot say


@dataclass(frozen=True)
class GpuProbes:
    """What this machine and this PyTorch say about GPUs, gathered by probe_gpu()."""

    system: str  # platform.system(): 'Linux', 'Darwin', 'Windows'
    torch_cuda: str | None  # torch.version.cuda: None in a CPU-only (or ROCm) build
    torch_hip: str | None
    cuda_available: bool
    arch_list: tuple[str, ...]  # the GPU architectures this build has kernels for
    cuda_visible_devices: str | None  # the environment variable; None when it is not set
    nvidia_gpus: tuple[NvidiaGpu, ...] | None  # None: nvidia-smi is missing or failed
    mps_built: bool = False
    mps_available: bool = False
    mac_version: str | None = None  # '14.5' on macOS
    rosetta: bool = False  # an x86-64 Python translated by Rosetta on an Apple-silicon Mac
    accelerator: str | None = None  # torch.accelerator's device type, if any


class Finding(NamedTuple):
    """One reason PyTorch cannot use a GPU here, and what to do about it."""

    problem: str
    fix: str

    def __str__(self) -> str:
        return f"{self.problem}\n  fix: {self.fix}"


@functools.lru_cache(maxsize=1)  # one query per process: the GPUs do not change meanwhile
def _nvidia_smi() -> tuple[NvidiaGpu, ...] | None:
    """The GPUs nvidia-smi lists, or None where it is missing or fails (no driver)."""
    if (exe := shutil.which("nvidia-smi")) is None:
        return None
    for fields in ("name,driver_version,compute_cap", "name,driver_version"):
        try:
            done = subprocess.run([exe, f"--query-gpu={fields}", "--format=csv,noheader"],
                                  capture_output=True, text=True, timeout=20)
        except (OSError, subprocess.TimeoutExpired):
            return None
        if done.returncode == 0:
            rows = [[part.strip() for part in line.split(",")]
                    for line in done.stdout.strip().splitlines()]
            return tuple(NvidiaGpu(r[0], r[1], r[2] if len(r) > 2 else None) for r in rows)
    return None


def probe_gpu() -> GpuProbes:
    """Gather what diagnose_gpu() needs from this machine: nvidia-smi, torch, the environment."""
    system = platform.system()
    on_mac = system == "Darwin"
    rosetta = False
    if on_mac and platform.machine() == "x86_64":  # an x86-64 Python: translated by Rosetta?
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            rosetta = subprocess.run(["sysctl", "-n", "sysctl.proc_translated"], text=True,
                                     capture_output=True, timeout=10).stdout.strip() == "1"
    acc = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else None
    return GpuProbes(
        system=system, torch_cuda=torch.version.cuda, torch_hip=getattr(torch.version, "hip", None),
        cuda_available=torch.cuda.is_available(), arch_list=tuple(torch.cuda.get_arch_list()),
        cuda_visible_devices=os.environ.get("CUDA_VISIBLE_DEVICES"),
        nvidia_gpus=None if on_mac else _nvidia_smi(),
        mps_built=torch.backends.mps.is_built(), mps_available=torch.backends.mps.is_available(),
        mac_version=(platform.mac_ver()[0] or None) if on_mac else None, rosetta=rosetta,
        accelerator=None if acc is None else acc.type)


def _version(text: str) -> tuple[int, ...]:
    """'525.60.13' -> (525, 60, 13); non-numbers stop the tuple."""
    return tuple(int(part) for part in itertools.takewhile(str.isdigit, text.split(".")))


def diagnose_gpu(probes: GpuProbes | None = None) -> list[Finding]:
    """Why PyTorch cannot use a GPU here, with fixes ([] if nothing is); probes: probe_gpu()."""
    p = probe_gpu() if probes is None else probes
    smi = p.nvidia_gpus
    found: list[Finding] = []
    build = f"torch {torch.__version__}" if probes is None else "this torch"
    if p.cuda_visible_devices is not None and p.cuda_visible_devices.strip() in ("", "-1"):
        return [Finding(
            f"CUDA_VISIBLE_DEVICES={p.cuda_visible_devices!r} hides every GPU from this process.",
            "unset it (or set it to the GPUs to use, e.g. 0) where the kernel or script starts, "
            "then restart the kernel: CUDA reads the variable when it starts.")]
    if smi and not p.torch_cuda and not p.torch_hip:
        found.append(Finding(
            f"nvidia-smi sees {len(smi)} NVIDIA GPU(s) ({', '.join(sorted({g.name for g in smi}))}"
            f", driver {smi[0].driver}), but {build} is a CPU-only build.",
            "install a CUDA build of PyTorch: pick it at https://pytorch.org/get-started/locally/ "
            "(pip install torch --index-url https://download.pytorch.org/whl/cuXYZ, with a CUDA "
            "version your driver supports), then restart the kernel."))
    if p.torch_cuda and smi:
        need = MIN_DRIVER.get(p.system, MIN_DRIVER["Linux"]).get(_version(p.torch_cuda)[0])
        have = _version(smi[0].driver)
        if need and have and have < need:
            found.append(Finding(
                f"{build} is built for CUDA {p.torch_cuda}, which needs NVIDIA driver "
                f"{'.'.join(map(str, need))} or newer; this machine has {smi[0].driver}.",
                "update the NVIDIA driver, or install a PyTorch built for an older CUDA that your "
                "driver supports (nvidia-smi shows the newest CUDA version it can run)."))
        oldest = min((divmod(int(m[1]), 10) for a in p.arch_list  # 'sm_75' -> (7, 5)
                      if (m := re.fullmatch(r"sm_(\d+)a?", a))), default=None)
        for gpu in smi:
            if oldest and len(cc := _version(gpu.compute_capability or "")) == 2 and cc < oldest:
                found.append(Finding(
                    f"{gpu.name} has compute capability {gpu.compute_capability}, older than any "
                    f"this build has kernels for (oldest: {oldest[0]}.{oldest[1]}, CUDA "
                    f"{p.torch_cuda}).",
                    "install a PyTorch built for an older CUDA that still supports this GPU "
                    "(the CUDA 12 builds go back further than CUDA 13's), or use a newer GPU."))
                break
    if p.torch_cuda and smi is None and not p.cuda_available and p.system != "Darwin":
        found.append(Finding(
            f"{build} is a CUDA build, but no NVIDIA driver answers (nvidia-smi is missing or "
            "failed): this machine has no NVIDIA GPU, or its driver is not installed.",
            "on a machine with an NVIDIA GPU, install its driver (then `nvidia-smi` lists the "
            "GPU); without one, the course runs on the CPU."))
    if p.system == "Darwin" and p.rosetta:
        found.append(Finding(
            "This Python is an x86-64 (Intel) build running under Rosetta on an Apple-silicon "
            "Mac, and PyTorch for x86-64 has no MPS backend.",
            "install an arm64 (Apple-silicon) Python, e.g. from python.org or Homebrew, make a "
            "new virtual environment with it and install the course again."))
    elif p.system == "Darwin" and not p.mps_built:
        found.append(Finding(
            f"{build} was built without MPS, Apple's GPU backend.",
            "on an Apple-silicon Mac, install PyTorch's macOS arm64 build (a plain pip install "
            "torch in an arm64 Python); on an Intel Mac the course runs on the CPU."))
    elif p.system == "Darwin" and not p.mps_available:
        if (version := _version(p.mac_version or "")) and version < MIN_MACOS:
            found.append(Finding(f"MPS needs macOS {MIN_MACOS[0]}.{MIN_MACOS[1]} or newer; this "
                                 f"Mac runs macOS {p.mac_version}.",
                                 "update macOS, then restart the kernel."))
        else:
            found.append(Finding(
                "PyTorch has MPS, but torch.backends.mps.is_available() is False on this Mac.",
                "MPS needs an Apple-silicon Mac (M1 or later) or a Metal GPU; on an Intel Mac "
                "without one, the course runs on the CPU."))
    if (not found and p.accelerator is None and not p.cuda_available and not p.mps_available
            and p.system != "Darwin"):
        found.append(Finding(
            "No GPU here: no NVIDIA driver answers (nvidia-smi is missing) and PyTorch finds no "
            "other accelerator.",
            "nothing to fix for the course: every notebook runs on the CPU. For a GPU, use a "
            "machine that has one, or a hosted notebook (README.md, 'Run on a hosted GPU')."))
    return found

"""diagnose_gpu's findings word for word, and the probes read from simulated tools.

A finding is what a student reads when no GPU is found: its problem and its fix are checked
whole here (test_gpu_check.py checks which finding each situation gives).
"""

from __future__ import annotations

import platform
import subprocess
from pathlib import Path

import pytest
import torch

import course_utils.gpu_check as gpu_check
from course_utils import diagnose_gpu
from course_utils.gpu_check import Finding, NvidiaGpu, probe_gpu
from tests.test_gpu_check import LINUX_CPU_ONLY, MAC, probes

CPU_BUILD_FIX = ("install a CUDA build of PyTorch: pick it at "
                 "https://pytorch.org/get-started/locally/ (pip install torch --index-url "
                 "https://download.pytorch.org/whl/cuXYZ, with a CUDA version your driver "
                 "supports), then restart the kernel.")
DRIVER_FIX = ("update the NVIDIA driver, or install a PyTorch built for an older CUDA that your "
              "driver supports (nvidia-smi shows the newest CUDA version it can run).")
OLD_GPU_FIX = ("install a PyTorch built for an older CUDA that still supports this GPU (the "
               "CUDA 12 builds go back further than CUDA 13's), or use a newer GPU.")


def test_cpu_build_names_each_gpu_model_once_sorted_and_the_first_driver() -> None:
    """Three GPUs of two models: counted 3, each name once in sorted order."""
    gpus = (NvidiaGpu("B", "570.86.10", "8.6"), NvidiaGpu("A", "570.86.10", "8.6"),
            NvidiaGpu("B", "570.86.10", "8.6"))
    p = probes(torch_cuda=None, cuda_available=False, arch_list=(), accelerator=None,
               nvidia_gpus=gpus)
    assert diagnose_gpu(p) == [Finding(
        "nvidia-smi sees 3 NVIDIA GPU(s) (A, B, driver 570.86.10), but this torch is a "
        "CPU-only build.", CPU_BUILD_FIX)]


def test_a_rocm_build_is_not_called_cpu_only() -> None:
    """A HIP (ROCm) build beside an NVIDIA driver is not a CPU-only build."""
    p = probes(torch_cuda=None, torch_hip="6.2", cuda_available=False, arch_list=(),
               nvidia_gpus=(NvidiaGpu("NVIDIA T4", "570.86.10", "7.5"),))
    assert diagnose_gpu(p) == []


def test_old_driver_and_old_gpu_word_for_word() -> None:
    """CUDA 12.6 needs driver 525.60 (the release notes' table); a 6.1 GPU is older than the
    build's oldest kernels (sm_75 -> 7.5). Only the first too-old GPU is reported."""
    p = probes(torch_cuda="12.6", nvidia_gpus=(NvidiaGpu("X", "520.61.05", "6.1"),
                                               NvidiaGpu("Y", "520.61.05", "5.0")))
    assert diagnose_gpu(p) == [
        Finding("this torch is built for CUDA 12.6, which needs NVIDIA driver 525.60 or newer; "
                "this machine has 520.61.05.", DRIVER_FIX),
        Finding("X has compute capability 6.1, older than any this build has kernels for "
                "(oldest: 7.5, CUDA 12.6).", OLD_GPU_FIX)]


@pytest.mark.parametrize("system,driver,too_old", [
    ("Linux", "525.59", True), ("Linux", "525.60", False), ("Windows", "528.32", True),
    ("Windows", "528.33", False), ("FreeBSD", "525.59", True), ("FreeBSD", "525.60", False),
])
def test_driver_minimum_at_its_exact_version(system: str, driver: str, too_old: bool) -> None:
    """CUDA 12: Linux needs 525.60, Windows 528.33, other systems are judged as Linux."""
    p = probes(system=system, torch_cuda="12.4", nvidia_gpus=(NvidiaGpu("G", driver, "8.0"),))
    assert [f.fix for f in diagnose_gpu(p)] == ([DRIVER_FIX] if too_old else [])


def test_a_cuda_version_without_a_known_minimum_is_not_judged() -> None:
    """CUDA 10 is not in the table: no driver verdict, however old the driver."""
    p = probes(torch_cuda="10.2", nvidia_gpus=(NvidiaGpu("G", "400.1", "8.0"),))
    assert diagnose_gpu(p) == []


def test_an_unreadable_driver_version_is_not_judged() -> None:
    """A driver string with no leading number gives no verdict (not a crash)."""
    p = probes(nvidia_gpus=(NvidiaGpu("G", "N/A", "9.0"),))
    assert diagnose_gpu(p) == []


@pytest.mark.parametrize("archs,cc,too_old", [
    (("sm_90a", "sm_100"), "8.9", True),  # sm_90a: 9.0 with the 'a' features
    (("sm_90a", "sm_100"), "9.0", False),
    (("compute_120", "sm_100"), "9.0", True),  # PTX entries do not count as kernels
    (("sm_100",), "10.0", False),
    (("compute_120",), "3.0", False),  # no sm_ entry: nothing to compare with
])
def test_oldest_kernel_architecture(archs: tuple[str, ...], cc: str, too_old: bool) -> None:
    """The oldest sm_XY (or sm_XYa) entry of the arch list sets the oldest supported GPU."""
    p = probes(arch_list=archs, nvidia_gpus=(NvidiaGpu("G", "580.95.05", cc),))
    assert [f.fix for f in diagnose_gpu(p)] == ([OLD_GPU_FIX] if too_old else [])


@pytest.mark.parametrize("cc", [None, "", "Unknown", "9"])
def test_an_unknown_compute_capability_is_not_judged(cc: str | None) -> None:
    """Where nvidia-smi cannot give a major.minor capability, no GPU is called too old."""
    p = probes(nvidia_gpus=(NvidiaGpu("G", "580.95.05", cc),))
    assert diagnose_gpu(p) == []


def test_hidden_gpus_word_for_word_and_nothing_else() -> None:
    """CUDA_VISIBLE_DEVICES=' -1 ' (spaces around) hides the GPUs; no other finding follows."""
    p = probes(LINUX_CPU_ONLY, cuda_visible_devices=" -1 ")
    assert diagnose_gpu(p) == [Finding(
        "CUDA_VISIBLE_DEVICES=' -1 ' hides every GPU from this process.",
        "unset it (or set it to the GPUs to use, e.g. 0) where the kernel or script starts, "
        "then restart the kernel: CUDA reads the variable when it starts.")]


def test_cuda_build_without_a_driver_word_for_word() -> None:
    """A CUDA build, no nvidia-smi answer, CUDA unavailable: the driver is missing."""
    p = probes(cuda_available=False, accelerator=None, nvidia_gpus=None)
    assert diagnose_gpu(p) == [Finding(
        "this torch is a CUDA build, but no NVIDIA driver answers (nvidia-smi is missing or "
        "failed): this machine has no NVIDIA GPU, or its driver is not installed.",
        "on a machine with an NVIDIA GPU, install its driver (then `nvidia-smi` lists the "
        "GPU); without one, the course runs on the CPU.")]


def test_cuda_build_that_works_without_nvidia_smi_is_fine() -> None:
    """nvidia-smi missing but CUDA available (a container without the tool): no finding."""
    assert diagnose_gpu(probes(nvidia_gpus=None)) == []


def test_mac_findings_word_for_word() -> None:
    """Rosetta first, then a build without MPS, then an old macOS, then MPS unavailable."""
    assert diagnose_gpu(probes(MAC, rosetta=True, mps_built=False)) == [Finding(
        "This Python is an x86-64 (Intel) build running under Rosetta on an Apple-silicon "
        "Mac, and PyTorch for x86-64 has no MPS backend.",
        "install an arm64 (Apple-silicon) Python, e.g. from python.org or Homebrew, make a new "
        "virtual environment with it and install the course again.")]
    assert diagnose_gpu(probes(MAC, mps_built=False, mps_available=False)) == [Finding(
        "this torch was built without MPS, Apple's GPU backend.",
        "on an Apple-silicon Mac, install PyTorch's macOS arm64 build (a plain pip install "
        "torch in an arm64 Python); on an Intel Mac the course runs on the CPU.")]
    assert diagnose_gpu(probes(MAC, mps_available=False, mac_version="13.6.1")) == [Finding(
        "MPS needs macOS 14.0 or newer; this Mac runs macOS 13.6.1.",
        "update macOS, then restart the kernel.")]
    unavailable = Finding(
        "PyTorch has MPS, but torch.backends.mps.is_available() is False on this Mac.",
        "MPS needs an Apple-silicon Mac (M1 or later) or a Metal GPU; on an Intel Mac without "
        "one, the course runs on the CPU.")
    assert diagnose_gpu(probes(MAC, mps_available=False, mac_version="14.0")) == [unavailable]
    assert diagnose_gpu(probes(MAC, mps_available=False, mac_version=None)) == [unavailable]


def test_rosetta_is_only_a_mac_finding() -> None:
    """A rosetta flag (impossible off macOS) does not make a Linux GPU machine faulty."""
    assert diagnose_gpu(probes(rosetta=True)) == []


def test_a_mac_without_mps_is_not_told_about_nvidia() -> None:
    """A CUDA build on macOS with no nvidia-smi answer gets the MPS finding, not the driver."""
    p = probes(MAC, torch_cuda="12.4", mps_built=False, mps_available=False, accelerator=None)
    assert [f.problem for f in diagnose_gpu(p)] == [
        "this torch was built without MPS, Apple's GPU backend."]


def test_no_gpu_at_all_word_for_word() -> None:
    """A CPU-only build on a machine without NVIDIA: nothing to fix, the CPU is used."""
    assert diagnose_gpu(LINUX_CPU_ONLY) == [Finding(
        "No GPU here: no NVIDIA driver answers (nvidia-smi is missing) and PyTorch finds no "
        "other accelerator.",
        "nothing to fix for the course: every notebook runs on the CPU. For a GPU, use a "
        "machine that has one, or a hosted notebook (README.md, 'Run on a hosted GPU').")]
    assert str(diagnose_gpu(LINUX_CPU_ONLY)[0]).startswith("No GPU here: ")
    assert "\n  fix: nothing to fix" in str(diagnose_gpu(LINUX_CPU_ONLY)[0])


@pytest.mark.parametrize("changes", [{"accelerator": "xpu"}, {"cuda_available": True},
                                     {"mps_available": True}])
def test_another_accelerator_is_a_gpu(changes: dict[str, object]) -> None:
    """An XPU, a working CUDA or MPS means there is a GPU: no 'No GPU here'."""
    assert diagnose_gpu(probes(LINUX_CPU_ONLY, **changes)) == []


def test_default_probes_name_this_torch_version(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without probes given, the machine is probed and findings name torch's version."""
    p = probes(torch_cuda="12.6", nvidia_gpus=(NvidiaGpu("G", "520.61.05", "8.0"),))
    monkeypatch.setattr(gpu_check, "probe_gpu", lambda: p)
    assert diagnose_gpu()[0].problem.startswith(f"torch {torch.__version__} is built for CUDA")


def _fake_smi(tmp_path: Path, script: str) -> None:
    fake = tmp_path / "nvidia-smi"
    fake.write_text("#!/bin/sh\n" + script)
    fake.chmod(0o755)


@pytest.fixture()
def smi_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """PATH holding only a folder for a stand-in nvidia-smi; its cached answer cleared."""
    monkeypatch.setenv("PATH", str(tmp_path))
    gpu_check._nvidia_smi.cache_clear()
    yield tmp_path
    gpu_check._nvidia_smi.cache_clear()


def test_an_older_nvidia_smi_without_compute_cap_is_asked_again(smi_path: Path) -> None:
    """An nvidia-smi that refuses the compute_cap field is asked for name and driver only."""
    _fake_smi(smi_path, 'case "$1" in *compute_cap*) exit 2;; esac\n'
                        "echo 'Tesla K80, 470.82.01'\necho 'Tesla P100, 470.82.01'\n")
    assert gpu_check._nvidia_smi() == (NvidiaGpu("Tesla K80", "470.82.01", None),
                                       NvidiaGpu("Tesla P100", "470.82.01", None))


def test_a_failing_or_missing_nvidia_smi_means_no_driver(smi_path: Path) -> None:
    """nvidia-smi failing both queries (no driver loaded), or missing: None."""
    assert gpu_check._nvidia_smi() is None  # missing
    gpu_check._nvidia_smi.cache_clear()
    _fake_smi(smi_path, "echo 'NVIDIA-SMI has failed'\nexit 9\n")
    assert gpu_check._nvidia_smi() is None


def test_nvidia_smi_is_asked_with_the_documented_query(smi_path: Path) -> None:
    """The query names the fields and asks for CSV without a header."""
    _fake_smi(smi_path, '[ "$1" = "--query-gpu=name,driver_version,compute_cap" ] && '
                        '[ "$2" = "--format=csv,noheader" ] && echo "G, 580.1, 9.0" && exit 0\n'
                        "exit 1\n")
    assert gpu_check._nvidia_smi() == (NvidiaGpu("G", "580.1", "9.0"),)


def test_a_hung_nvidia_smi_counts_as_missing(monkeypatch: pytest.MonkeyPatch,
                                             smi_path: Path) -> None:
    """An nvidia-smi that does not answer in time (a wedged driver) gives None, not a hang."""
    _fake_smi(smi_path, "exit 0\n")
    seen: list[float] = []

    def timing_out(cmd: list[str], **kwargs: object) -> None:
        seen.append(kwargs["timeout"])  # type: ignore[arg-type]
        raise subprocess.TimeoutExpired(cmd, 20)

    monkeypatch.setattr(gpu_check.subprocess, "run", timing_out)
    assert gpu_check._nvidia_smi() is None and seen == [20]


def test_probes_on_an_intel_python_on_a_mac(monkeypatch: pytest.MonkeyPatch) -> None:
    """On macOS, x86-64 Python: sysctl says whether Rosetta translates it; macOS's version is
    read; nvidia-smi is not asked (Macs have no NVIDIA driver)."""
    asked: list[list[str]] = []

    class Done:
        def __init__(self, text: bool) -> None:
            self.stdout = "1\n" if text else b"1\n"  # as subprocess.run returns it

    def run(cmd: list[str], **kwargs: object) -> Done:
        asked.append(cmd)
        return Done(kwargs.get("text") is True)

    monkeypatch.setattr(platform, "system", lambda: "Darwin")
    monkeypatch.setattr(platform, "machine", lambda: "x86_64")
    monkeypatch.setattr(platform, "mac_ver", lambda: ("13.6.1", ("", "", ""), "x86_64"))
    monkeypatch.setattr(gpu_check.subprocess, "run", run)
    monkeypatch.setattr(gpu_check, "_nvidia_smi", lambda: pytest.fail("nvidia-smi asked"))
    p = probe_gpu()
    assert asked == [["sysctl", "-n", "sysctl.proc_translated"]]
    assert p.system == "Darwin" and p.rosetta is True and p.mac_version == "13.6.1"
    assert p.nvidia_gpus is None


@pytest.mark.parametrize("machine,answer,rosetta", [("x86_64", "0\n", False),
                                                    ("arm64", "1\n", False)])
def test_no_rosetta_for_native_pythons(monkeypatch: pytest.MonkeyPatch, machine: str,
                                       answer: str, rosetta: bool) -> None:
    """sysctl answering 0, or an arm64 Python (not asked at all): no Rosetta; an empty macOS
    version is None."""

    class Done:
        stdout = answer

    monkeypatch.setattr(platform, "system", lambda: "Darwin")
    monkeypatch.setattr(platform, "machine", lambda: machine)
    monkeypatch.setattr(platform, "mac_ver", lambda: ("", ("", "", ""), machine))
    monkeypatch.setattr(gpu_check.subprocess, "run", lambda cmd, **kw: Done())
    p = probe_gpu()
    assert p.rosetta is rosetta and p.mac_version is None


def test_probes_off_a_mac(monkeypatch: pytest.MonkeyPatch) -> None:
    """On Linux: no sysctl, no macOS version, nvidia-smi's answer kept, the accelerator's type
    recorded."""
    gpus = (NvidiaGpu("G", "580.1", "9.0"),)
    monkeypatch.setattr(platform, "system", lambda: "Linux")
    monkeypatch.setattr(platform, "machine", lambda: "x86_64")
    monkeypatch.setattr(gpu_check.subprocess, "run", lambda *a, **k: pytest.fail("sysctl run"))
    monkeypatch.setattr(gpu_check, "_nvidia_smi", lambda: gpus)
    monkeypatch.setattr(torch.accelerator, "is_available", lambda: True)
    monkeypatch.setattr(torch.accelerator, "current_accelerator", lambda: torch.device("xpu"))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
    monkeypatch.setattr(torch.version, "hip", "6.2", raising=False)  # as on a ROCm build
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: True)
    p = probe_gpu()
    assert p.system == "Linux" and p.rosetta is False and p.mac_version is None
    assert p.nvidia_gpus == gpus and p.accelerator == "xpu" and p.cuda_visible_devices == "1"
    assert p.torch_hip == "6.2" and p.mps_available is True  # read from torch, not assumed
    monkeypatch.setattr(torch.accelerator, "is_available", lambda: False)
    assert probe_gpu().accelerator is None


def test_findings_print_problem_then_fix() -> None:
    """str(finding): the problem, then the fix on an indented line."""
    assert str(Finding("p", "f")) == "p\n  fix: f"


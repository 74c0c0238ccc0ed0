"""pick_device, synchronize, device_report and device_report_text against PyTorch's own answers."""

from __future__ import annotations

import os
import platform

import pytest
import torch

from course_utils import available_devices, device_report, device_report_text, pick_device, synchronize

HAS_ACCEL = torch.accelerator.is_available()


def test_default_is_best_available() -> None:
    device = pick_device()
    if HAS_ACCEL:
        assert device.type == torch.accelerator.current_accelerator().type
        assert device.index == torch.accelerator.current_device_index()
    else:
        assert device == torch.device("cpu")


@pytest.mark.parametrize("prefer", ["cpu", "CPU", " cpu ", torch.device("cpu")])
def test_cpu_always_available(prefer: str | torch.device) -> None:
    assert pick_device(prefer) == torch.device("cpu")


def test_meta_device_available() -> None:
    assert pick_device("meta").type == "meta"


@pytest.mark.parametrize("bad", ["", "gpu", "cuda:x", "cuda:-1", "cuda:0:1", "cpu 0", "cude"])
def test_malformed_strings_raise_value_error(bad: str) -> None:
    with pytest.raises(ValueError, match="device"):
        pick_device(bad)


@pytest.mark.parametrize("bad", [0, 1.5, ["cpu"]])
def test_wrong_type_raises_type_error(bad: object) -> None:
    with pytest.raises(TypeError) as info:
        pick_device(bad)  # type: ignore[arg-type]
    assert str(info.value) == ("pick_device expects None, a string such as 'cuda:0', or a "
                               f"torch.device; got {type(bad).__name__}.")


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message on a machine without CUDA")
@pytest.mark.parametrize("absent", ["cuda", "cuda:1", torch.device("cuda", 3)])
def test_absent_device_error_says_what_and_what_to_do(absent: str | torch.device) -> None:
    with pytest.raises(RuntimeError) as info:
        pick_device(absent)
    message = str(info.value)
    assert "cuda" in message  # what was asked
    assert "cpu" in message  # what exists
    assert "pick_device()" in message  # what to do


def test_index_past_the_last_device_raises() -> None:
    count = torch.accelerator.device_count() if HAS_ACCEL else 0
    kind = torch.accelerator.current_accelerator().type if HAS_ACCEL else "cuda"
    with pytest.raises(RuntimeError, match="only"):
        pick_device(f"{kind}:{count + 7}")


def test_available_devices_lists_cpu_and_accelerators() -> None:
    found = available_devices()
    assert found[0] == "cpu"
    assert len(found) == 1 + (torch.accelerator.device_count() if HAS_ACCEL else 0)
    for name in found:
        assert pick_device(name) == torch.device(name)


@pytest.mark.parametrize("device", [None, "cpu", "meta", "cuda", "cuda:0", "mps", torch.device("cpu")])
def test_synchronize_never_raises(device: str | torch.device | None) -> None:
    synchronize(device)


def test_device_report_cpu_matches_torch() -> None:
    report = device_report("cpu")
    assert report["torch"] == torch.__version__
    assert report["device"] == "cpu" and report["device_type"] == "cpu"
    assert report["torch_threads"] == torch.get_num_threads()
    assert report["cpu_logical_cores"] >= 1
    assert report["cuda"] == torch.version.cuda
    assert report["accelerator_count"] == (torch.accelerator.device_count() if HAS_ACCEL else 0)
    assert report["device_name"] == report["cpu_model"]
    assert report["accelerator"] == (
        torch.accelerator.current_accelerator().type if HAS_ACCEL else None)
    assert set(report) == {  # the keys the notebooks and the recordings read, and no others
        "torch", "device", "device_type", "device_name", "accelerator", "accelerator_count",
        "cuda", "cudnn", "hip", "memory_total_bytes", "compute_capability", "multiprocessors",
        "cpu_model", "cpu_logical_cores", "torch_threads", "python", "gpu_check"}
    assert report["cudnn"] == (torch.backends.cudnn.version()
                               if torch.backends.cudnn.is_available() else None)


def test_device_report_names_a_rocm_build(monkeypatch: pytest.MonkeyPatch) -> None:
    """A ROCm build of PyTorch says so in torch.version.hip; the report carries it."""
    monkeypatch.setattr(torch.version, "hip", "6.2.41133", raising=False)
    assert device_report("cpu")["hip"] == "6.2.41133"


def test_device_report_text_lists_every_key() -> None:
    report = device_report("cpu")
    text = device_report_text(report)
    keys = [line.split(" : ")[0].strip() for line in text.splitlines() if not line.startswith(" ")]
    assert keys == list(report)  # one line per key; list items continue on indented lines
    assert device_report_text({"a": ["x\ny", "z"]}) == "a : x\n    y\n    z"
    assert "torch" in text and torch.__version__ in text
    assert "GiB" in device_report_text({"memory_total_bytes": 3 * 2**30})
    with pytest.raises(TypeError):
        device_report_text("not a report")  # type: ignore[arg-type]


@pytest.mark.gpu
def test_cuda_report_matches_device_properties() -> None:
    device = pick_device("cuda")
    props = torch.cuda.get_device_properties(device)
    report = device_report(device)
    assert report["device_name"] == props.name
    assert report["memory_total_bytes"] == props.total_memory
    assert report["multiprocessors"] == props.multi_processor_count
    assert report["compute_capability"] == f"{props.major}.{props.minor}"
    assert report["cudnn"] == torch.backends.cudnn.version()


@pytest.mark.gpu
def test_cuda_synchronize_waits_for_queued_work() -> None:
    device = pick_device("cuda")
    x = torch.randn(2048, 2048, device=device)
    for _ in range(20):
        x = x @ x / 2048
    synchronize(device)
    assert torch.cuda.current_stream(device).query()  # nothing left in the queue


def test_unindexed_accelerator_gets_the_current_index(monkeypatch: pytest.MonkeyPatch) -> None:
    # Simulate a machine with two CUDA devices whose current one is cuda:1.
    import course_utils.devices as devices

    monkeypatch.setattr(devices, "_type_count", lambda t: 2 if t in ("cuda", "mps") else 1)
    monkeypatch.setattr(devices, "_best_device", lambda: torch.device("cuda", 1))
    assert pick_device("cuda") == torch.device("cuda", 1)  # the current GPU, named
    assert pick_device("cuda:0") == torch.device("cuda", 0)  # an explicit index is kept
    assert pick_device("mps") == torch.device("mps", 0)  # another type: its first device
    assert pick_device() == torch.device("cuda", 1)
    with pytest.raises(RuntimeError, match="only"):
        pick_device("cuda:2")


def test_device_report_text_writes_the_values() -> None:
    text = device_report_text({"memory_total_bytes": 3 * 2**30 + 2**29, "cuda": None,
                               "python": "3.12.1", "gpu_check": []})
    assert text.splitlines() == ["memory_total_bytes : 3.5 GiB", "cuda               : -",
                                 "python             : 3.12.1", "gpu_check          : -"]
    report = device_report("cpu")
    assert report["cpu_logical_cores"] == os.cpu_count()
    assert report["python"] == platform.python_version()
    assert report["memory_total_bytes"] is None and report["multiprocessors"] is None
    line = next(ln for ln in device_report_text(report).splitlines()
                if ln.startswith("torch_threads"))
    assert line.split(" : ")[1] == str(torch.get_num_threads())


def _simulate(monkeypatch: pytest.MonkeyPatch, kind: str | None, count: int = 0,
              current: int = 0) -> list:
    """A simulated machine: `count` accelerators of type `kind` (None: none), `current` the
    current one. Returns the list of the devices torch.accelerator.synchronize was called with."""
    synced: list = []
    monkeypatch.setattr(torch.accelerator, "is_available", lambda: kind is not None)
    monkeypatch.setattr(torch.accelerator, "current_accelerator",
                        lambda *a, **k: torch.device(kind) if kind else None)
    monkeypatch.setattr(torch.accelerator, "current_device_index", lambda: current)
    monkeypatch.setattr(torch.accelerator, "device_count", lambda: count)
    monkeypatch.setattr(torch.accelerator, "synchronize", lambda device=None: synced.append(device))
    return synced


def test_a_machine_with_two_gpus(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two CUDA GPUs, cuda:1 current: both listed, the current one taken by default, a third
    refused with the list; one CPU device only."""
    _simulate(monkeypatch, "cuda", count=2, current=1)
    assert available_devices() == ["cpu", "cuda:0", "cuda:1"]
    assert pick_device() == pick_device("cuda") == torch.device("cuda", 1)
    assert pick_device("cuda:0") == torch.device("cuda", 0)
    assert pick_device("meta") == torch.device("meta")  # no index for meta
    with pytest.raises(RuntimeError) as info:
        pick_device("mps")
    assert str(info.value) == (
        "Asked for device 'mps', but this machine has only: cpu, cuda:0, cuda:1. Pass "
        "DEVICE=None (or call pick_device()) to take the best one available, or name one from "
        "that list.")
    for absent in ("cuda:2", "cpu:1"):
        with pytest.raises(RuntimeError, match=r"^Asked for device '(cuda:2|cpu:1)', but"):
            pick_device(absent)


def test_synchronize_waits_on_the_accelerator_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """synchronize asks torch.accelerator to wait for the current or the named GPU, and leaves
    it alone for the CPU, meta and a type the machine lacks; without an accelerator, never."""
    synced = _simulate(monkeypatch, "cuda", count=2, current=1)
    for device in (None, "cuda:1", torch.device("cuda", 0), "cpu", "meta", "mps"):
        synchronize(device)
    assert synced == [None, torch.device("cuda", 1), torch.device("cuda", 0)]
    synced = _simulate(monkeypatch, "cuda", count=1)  # the usual case: one GPU
    synchronize("cuda:0")
    assert synced == [torch.device("cuda", 0)]
    synced = _simulate(monkeypatch, None)
    for device in (None, "cpu", "cuda"):
        synchronize(device)
    assert synced == []


def test_device_report_of_a_simulated_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """A CUDA GPU: its name, memory, capability and multiprocessors from its properties; the
    accelerator and how many; cuDNN's version; the GPU check's findings as text."""
    from types import SimpleNamespace

    import course_utils.devices as devices

    _simulate(monkeypatch, "cuda", count=2, current=0)
    props = SimpleNamespace(name="NVIDIA H200", total_memory=150_000_000_000, major=9, minor=0,
                            multi_processor_count=132)
    asked: list = []
    monkeypatch.setattr(torch.cuda, "get_device_properties",
                        lambda device=None: asked.append(device) or props)
    monkeypatch.setattr(torch.backends.cudnn, "is_available", lambda: True)
    monkeypatch.setattr(torch.backends.cudnn, "version", lambda: 91002)
    monkeypatch.setattr(devices, "diagnose_gpu", lambda: ["a finding: its fix"])
    report = device_report("cuda:1")
    assert {k: report[k] for k in ("device", "device_type", "device_name", "accelerator",
                                   "accelerator_count", "cudnn", "memory_total_bytes",
                                   "compute_capability", "multiprocessors", "gpu_check")} == {
        "device": "cuda:1", "device_type": "cuda", "device_name": "NVIDIA H200",
        "accelerator": "cuda", "accelerator_count": 2, "cudnn": 91002,
        "memory_total_bytes": 150_000_000_000, "compute_capability": "9.0",
        "multiprocessors": 132, "gpu_check": ["a finding: its fix"]}
    assert asked == [torch.device("cuda", 1)]  # the named GPU's properties, not the current's


def test_device_report_of_an_apple_gpu_and_another_type(monkeypatch: pytest.MonkeyPatch) -> None:
    """MPS: named after the machine, memory as torch.mps recommends; another accelerator
    type: its device string stands for its name. Without a finding the check says so."""
    import course_utils.devices as devices

    monkeypatch.setattr(devices, "diagnose_gpu", lambda: [])
    monkeypatch.setattr(platform, "machine", lambda: "arm64")
    monkeypatch.setattr(torch.mps, "recommended_max_memory", lambda: 24 * 2**30)
    _simulate(monkeypatch, "mps", count=1)
    report = device_report()
    assert (report["device"], report["device_name"], report["memory_total_bytes"]) == (
        "mps:0", "Apple GPU (MPS) on arm64", 24 * 2**30)
    assert report["accelerator"] == "mps" and report["gpu_check"] == ["no problem found"]
    assert report["compute_capability"] is None and report["multiprocessors"] is None
    _simulate(monkeypatch, "xpu", count=1)
    report = device_report()
    assert (report["device_name"], report["memory_total_bytes"]) == ("xpu:0", None)


def test_the_cpu_model_comes_from_cpuinfo_else_from_platform(
        monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    """The "model name" line of /proc/cpuinfo, a colon in the name kept; without one (many Arm
    machines) or without the file, what platform says, else "unknown CPU"."""
    import builtins

    import course_utils.devices as devices

    monkeypatch.setattr(devices, "diagnose_gpu", lambda: [])
    _simulate(monkeypatch, None)
    fake = tmp_path / "cpuinfo"
    real_open = builtins.open
    monkeypatch.setattr(builtins, "open", lambda path, *a, **k: real_open(
        fake if path == "/proc/cpuinfo" else path, *a, **k))
    monkeypatch.setattr(platform, "processor", lambda: "")
    monkeypatch.setattr(platform, "machine", lambda: "aarch64")
    fake.write_text("processor\t: 0\nModel Name\t: Xeon: Gold 6430\nflags\t: fpu\n")
    report = device_report("cpu")
    assert report["cpu_model"] == report["device_name"] == "Xeon: Gold 6430"
    fake.write_text("processor\t: 0\nFeatures\t: fp asimd\n")
    assert device_report("cpu")["cpu_model"] == "aarch64"
    fake.unlink()
    monkeypatch.setattr(platform, "processor", lambda: "i386")
    assert device_report("cpu")["cpu_model"] == "i386"
    monkeypatch.setattr(platform, "processor", lambda: "")
    monkeypatch.setattr(platform, "machine", lambda: "")
    assert device_report("cpu")["cpu_model"] == "unknown CPU"


def test_the_messages_a_reader_gets_for_a_bad_device_or_report() -> None:
    """Whole messages: a malformed string, an unknown type, a report that is not a dict; an
    empty report renders as no lines."""
    with pytest.raises(ValueError) as info:
        pick_device("cuda:x")
    assert str(info.value) == ("'cuda:x' is not a device string: write a type with an optional "
                               "index, such as 'cpu', 'cuda', 'cuda:1' or 'mps'.")
    with pytest.raises(ValueError) as info:
        pick_device("gpu")
    assert str(info.value).startswith(
        "'gpu' is not a device type PyTorch knows; use one of 'cpu', 'cuda', 'cuda:N', 'mps', "
        "'xpu' or 'meta' (")
    with pytest.raises(TypeError) as info:
        device_report_text("not a report")  # type: ignore[arg-type]
    assert str(info.value) == ("device_report_text expects the dict from device_report(), "
                               "got str.")
    assert device_report_text({}) == ""

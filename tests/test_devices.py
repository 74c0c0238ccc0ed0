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
    with pytest.raises(TypeError, match="pick_device"):
        pick_device(bad)  # type: ignore[arg-type]


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

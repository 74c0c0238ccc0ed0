"""memory_report and format_bytes against known allocations."""

from __future__ import annotations

import pytest
import torch

from course_utils import format_bytes, memory_report_text, memory_report


def test_cpu_report_has_process_memory() -> None:
    report = memory_report("cpu")
    assert report["device"] == "cpu" and report["available"] is True
    assert 0 < report["process_rss"] < report["total"]
    assert 0 < report["free"] <= report["total"]


def test_cpu_rss_grows_with_an_allocation() -> None:
    before = memory_report("cpu")["process_rss"]
    block = torch.ones(64 * 2**20 // 4)  # 64 MiB of float32, written so the pages are resident
    after = memory_report("cpu")["process_rss"]
    assert after - before >= 48 * 2**20
    del block


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks behaviour without CUDA")
def test_absent_device_type_does_not_raise() -> None:
    report = memory_report("cuda")
    assert report["available"] is False
    assert "no cuda device" in report["note"]


@pytest.mark.skipif(torch.backends.mps.is_available(), reason="checks behaviour without MPS")
def test_absent_mps_does_not_raise() -> None:
    assert memory_report("mps")["available"] is False


def test_default_device_matches_pick_device() -> None:
    from course_utils import pick_device

    assert memory_report()["device"] == str(pick_device())


@pytest.mark.parametrize("bad", ["gpu", "cuda:x", ""])
def test_bad_device_string(bad: str) -> None:
    with pytest.raises(ValueError):
        memory_report(bad)


def test_bad_device_type() -> None:
    with pytest.raises(TypeError, match="memory_report"):
        memory_report(3.0)  # type: ignore[arg-type]


@pytest.mark.parametrize("n,text", [(0, "0 B"), (512, "512 B"), (1536, "1.50 KiB"), (3 * 2**30, "3.00 GiB"),
                                    (5 * 2**40, "5120.00 GiB"), (None, "-")])
def test_format_bytes(n: int | None, text: str) -> None:
    assert format_bytes(n) == text


def test_memory_report_text() -> None:
    line = memory_report_text({"device": "cpu", "available": True, "process_rss": 2**20})
    assert line == "device=cpu, available=True, process_rss=1.00 MiB"


@pytest.mark.gpu
def test_cuda_counts_an_allocation() -> None:
    torch.cuda.synchronize()
    before = memory_report("cuda")
    block = torch.empty(256 * 2**20, dtype=torch.uint8, device="cuda")
    after = memory_report("cuda")
    assert after["allocated"] - before["allocated"] == 256 * 2**20
    assert after["reserved"] >= after["allocated"]
    assert after["peak_allocated"] >= after["allocated"]
    free, total = torch.cuda.mem_get_info()
    assert after["total"] == total
    del block
    assert memory_report("cuda")["allocated"] == before["allocated"]


def test_saved_activations_counts_each_storage_once_and_follows_it() -> None:
    from torch import nn

    from course_utils import SavedActivations

    torch.manual_seed(0)
    small = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
    x = torch.randn(5, 4)
    # x (5x4) and the ReLU output (5x3, saved by the ReLU and the next Linear: once); the
    # second Linear's weight is a parameter, left out; 4 bytes a float.
    with SavedActivations(exclude=small.parameters()) as saved:
        loss = small(x).sum()
    assert (saved.total_bytes, saved.count) == (4 * (5 * 4 + 5 * 3), 2)
    assert saved.peak_bytes == saved.alive_bytes() == saved.total_bytes
    loss.backward()
    assert saved.alive_bytes() == 0  # backward let them go
    assert saved.peak_bytes == saved.total_bytes  # the peak stays what it was
    with SavedActivations() as everything:  # nothing excluded: the weight counts too
        small(x).sum()
    assert everything.total_bytes == saved.total_bytes + 4 * 3 * 2
    with SavedActivations(exclude=small.parameters()) as nothing:
        with torch.no_grad():
            small(x)
    assert (nothing.total_bytes, nothing.count, nothing.peak_bytes) == (0, 0, 0)


def test_cuda_and_mps_readouts_come_from_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    # Without those devices here, torch's readouts are stood in for: each figure must come
    # from its own function, for the device asked about.
    import course_utils.memory as memory_module

    asked = []
    monkeypatch.setattr(memory_module, "_type_count", lambda kind: 2)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda d: asked.append(d) or (30, 80))
    for name, value in (("memory_allocated", 11), ("memory_reserved", 12),
                        ("max_memory_allocated", 13)):
        monkeypatch.setattr(torch.cuda, name, lambda d, v=value: asked.append(d) or v)
    report = memory_report("cuda:1")
    assert report == {"device": "cuda:1", "available": True, "allocated": 11, "reserved": 12,
                      "peak_allocated": 13, "free": 30, "total": 80}
    assert asked == [torch.device("cuda:1")] * 4
    assert memory_report("cuda:0")["device"] == "cuda:0"
    with pytest.raises(ValueError, match=r"cuda:2 does not exist: this machine has 2 CUDA"):
        memory_report("cuda:2")
    for name, value in (("current_allocated_memory", 5), ("driver_allocated_memory", 6),
                        ("recommended_max_memory", 7)):
        monkeypatch.setattr(torch.mps, name, lambda v=value: v)
    assert memory_report("mps") == {"device": "mps", "available": True, "allocated": 5,
                                    "driver_allocated": 6, "recommended_max": 7}
    assert memory_report("xpu")["note"] == "no memory readout for xpu devices in this course"
    monkeypatch.setattr(memory_module, "_type_count", lambda kind: 0)
    assert memory_report("cuda") == {
        "device": "cuda", "available": False,
        "note": "no cuda device on this machine: nothing to report"}
    with pytest.raises(TypeError, match=r"^memory_report expects None, a device string or a "
                                        r"torch\.device; got int\.$"):
        memory_report(3)  # type: ignore[arg-type]

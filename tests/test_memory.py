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

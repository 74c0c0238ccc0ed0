"""benchmark and Timing: durations against calls of known length, threads, synchronisation."""

from __future__ import annotations

import re
import time

import pytest
import torch

import course_utils.timing as timing_module
from course_utils import Timing, benchmark, format_seconds


def test_known_duration_is_measured() -> None:
    # time.sleep never returns early; a loaded machine can only make it later.
    t = benchmark(time.sleep, 0.02, device="cpu", warmup=1, min_run_time=0.3)
    assert 0.02 <= t.median < 0.06
    assert t.runs >= 5
    assert t.iqr >= 0


def test_sum_of_two_durations() -> None:
    t1 = benchmark(time.sleep, 0.01, device="cpu", warmup=0, min_run_time=0.2)
    t3 = benchmark(time.sleep, 0.03, device="cpu", warmup=0, min_run_time=0.3)
    assert t3.median - t1.median == pytest.approx(0.02, abs=0.01)


def test_warmup_calls_happen_before_timing() -> None:
    calls: list[int] = []
    benchmark(lambda: calls.append(1), device="cpu", warmup=7, min_run_time=0.01)
    assert len(calls) > 7


def test_default_threads_are_torchs() -> None:
    x = torch.randn(64, 64)
    t = benchmark(torch.mm, x, x, min_run_time=0.05)
    assert t.num_threads == torch.get_num_threads()
    assert t.device == "cpu"


def test_threads_can_be_set_and_are_restored() -> None:
    before = torch.get_num_threads()
    seen: list[int] = []
    t = benchmark(lambda: seen.append(torch.get_num_threads()), device="cpu", num_threads=1,
                  min_run_time=0.01)
    assert t.num_threads == 1
    assert set(seen) == {1}
    assert torch.get_num_threads() == before


def test_device_is_synchronised_around_each_block(monkeypatch: pytest.MonkeyPatch) -> None:
    waited: list[torch.device] = []
    monkeypatch.setattr(timing_module, "synchronize", lambda d: waited.append(d))
    benchmark(lambda: None, device="meta", warmup=2, min_run_time=0.01)
    assert waited and all(d == torch.device("meta") for d in waited)


def test_device_taken_from_tensor_argument() -> None:
    x = torch.ones(3, device="meta")
    assert benchmark(torch.add, x, x, min_run_time=0.01).device == "meta"


def test_str_shows_median_spread_device_and_threads() -> None:
    t = Timing(median=0.0123, iqr=0.0004, runs=40, device="cpu", num_threads=2, times=(0.0123,))
    assert re.fullmatch(r"12\.3 ms ± 400 µs \(cpu, 2 threads, 40 runs\)", str(t))
    one = Timing(median=2.0, iqr=0.0, runs=1, device="cuda:0", num_threads=1, times=(2.0,), label="x")
    assert str(one).startswith("x: 2 s") and "1 thread," in str(one)


@pytest.mark.parametrize("seconds,text", [(1.5, "1.5 s"), (0.0025, "2.5 ms"), (3e-6, "3 µs"), (4e-9, "4 ns")])
def test_format_seconds(seconds: float, text: str) -> None:
    assert format_seconds(seconds) == text


@pytest.mark.parametrize("kwargs", [{"warmup": -1}, {"min_run_time": 0}, {"num_threads": 0}])
def test_bad_arguments(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        benchmark(lambda: None, device="cpu", **kwargs)


def test_not_callable() -> None:
    with pytest.raises(TypeError, match="callable"):
        benchmark(42)  # type: ignore[arg-type]


@pytest.mark.gpu
def test_cuda_timing_includes_the_queued_work() -> None:
    # A matmul chain is queued instantly; only a synchronised timer sees its real cost.
    x = torch.randn(4096, 4096, device="cuda")
    t = benchmark(torch.mm, x, x)
    flops = 2 * 4096**3
    assert t.device.startswith("cuda")
    assert flops / t.median < 2e15  # faster than any GPU's peak would mean the wait was missed

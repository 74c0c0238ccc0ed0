"""benchmark and Timing: durations against calls of known length, threads, synchronisation."""

from __future__ import annotations

import random
import re
import subprocess
import sys
import time

import psutil
import pytest
import torch

import course_utils.timing as timing_module
from course_utils import Timing, benchmark, format_seconds, noise_summary


def test_known_duration_is_measured() -> None:
    # time.sleep never returns early; a loaded machine can only make it later.
    t = benchmark(time.sleep, 0.02, device="cpu", warmup=1, min_run_time=0.3)
    assert 0.02 <= t.median < 0.06
    assert t.runs >= 5 and t.blocks >= 5


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


def test_cpu_timing_also_waits_for_the_current_accelerator(monkeypatch: pytest.MonkeyPatch) -> None:
    # A function given CPU tensors may launch accelerator work: the clock waits for both queues.
    waited: list[torch.device | None] = []
    monkeypatch.setattr(timing_module, "synchronize", lambda d: waited.append(d))
    monkeypatch.setattr(torch.accelerator, "is_available", lambda: True)
    monkeypatch.setattr(torch.accelerator, "current_accelerator", lambda: torch.device("xpu"))
    benchmark(lambda: None, device="cpu", warmup=1, min_run_time=0.01)
    assert torch.device("cpu") in waited and None in waited  # None: the current accelerator
    assert waited.count(None) == waited.count(torch.device("cpu"))
    waited.clear()  # a CUDA that this process never started has nothing queued: no wait
    monkeypatch.setattr(torch.accelerator, "current_accelerator", lambda: torch.device("cuda"))
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: False)
    benchmark(lambda: None, device="cpu", warmup=1, min_run_time=0.01)
    assert waited and None not in waited


def test_device_taken_from_tensor_argument() -> None:
    x = torch.ones(3, device="meta")
    assert benchmark(torch.add, x, x, min_run_time=0.01).device == "meta"


def test_str_shows_median_spread_device_and_threads() -> None:
    t = Timing(median=0.0123, iqr=0.0004, runs=40, device="cpu", num_threads=2, times=(0.0123,) * 8)
    assert re.fullmatch(r"12\.3 ms ± 400 µs \(cpu, 2 threads, 40 runs\)", str(t))
    assert not t.noisy and t.short() == "12.3 ms ± 400 µs"
    one = Timing(median=2.0, iqr=0.0, runs=1, device="cuda:0", num_threads=1, times=(2.0,), label="x")
    assert str(one).startswith("x: 2 s") and "1 thread," in str(one)


def _timing(median: float = 1e-3, iqr: float = 1e-5, blocks: int = 10, threads: int = 2,
            load: float | None = 0.0, cores: int | None = 2) -> Timing:
    return Timing(median=median, iqr=iqr, runs=blocks, device="cpu", num_threads=threads,
                  times=(median,) * blocks, other_load=load, cpu_cores=cores)


@pytest.mark.parametrize("kwargs,reason", [
    ({"blocks": 3}, "only 3 timed blocks"),
    ({"iqr": 4e-4}, "spread 40% of the median"),
    ({"load": 1.2}, "other programs kept 1.2 of 2 CPU cores busy"),
])
def test_noise_verdicts(kwargs: dict[str, float], reason: str) -> None:
    t = _timing(**kwargs)  # type: ignore[arg-type]
    assert t.noisy and t.noise == (reason,)
    assert str(t).endswith(f"noisy: {reason}; re-run on an idle machine")
    assert t.short().endswith("(noisy)")


def test_quiet_timings_are_trusted() -> None:
    assert not _timing().noisy
    assert not _timing(iqr=2.4e-4).noisy  # under a quarter of the median
    assert not _timing(load=1.2, threads=2, cores=16).noisy  # cores to spare
    assert not _timing(load=None, cores=None).noisy  # load unknown: judged on the spread


def test_noise_summary() -> None:
    assert noise_summary([_timing(), _timing()]).startswith("none of the 2 timings flagged noisy")
    line = noise_summary([_timing(), _timing(iqr=5e-4), _timing(load=1.5)])
    assert line.startswith("noisy: 2 of 3 timings (") and "re-run on an idle machine" in line


class _FakeClock:
    """A clock that moves only when told: the simulated function and synchronise advance it."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def test_fixed_blocks_with_a_costly_synchronise(monkeypatch: pytest.MonkeyPatch) -> None:
    # On a GPU each synchronise costs microseconds; blocked_autorange then picks one huge block.
    clock, rng = _FakeClock(), random.Random(0)
    monkeypatch.setattr(timing_module, "_clock", clock)
    monkeypatch.setattr(timing_module, "synchronize", lambda d: clock.advance(10e-6))
    monkeypatch.setattr(timing_module, "_busy_seconds", lambda: (0.0, 0.0))

    def noisy_kernel() -> None:
        clock.advance(rng.uniform(5e-6, 15e-6))

    min_run_time = 0.2
    t = benchmark(noisy_kernel, device="meta", warmup=3, min_run_time=min_run_time)
    assert t.blocks >= 5
    assert t.iqr > 0
    assert clock.now <= 2 * min_run_time  # warm-up, calibration and blocks together
    assert 5e-6 <= t.median <= 15e-6 + 10e-6  # a block's two waits spread over its calls


def test_slow_function_still_gets_enough_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = _FakeClock()
    monkeypatch.setattr(timing_module, "_clock", clock)
    monkeypatch.setattr(timing_module, "synchronize", lambda d: None)
    calls: list[float] = []

    def slow() -> None:
        calls.append(clock())
        clock.advance(0.5)

    t = benchmark(slow, device="meta", warmup=0, min_run_time=0.2)
    assert t.blocks == 5 and t.runs == 5 and t.median == pytest.approx(0.5)
    assert len(calls) == 5  # the calibration call counts as the first block


@pytest.mark.parametrize("first", [15e-3, 40e-3])
def test_a_preempted_first_call_does_not_shrink_the_measurement(
        first: float, monkeypatch: pytest.MonkeyPatch) -> None:
    # The calibration call waits scheduler slices for a core; the others take 15 us.
    clock = _FakeClock()
    monkeypatch.setattr(timing_module, "_clock", clock)
    monkeypatch.setattr(timing_module, "synchronize", lambda d: None)
    monkeypatch.setattr(timing_module, "_busy_seconds", lambda: (0.0, 0.0))
    calls = [0]

    def kernel() -> None:
        calls[0] += 1
        clock.advance(first if calls[0] == 1 else 15e-6)

    start = clock()
    t = benchmark(kernel, device="meta", warmup=0, min_run_time=0.3)
    assert t.median == pytest.approx(15e-6)
    assert t.runs * t.median >= 0.15  # the blocks filled at least half of min_run_time
    assert clock() - start <= 2 * 0.3


def test_load_from_other_programs_is_flagged() -> None:
    # Keep every core busy from other processes while timing with all of them.
    cores = psutil.cpu_count() or 1
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(cores)]
    try:
        time.sleep(0.3)
        x = torch.randn(64, 64)
        t = benchmark(torch.mm, x, x, num_threads=cores, min_run_time=0.1, blocks=5)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    assert t.other_load is not None and t.other_load >= 0.5
    assert t.noisy and any("CPU cores busy" in reason for reason in t.noise)


@pytest.mark.parametrize("seconds,text", [(1.5, "1.5 s"), (0.0025, "2.5 ms"), (3e-6, "3 µs"),
                                          (4e-9, "4 ns"), (999.7e-6, "1 ms"), (0.99999, "1 s"),
                                          (999.4e-6, "999 µs"), (-0.0025, "-2.5 ms")])
def test_format_seconds(seconds: float, text: str) -> None:
    assert format_seconds(seconds) == text


@pytest.mark.parametrize("kwargs", [{"warmup": -1}, {"min_run_time": 0}, {"num_threads": 0},
                                    {"blocks": 0}])
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


@pytest.mark.parametrize("kwargs,reason", [
    ({"blocks": 4}, "only 4 timed blocks"),
    ({"blocks": 1}, "only 1 timed block"),
    ({"median": 1.0, "iqr": 0.25}, "spread 25% of the median"),  # exactly at the limit
    ({"load": 0.5, "threads": 2, "cores": 2}, "other programs kept 0.5 of 2 CPU cores busy"),
    ({"load": 1.01, "threads": 1, "cores": 2}, "other programs kept 1.0 of 2 CPU cores busy"),
])
def test_noise_verdict_edges_that_flag(kwargs: dict[str, float], reason: str) -> None:
    assert _timing(**kwargs).noise == (reason,)  # type: ignore[arg-type]


@pytest.mark.parametrize("kwargs", [
    {"blocks": 5},  # exactly enough blocks
    {"median": 1.0, "iqr": 0.2499},  # just under the limit
    {"load": 0.49, "threads": 2, "cores": 2},  # light background load
    {"load": 1.0, "threads": 1, "cores": 2},  # busy, but a core is left for us
    {"median": 0.0, "iqr": 0.0, "load": None},
])
def test_noise_verdict_edges_that_pass(kwargs: dict[str, float]) -> None:
    t = _timing(**kwargs)  # type: ignore[arg-type]
    assert t.noise == () or kwargs.get("median") == 0.0
    if kwargs.get("median") == 0.0:  # no time at all: its spread is no share of anything
        assert t.spread == float("inf") and t.noise == ("spread inf% of the median",)


def test_median_and_spread_come_from_the_blocks_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    # Slow calls of known length, one per block; the warm-up calls are far slower and must
    # not count, nor the clock's reads between blocks.
    clock = _FakeClock()
    monkeypatch.setattr(timing_module, "_clock", clock)
    monkeypatch.setattr(timing_module, "synchronize", lambda d: None)
    monkeypatch.setattr(timing_module, "_busy_seconds", lambda: (0.0, 0.0))
    lengths = iter([5.0, 5.0, 0.5, 0.7, 0.6, 0.9, 0.8])  # two warm-up calls, then 5 blocks

    def call() -> None:
        clock.advance(next(lengths))

    t = benchmark(call, device="meta", warmup=2, min_run_time=0.2)
    assert t.times == pytest.approx((0.5, 0.7, 0.6, 0.9, 0.8))
    assert t.median == pytest.approx(0.7)  # the middle of the five
    assert t.iqr == pytest.approx(0.8 - 0.6)  # third quartile less the first
    assert t.runs == 5 and t.blocks == 5 and t.num_threads == torch.get_num_threads()
    assert t.spread == pytest.approx(0.2 / 0.7)


@pytest.mark.parametrize("rate,unit,text", [
    (1e15, "FLOP", "1 PFLOP/s"), (999e12, "FLOP", "999 TFLOP/s"), (1e12, "FLOP", "1 TFLOP/s"),
    (1e9, "B", "1 GB/s"), (999e6, "B", "999 MB/s"), (1e6, "B", "1 MB/s"),
    (1e3, "B", "1 kB/s"), (999.0, "B", "999 B/s"), (12.3e9, "FLOP", "12.3 GFLOP/s"),
])
def test_format_rate_at_each_prefix(rate: float, unit: str, text: str) -> None:
    from course_utils import format_rate
    assert format_rate(rate, unit) == text


def test_noise_summary_names_each_reason_once() -> None:
    line = noise_summary([_timing(blocks=3), _timing(iqr=5e-4), _timing(load=1.5),
                          _timing(iqr=6e-4), _timing()])
    assert line == ("noisy: 4 of 5 timings (a spread of 25% or more, only 3 timed blocks, "
                    "other programs); re-run on an idle machine before trusting them")

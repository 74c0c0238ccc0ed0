"""benchmark and Timing in detail: block sizing, the load of other programs, the exact texts.

Every duration here comes from a simulated clock (as in test_timing.py), never from a real
one, so the expected values are computed by hand from the simulated call lengths.
"""

from __future__ import annotations

import functools
from collections import namedtuple

import pytest
import torch

import course_utils.timing as timing_module
from course_utils import OtherLoad, Timing, benchmark, format_rate, format_seconds, noise_summary
from tests.test_timing import _FakeClock  # the simulated clock of the timing tests


@pytest.fixture()
def clock(monkeypatch: pytest.MonkeyPatch) -> _FakeClock:
    """A simulated clock read around each block; synchronising costs no time."""
    fake = _FakeClock()
    monkeypatch.setattr(timing_module, "_clock", fake)
    monkeypatch.setattr(timing_module, "synchronize", lambda d: None)
    monkeypatch.setattr(timing_module, "_busy_seconds", lambda: (0.0, 0.0))
    return fake


def test_blocks_split_min_run_time_into_equal_batches(clock: _FakeClock) -> None:
    """1 ms calls, 0.2 s over 8 blocks: each block is 25 calls (0.025 s), 200 calls timed."""
    calls = [0]

    def kernel() -> None:
        calls[0] += 1
        clock.advance(1e-3)

    t = benchmark(kernel, device="meta", warmup=2, min_run_time=0.2, blocks=8)
    assert t.blocks == 8 and t.runs == 200
    assert t.times == pytest.approx((1e-3,) * 8)
    assert t.median == pytest.approx(1e-3) and t.iqr == pytest.approx(0.0, abs=1e-12)
    # 2 warm-up calls, calibration batches of 1 and 10 calls (10 ms >= a tenth of 25 ms),
    # then the 200 timed calls.
    assert calls[0] == 2 + 1 + 10 + 200


def test_calibration_grows_tenfold_until_a_tenth_of_a_block(clock: _FakeClock) -> None:
    """2 us calls, 0.1 s over 10 blocks of 10 ms: batches of 1, 10, 100, 1000 calls calibrate
    (2 ms is the first to last a tenth of 10 ms); then 10 blocks of 5000 calls each."""
    calls = [0]

    def kernel() -> None:
        calls[0] += 1
        clock.advance(2e-6)

    t = benchmark(kernel, device="meta", warmup=0, min_run_time=0.1, blocks=10)
    assert t.blocks == 10 and t.runs == 50_000
    assert t.median == pytest.approx(2e-6)
    assert calls[0] == 1 + 10 + 100 + 1000 + 50_000


def test_other_programs_load_is_their_cpu_seconds_over_the_wall_time(
        monkeypatch: pytest.MonkeyPatch, clock: _FakeClock) -> None:
    """Five blocks of one 0.5 s call; the calibration call is the first, so the load is read
    around the other four (2 s of wall time). The machine spent 4 CPU seconds meanwhile, this
    process 1: the other programs kept 3 / 2 = 1.5 cores busy."""
    readings = iter([(100.0, 10.0), (104.0, 11.0)])
    monkeypatch.setattr(timing_module, "_busy_seconds", lambda: next(readings))
    monkeypatch.setattr(timing_module.psutil, "cpu_count", lambda: 7)

    def slow() -> None:
        clock.advance(0.5)

    t = benchmark(slow, device="meta", warmup=0, min_run_time=0.2)
    assert t.other_load == pytest.approx(1.5)
    assert t.cpu_cores == 7


def test_own_cpu_time_above_the_machines_is_no_load(monkeypatch: pytest.MonkeyPatch,
                                                   clock: _FakeClock) -> None:
    """Counters read at slightly different moments can say this process used more CPU than
    the whole machine: the load of others is then 0, never negative."""
    readings = iter([(100.0, 10.0), (101.0, 12.0)])
    monkeypatch.setattr(timing_module, "_busy_seconds", lambda: next(readings))
    t = benchmark(lambda: clock.advance(0.5), device="meta", warmup=0, min_run_time=0.2)
    assert t.other_load == 0.0


def test_busy_seconds_count_every_core_but_idle_and_iowait(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The machine's busy time is its CPU time less idle and I/O wait; ours is user + system.
    Between the readings: machine user +3, system +1, idle +9, iowait +5; this process
    user +0.5, system +0.5. Others: (3 + 1) - 1 = 3 CPU seconds over 2 s = 1.5 cores."""
    clock = _FakeClock()  # the real _busy_seconds, reading simulated psutil counters
    monkeypatch.setattr(timing_module, "_clock", clock)
    monkeypatch.setattr(timing_module, "synchronize", lambda d: None)
    Cpu = namedtuple("Cpu", "user system idle iowait")
    Own = namedtuple("Own", "user system")
    machine = iter([Cpu(10.0, 5.0, 100.0, 7.0), Cpu(13.0, 6.0, 109.0, 12.0)])
    own = iter([Own(2.0, 1.0), Own(2.5, 1.5)])

    class Process:
        def cpu_times(self) -> Own:
            return next(own)

    monkeypatch.setattr(timing_module.psutil, "cpu_times", lambda: next(machine))
    monkeypatch.setattr(timing_module.psutil, "Process", Process)
    t = benchmark(lambda: clock.advance(0.5), device="meta", warmup=0, min_run_time=0.2)
    assert t.other_load == pytest.approx(1.5)


@pytest.mark.parametrize("seconds,text", [(1.0, "1 s"), (1e-3, "1 ms"), (1e-6, "1 µs"),
                                          (0.0, "0 ns"), (999.6, "1e+03 s")])
def test_format_seconds_at_each_unit_boundary(seconds: float, text: str) -> None:
    """A value exactly at a unit is written in it ('1 ms', not '1e+03 µs')."""
    assert format_seconds(seconds) == text


def test_format_rate_defaults_to_flop_and_refuses_other_units() -> None:
    """The unit defaults to FLOP; 999.6 TFLOP/s rounds up to 1 PFLOP/s; others are refused."""
    assert format_rate(2.5e12) == "2.5 TFLOP/s"
    assert format_rate(999.6e12) == "1 PFLOP/s"
    assert format_rate(-2e9, "B") == "-2 GB/s"
    with pytest.raises(ValueError, match=r"^unit must be 'FLOP' or 'B', got 'bytes'\.$"):
        format_rate(1.0, "bytes")


def test_noise_summary_of_quiet_timings_word_for_word() -> None:
    """The all-clear line names the count and the 25% limit."""
    t = Timing(median=1e-3, iqr=1e-5, runs=10, device="cpu", num_threads=1, times=(1e-3,) * 10,
               other_load=0.0, cpu_cores=4)
    assert noise_summary(iter([t, t, t])) == (
        "none of the 3 timings flagged noisy (each one's spread under 25% of its median, "
        "no other program competing for the CPU)")


def test_str_of_a_noisy_labelled_timing_word_for_word() -> None:
    """Label, median ± spread, context, then every reason, joined by '; '."""
    t = Timing(median=0.002, iqr=0.001, runs=3, device="cpu", num_threads=1, times=(0.002,),
               label="mm", other_load=3.5, cpu_cores=4)
    assert str(t) == ("mm: 2 ms ± 1 ms (cpu, 1 thread, 3 runs) noisy: only 1 timed block; "
                      "spread 50% of the median; other programs kept 3.5 of 4 CPU cores busy; "
                      "re-run on an idle machine")
    assert t.short() == "2 ms ± 1 ms (noisy)"


def test_load_is_judged_only_when_known() -> None:
    """A heavy load with the core count unknown (or the load unknown) is not a verdict."""
    base = dict(median=1e-3, iqr=0.0, runs=10, device="cpu", num_threads=2, times=(1e-3,) * 10)
    assert Timing(**base, other_load=8.0, cpu_cores=None).noise == ()  # type: ignore[arg-type]
    assert Timing(**base, other_load=None, cpu_cores=1).noise == ()  # type: ignore[arg-type]


@pytest.mark.parametrize("kwargs,message", [
    ({"warmup": -1}, r"^need warmup >= 0 and min_run_time > 0, got -1 and 0\.2\.$"),
    ({"min_run_time": -0.5}, r"^need warmup >= 0 and min_run_time > 0, got 3 and -0\.5\.$"),
    ({"blocks": True}, r"^blocks must be an integer >= 1, got True\.$"),
    ({"blocks": 4.0}, r"^blocks must be an integer >= 1, got 4\.0\.$"),
    ({"num_threads": -2}, r"^num_threads must be at least 1, got -2\.$"),
])
def test_bad_arguments_are_named_in_the_message(kwargs: dict[str, object], message: str) -> None:
    """Each refusal says which argument and what was given."""
    with pytest.raises(ValueError, match=message):
        benchmark(lambda: None, device="cpu", **kwargs)  # type: ignore[arg-type]


def test_not_callable_message() -> None:
    """The TypeError names the type that was given instead of a function."""
    with pytest.raises(TypeError, match=r"^benchmark needs a callable, got int\.$"):
        benchmark(42)  # type: ignore[arg-type]


def test_one_block_is_allowed_and_flagged(clock: _FakeClock) -> None:
    """blocks=1 gives one block (of ten 1 ms calls for 0.01 s), which the verdict flags."""
    t = benchmark(lambda: clock.advance(1e-3), device="meta", warmup=0, min_run_time=0.01,
                  blocks=1)
    assert t.blocks == 1 and t.runs == 10 and t.noise == ("only 1 timed block",)


def test_device_of_a_keyword_tensor_is_waited_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """With no device given, a tensor passed by keyword decides which queue is waited on."""
    waited: list[object] = []
    monkeypatch.setattr(timing_module, "synchronize", lambda d: waited.append(d))
    x = torch.ones(2, device="meta")
    t = benchmark(lambda *, a: a, a=x, warmup=0, min_run_time=0.01)
    assert t.device == "meta" and set(waited) == {torch.device("meta")}


def scripted(clock: _FakeClock, durations: list[float], then: float):
    """A function whose calls last `durations` in turn, then `then` each; it counts its calls."""
    calls = [0]

    def kernel() -> None:
        calls[0] += 1
        clock.advance(durations[calls[0] - 1] if calls[0] <= len(durations) else then)

    return kernel, calls


def test_default_is_ten_blocks_on_the_best_device_with_no_tensor_given(
        clock: _FakeClock) -> None:
    kernel, _ = scripted(clock, [], 1e-3)
    t = benchmark(kernel, warmup=0, min_run_time=0.1)  # no device, no tensor argument
    assert t.blocks == 10 and t.device == str(timing_module.pick_device(None))


def test_a_meta_device_still_waits_for_the_accelerator(clock: _FakeClock,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Timing on cpu or meta also drains the current accelerator's queue around each block."""
    waits = [0]
    monkeypatch.setattr(timing_module, "_wait_for_accelerator",
                        lambda: waits.__setitem__(0, waits[0] + 1))
    kernel, _ = scripted(clock, [], 1e-3)
    t = benchmark(kernel, device="meta", warmup=0, min_run_time=0.01, blocks=5)
    assert waits[0] >= 2 * t.blocks  # before and after each block at least


def test_the_warm_up_calls_get_the_keyword_arguments_too(clock: _FakeClock) -> None:
    seen: list[int] = []
    t = benchmark(lambda *, k: seen.append(k) or clock.advance(1e-3), k=7, device="meta",
                  warmup=2, min_run_time=0.01, blocks=5)
    assert seen[:2] == [7, 7] and len(seen) == 2 + 1 + t.runs  # warm-up, calibration, blocks


def test_calibration_stops_at_exactly_a_tenth_of_a_block(clock: _FakeClock) -> None:
    """Calls of 2**-10 s, blocks of 10 x 2**-10 s: one call already lasts a tenth of a block
    (exactly, in binary), so calibration stops at one call; a call 5% shorter needs ten."""
    kernel, calls = scripted(clock, [], 2**-10)
    benchmark(kernel, device="meta", warmup=0, min_run_time=100 * 2**-10, blocks=10)
    assert calls[0] == 1 + 100  # one calibration call, then 10 blocks of 10
    kernel, calls = scripted(clock, [], 0.95e-3)
    t = benchmark(kernel, device="meta", warmup=0, min_run_time=0.1, blocks=10)
    assert calls[0] == 1 + 10 + t.runs  # calibration: 1 call, then 10


def test_blocks_too_short_are_sized_again_from_their_median(clock: _FakeClock) -> None:
    """A 1/16 s calibration call (preempted), then calls of 3/256 s: five one-call blocks
    last 3/64 s, between a third and a half of min_run_time (1/8 s), so the blocks are sized
    again from the median call: eight blocks, the preempted call no longer among them."""
    kernel, calls = scripted(clock, [2**-4], 3 * 2**-8)
    t = benchmark(kernel, device="meta", warmup=0, min_run_time=2**-3, blocks=8)
    assert t.blocks == 8 and t.runs == 8 and 2**-4 not in t.times
    assert t.median == pytest.approx(3 * 2**-8)


def test_the_new_size_comes_from_the_median_short_block(clock: _FakeClock) -> None:
    """The first one-call blocks last 1, 2, 4 and 8 ms after a 50 ms calibration call: their
    median (4 ms) sizes the next blocks at 2 calls of what are now 1 ms calls, still too
    short; the third try sizes them at 10 calls."""
    kernel, calls = scripted(clock, [0.05, 0.001, 0.002, 0.004, 0.008], 0.001)
    t = benchmark(kernel, device="meta", warmup=0, min_run_time=0.1, blocks=10)
    assert (t.blocks, t.runs) == (10, 100)
    assert calls[0] == 1 + 4 + 10 * 2 + 10 * 10


def test_benchmark_keeps_torchs_own_measurement(clock: _FakeClock) -> None:
    """The Timing carries torch.utils.benchmark's Measurement: the statement, the label (the
    function's name unless one is given), the threads, the blocks and calls."""
    def my_step() -> None:
        clock.advance(1e-3)

    t = benchmark(my_step, device="meta", warmup=0, min_run_time=0.01, blocks=5,
                  num_threads=1)
    m = t.measurement
    assert isinstance(m, timing_module.Measurement)
    spec = m.task_spec
    assert (spec.stmt, spec.setup, spec.label, spec.num_threads) == (
        "fn(*args, **kwargs)", "pass", "my_step", 1)
    assert m.number_per_run * t.blocks == t.runs and tuple(m.times) == t.times
    assert t.label == ""
    named = benchmark(my_step, device="meta", warmup=0, min_run_time=0.01, label="named")
    assert named.label == "named" == named.measurement.task_spec.label
    anonymous = benchmark(functools.partial(my_step), device="meta", warmup=0,
                          min_run_time=0.01)  # a callable without a __name__
    assert anonymous.measurement.task_spec.label == "fn"
    assert "my_step" in str(m)  # torch's own summary names it


def test_blocks_that_fill_exactly_half_of_min_run_time_are_kept(clock: _FakeClock) -> None:
    """As above with calls of 1/64 s: the four timed blocks last 1/16 s, exactly half of
    min_run_time (binary fractions, no rounding): enough, so no second try."""
    kernel, calls = scripted(clock, [2**-4], 2**-6)
    t = benchmark(kernel, device="meta", warmup=0, min_run_time=2**-3, blocks=8)
    assert t.blocks == 5 and t.times[0] == 2**-4 and calls[0] == 5


def test_busy_seconds_where_the_system_reports_no_io_wait(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """macOS and Windows report no iowait: the machine's busy time is all but idle."""
    Cpu = namedtuple("Cpu", "user system idle")
    Own = namedtuple("Own", "user system")
    monkeypatch.setattr(timing_module.psutil, "cpu_times", lambda: Cpu(10.0, 5.0, 100.0))

    class Process:
        def cpu_times(self) -> Own:
            return Own(2.0, 1.0)

    monkeypatch.setattr(timing_module.psutil, "Process", Process)
    assert timing_module._busy_seconds() == (15.0, 3.0)


def test_other_load_of_a_block_is_their_cpu_seconds_over_its_wall_time(
        monkeypatch: pytest.MonkeyPatch, clock: _FakeClock) -> None:
    """Around a block of 2 s, the machine spent 4 CPU seconds, this process 1: other programs
    kept 1.5 cores busy. On 2 cores that disturbs one thread (1.5 + 1 > 2), and on 4 cores
    it does not (1.5 + 1 <= 4)."""
    readings = iter([(100.0, 10.0), (104.0, 11.0)])
    monkeypatch.setattr(timing_module, "_busy_seconds", lambda: next(readings))
    monkeypatch.setattr(timing_module.psutil, "cpu_count", lambda: 2)
    clock.advance(5.0)  # the block starts at 5 s, not at the clock's zero
    with OtherLoad() as load:
        assert load.cores is None  # not known before the block ends
        clock.advance(2.0)
    assert load.cores == pytest.approx(1.5)
    assert load.disturbs(1) and load.disturbs(2)
    load.cpu_cores = 4
    assert not load.disturbs(1) and load.disturbs(3)


def test_other_load_under_half_a_core_or_own_time_only_disturbs_nothing(
        monkeypatch: pytest.MonkeyPatch, clock: _FakeClock) -> None:
    # 0.4 cores of other programs (0.2 s in a block of 0.5 s): under LOAD_CORES, not load
    # even on a full machine.
    readings = iter([(0.0, 0.0), (1.2, 1.0), (0.0, 0.0), (1.0, 3.0)])
    monkeypatch.setattr(timing_module, "_busy_seconds", lambda: next(readings))
    monkeypatch.setattr(timing_module.psutil, "cpu_count", lambda: 1)
    with OtherLoad() as light:
        clock.advance(0.5)
    assert light.cores == pytest.approx(0.4) and not light.disturbs(1)
    with OtherLoad() as own:  # this process's time above the machine's: no other load
        clock.advance(1.0)
    assert own.cores == 0.0 and not own.disturbs(1)

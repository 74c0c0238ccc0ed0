"""The trace readers of 07, 16 and 17, on real CPU traces and on made-up GPU events."""

import os
import time
import warnings
from types import SimpleNamespace

import matplotlib
import matplotlib.pyplot as plt
import pytest
import torch
from torch.autograd import DeviceType
from torch.profiler import ProfilerActivity, profile, record_function

from course_utils.profiling import (DATA_RANGE, PHASE_COLOURS, ancestors, busy_seconds,
                                    draw_timeline, gpu_kernels, phase, profile_calls,
                                    profiler_activities, quiet_profiler, top_level_ops)


def test_top_level_ops_are_the_calls_the_code_made():
    w, x = torch.randn(4, 3), torch.randn(5, 3)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        with record_function("my range"):
            torch.nn.functional.linear(x, w)  # linear calls t and addmm (or matmul) inside
        x.add_(1)
    names = [e.name for e in top_level_ops(prof)]
    assert names == ["aten::linear", "aten::add_"]
    inner = [e for e in prof.events() if e.name == "aten::t"]
    assert inner and "aten::linear" in ancestors(inner[0])
    assert ancestors(inner[0])[-1] == "my range"  # outermost last
    assert top_level_ops(prof.events()) == top_level_ops(prof)  # a trace or its events


def gpu_event(name, start, end, annotation=False, device=DeviceType.CUDA):
    return SimpleNamespace(name=name, device_type=device, is_user_annotation=annotation,
                           time_range=SimpleNamespace(elapsed_us=lambda: end - start))


def test_gpu_kernels_leave_out_range_mirrors_and_optionally_copies():
    events = [gpu_event("step", 0, 100, annotation=True),  # the CPU's range
              gpu_event("step", 0, 90),  # its GPU mirror, same name
              gpu_event("gemm_kernel", 0, 40), gpu_event("Memcpy HtoD", 40, 50),
              gpu_event("Memset (Device)", 50, 51),
              gpu_event("aten::mm", 0, 5, device=DeviceType.CPU)]
    assert [e.name for e in gpu_kernels(events)] == ["gemm_kernel", "Memcpy HtoD",
                                                     "Memset (Device)"]
    assert [e.name for e in gpu_kernels(events, copies=False)] == ["gemm_kernel"]
    assert busy_seconds(gpu_kernels(events)) == 51e-6
    assert busy_seconds([]) == 0


def test_activities_on_this_device_and_quiet(monkeypatch):
    assert profiler_activities("cpu") == [ProfilerActivity.CPU]
    monkeypatch.delenv("KINETO_LOG_LEVEL", raising=False)
    with warnings.catch_warnings():
        quiet_profiler()
        assert os.environ["KINETO_LOG_LEVEL"] == "6"
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("default")
            quiet_profiler()
            warnings.warn("Warning: Profiler clears events at the end of each cycle.")
        assert not seen


def test_activities_add_the_gpu_only_for_cuda_with_cupti(monkeypatch):
    import course_utils.profiling as profiling

    picked = []
    monkeypatch.setattr(profiling, "pick_device",
                        lambda d: picked.append(d) or torch.device(d or "cpu"))
    for supported, dev, expected in (
            ([ProfilerActivity.CPU, ProfilerActivity.CUDA], "cuda",
             [ProfilerActivity.CPU, ProfilerActivity.CUDA]),
            ([ProfilerActivity.CPU], "cuda", [ProfilerActivity.CPU]),  # no CUPTI
            ([ProfilerActivity.CPU, ProfilerActivity.CUDA], "cpu", [ProfilerActivity.CPU])):
        monkeypatch.setattr(torch.profiler, "supported_activities", lambda s=supported: s)
        assert profiler_activities(dev) == expected
    assert picked == ["cuda", "cuda", "cpu"]  # the device asked about, not the best one


def test_quiet_profiler_leaves_other_warnings_alone():
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        quiet_profiler()
        warnings.warn("something else went wrong")
    assert [str(w.message) for w in seen] == ["something else went wrong"]


def one_step_and_a_batch():
    """A DataLoader batch, a forward, a backward and an Adam step, profiled on the CPU."""
    model = torch.nn.Sequential(torch.nn.Linear(2, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))
    opt = torch.optim.Adam(model.parameters())
    data = torch.utils.data.TensorDataset(torch.randn(8, 2), torch.randn(8, 1))
    loader = torch.utils.data.DataLoader(data, batch_size=4)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _, (xb, yb) in zip(range(1), loader):
            with record_function("step"):
                loss = torch.nn.functional.mse_loss(model(xb), yb)
                opt.zero_grad()
                loss.backward()
                opt.step()
    return prof


def test_phase_names_the_part_of_the_step_each_operator_ran_in():
    ops = top_level_ops(one_step_and_a_batch())
    by_phase = {}
    for e in ops:
        by_phase.setdefault(phase(e), set()).add(e.name)
    assert set(by_phase) == {"data", "forward", "backward", "optimizer"}
    assert {"aten::linear", "aten::relu", "aten::mse_loss"} <= by_phase["forward"]
    assert "aten::mse_loss" not in by_phase["backward"] | by_phase["optimizer"]
    assert any("backward" in n for n in by_phase["backward"])  # e.g. aten::mse_loss_backward
    assert by_phase["optimizer"] & {"aten::_foreach_add_", "aten::add_", "aten::mul_",
                                    "aten::_foreach_mul_", "aten::addcdiv_",
                                    "aten::_foreach_addcdiv_", "aten::lerp_",
                                    "aten::_foreach_lerp_"}
    assert any(DATA_RANGE in n for e in ops if phase(e) == "data" for n in ancestors(e))


def test_phase_reads_the_innermost_known_range_first_data_then_backward_then_optimizer():
    def event(*names):  # an event inside ranges `names`, innermost first
        parent = None
        for name in reversed(names):
            parent = SimpleNamespace(name=name, cpu_parent=parent)
        return SimpleNamespace(name="aten::x", cpu_parent=parent)
    assert phase(event()) == "forward"
    assert phase(event("aten::linear", "step")) == "forward"
    assert phase(event("autograd::engine::evaluate_function: AddmmBackward0")) == "backward"
    assert phase(event("Optimizer.step#Adam.step")) == "optimizer"
    assert phase(event("Optimizer.zero_grad#Adam.zero_grad")) == "optimizer"
    assert phase(event(f"{DATA_RANGE}#_SingleProcessDataLoaderIter.__next__")) == "data"
    # A prefix, not a substring: a range merely mentioning a phase's name is not that phase.
    assert phase(event("my autograd::engine notes", "x Optimizer.step")) == "forward"
    assert phase(event("autograd::engine::evaluate_function", f"{DATA_RANGE}#x")) == "data"
    assert phase(event("Optimizer.step#SGD.step", "autograd::engine::x")) == "backward"


def test_profile_calls_warms_up_then_keeps_the_fastest_recorded_try():
    calls, pauses = [], iter([0.2, 0.06, 0.01, 0.04])  # the first is the warm-up

    def fn():
        calls.append(1)
        with record_function(f"call {len(calls)}"):
            time.sleep(next(pauses))

    prof, wall = profile_calls(fn, "cpu", tries=3)
    assert len(calls) == 4
    assert 0.01 <= wall < 0.04  # the third call's time: not the warm-up, not a mean
    names = {e.name for e in prof.events()}
    assert "call 3" in names and not names & {"call 1", "call 2", "call 4"}
    with pytest.raises(ValueError, match="tries"):
        profile_calls(fn, "cpu", tries=0)


def test_profile_calls_synchronises_around_each_try(monkeypatch):
    import course_utils.profiling as profiling

    log = []
    monkeypatch.setattr(profiling, "synchronize", lambda d: log.append(("sync", str(d))))
    profile_calls(lambda: log.append("fn"), "cpu", tries=2)
    assert log == ["fn"] + [("sync", "cpu"), ("sync", "cpu"), "fn", ("sync", "cpu")] * 2


def test_profile_calls_uses_the_device_it_is_given_and_three_tries_by_default(monkeypatch):
    import course_utils.profiling as profiling

    synced, asked = [], []
    monkeypatch.setattr(profiling, "synchronize", lambda d: synced.append(d))
    monkeypatch.setattr(profiling, "profiler_activities",
                        lambda d: asked.append(d) or [ProfilerActivity.CPU])
    calls = []
    profile_calls(lambda: calls.append(1), "meta")  # a device that is not this machine's best
    assert len(calls) == 1 + 3  # the warm-up, then three recorded tries
    assert set(map(str, synced)) == {"meta"} and list(map(str, asked)) == ["meta"]
    calls.clear()
    profile_calls(lambda: calls.append(1), "cpu", tries=1)  # one try is allowed
    assert len(calls) == 2


def drawn(trace, monkeypatch):
    """The Axes draw_timeline made (plt.show left out), and its figure closed after."""
    matplotlib.use("Agg")
    monkeypatch.setattr(plt, "show", lambda: None)
    draw_timeline(trace, "a title")
    ax = plt.gcf().axes[0]
    plt.close("all")
    return ax


def bar_colours(collection):
    return [matplotlib.colors.to_hex(c) for c in collection.get_facecolor()]


def test_draw_timeline_draws_ranges_and_operators_by_phase(monkeypatch):
    prof = one_step_and_a_batch()
    ax = drawn(prof, monkeypatch)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["ranges", "operators"]
    assert ax.get_title() == "a title" and ax.get_xlabel() == "time (ms)"
    ranges, operators = ax.collections
    ops = top_level_ops(prof)
    assert bar_colours(operators) == [matplotlib.colors.to_hex(PHASE_COLOURS[phase(e)])
                                      for e in ops]
    assert set(bar_colours(ranges)) == {matplotlib.colors.to_hex(PHASE_COLOURS["step"]),
                                        matplotlib.colors.to_hex(PHASE_COLOURS["data"])}
    # Bars in ms from the first bar: the earliest starts at 0, each as long as its event.
    t0 = min(e.time_range.start for e in prof.events() if e.cpu_parent is None
             and (e.is_user_annotation or e in ops))
    first = ops[0]
    assert operators.get_paths()[0].get_extents().x0 == pytest.approx(
        (first.time_range.start - t0) / 1e3, abs=1e-6)
    assert operators.get_paths()[0].get_extents().width == pytest.approx(
        first.time_range.elapsed_us() / 1e3, abs=1e-6)
    assert "GPU kernels" not in [t.get_text() for t in ax.get_legend().get_texts()]
    # The ranges row holds the outermost ranges only, a DataLoader's fetch in its own colour.
    outer = [e for e in prof.events() if e.cpu_parent is None and e.is_user_annotation]
    assert bar_colours(ranges) == [matplotlib.colors.to_hex(
        PHASE_COLOURS["data" if DATA_RANGE in e.name else "step"]) for e in outer]
    # Each row's bars centred on its tick, the first row at the top; edges in the bars' own
    # colour, so that a thin bar does not look idle.
    for row, bars in enumerate([ranges, operators]):
        extents = bars.get_paths()[0].get_extents()
        assert (extents.y0, extents.height) == pytest.approx((row - 0.35, 0.7))
        assert (bars.get_edgecolor() == bars.get_facecolor()).all()
    assert ax.get_ylim() == pytest.approx((1.5, -0.5))
    legend = ax.get_legend()
    assert [t.get_text() for t in legend.get_texts()] == [k for k in PHASE_COLOURS
                                                          if k != "GPU kernels"]
    assert [matplotlib.colors.to_hex(h.get_facecolor()) for h in legend.legend_handles] == [
        matplotlib.colors.to_hex(PHASE_COLOURS[k]) for k in PHASE_COLOURS if k != "GPU kernels"]


def test_draw_timeline_puts_its_legend_beside_the_bars(monkeypatch):
    """Right of the plot, level with its top: the legend never covers a bar."""
    matplotlib.use("Agg")
    monkeypatch.setattr(plt, "show", lambda: None)
    draw_timeline(one_step_and_a_batch(), "a title")
    fig = plt.gcf()
    fig.canvas.draw()
    ax = fig.axes[0]
    box, legend = ax.get_window_extent(), ax.get_legend().get_window_extent()
    plt.close("all")
    assert legend.x0 > box.x1 and box.y1 - 10 < legend.y1 <= box.y1  # 10 px: its padding


def test_draw_timeline_of_an_empty_trace_draws_two_empty_rows(monkeypatch):
    ax = drawn([], monkeypatch)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["ranges", "operators"]
    assert [len(c.get_paths()) for c in ax.collections] == [0, 0]


def test_draw_timeline_adds_a_row_per_gpu_stream(monkeypatch):
    def ev(name, start, end, device=DeviceType.CUDA, stream=7, annotation=False):
        return SimpleNamespace(name=name, device_type=device, is_user_annotation=annotation,
                               cpu_parent=None, device_resource_id=stream,
                               time_range=SimpleNamespace(start=start, end=end,
                                                          elapsed_us=lambda: end - start))
    events = [ev("step", 1000, 5000, DeviceType.CPU, annotation=True),
              ev("aten::mm", 1100, 1200, DeviceType.CPU),
              ev("gemm", 1300, 3000), ev("Memcpy HtoD", 3000, 3100, stream=9)]
    ax = drawn(events, monkeypatch)
    assert [t.get_text() for t in ax.get_yticklabels()] == [
        "ranges", "operators", "GPU stream 7", "GPU stream 9"]
    kernel_row = ax.collections[2]
    assert bar_colours(kernel_row) == [matplotlib.colors.to_hex(PHASE_COLOURS["GPU kernels"])]
    extents = kernel_row.get_paths()[0].get_extents()
    assert (extents.x0, extents.width) == pytest.approx((0.3, 1.7))  # ms after the first bar
    assert "GPU kernels" in [t.get_text() for t in ax.get_legend().get_texts()]

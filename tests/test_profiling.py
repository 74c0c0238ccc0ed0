"""The trace readers of 07 and 16, on a real CPU trace and on made-up GPU events."""

import os
import warnings
from types import SimpleNamespace

import torch
from torch.autograd import DeviceType
from torch.profiler import ProfilerActivity, profile, record_function

from course_utils.profiling import (ancestors, busy_seconds, gpu_kernels,
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

"""Work counts against PyTorch's FLOP counter and tensor sizes; sweeps, crossover, recorded files."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from torch.utils.flop_counter import FlopCounterMode

from course_utils.sweeps import (
    SweepResult,
    conv2d_flops,
    conv2d_output_size,
    crossover,
    device_slug,
    elementwise_bytes,
    format_rate,
    load_recorded_sweeps,
    matmul_bytes,
    matmul_flops,
    run_sweep,
    save_sweeps,
)


def counted_flops(fn, *args, **kwargs) -> int:  # type: ignore[no-untyped-def]
    """FLOPs PyTorch's own counter attributes to fn(*args, **kwargs)."""
    with FlopCounterMode(display=False) as counter:
        fn(*args, **kwargs)
    return int(counter.get_total_flops())


@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (3, 5, 7), (64, 64, 64), (128, 32, 1000)])
def test_matmul_flops_match_torch_counter(m: int, k: int, n: int) -> None:
    assert matmul_flops(m, k, n) == counted_flops(torch.mm, torch.randn(m, k), torch.randn(k, n))


def test_matmul_flops_known_value() -> None:
    assert matmul_flops(512, 512, 512) == 268_435_456  # 2 * 512**3


def test_matmul_bytes_are_the_three_tensors() -> None:
    a, b = torch.randn(3, 5), torch.randn(5, 7)
    assert matmul_bytes(3, 5, 7) == a.nbytes + b.nbytes + (a @ b).nbytes
    assert matmul_bytes(3, 5, 7, itemsize=2) == (15 + 35 + 21) * 2


CONV_CASES = [
    # batch, c_in, c_out, height, width, kernel, stride, padding, dilation, groups
    (1, 1, 1, 5, 5, 3, 1, 0, 1, 1),
    (8, 32, 32, 16, 16, 3, 1, 1, 1, 1),
    (2, 8, 12, 17, 13, (3, 5), (2, 1), (1, 2), (1, 2), 2),
    (4, 16, 16, 10, 10, 3, 1, 1, 1, 16),  # depthwise
]


@pytest.mark.parametrize("case", CONV_CASES)
def test_conv2d_flops_and_shape_match_torch(case: tuple) -> None:  # type: ignore[type-arg]
    batch, c_in, c_out, h, w, kernel, stride, padding, dilation, groups = case
    kh, kw = (kernel, kernel) if isinstance(kernel, int) else kernel
    x = torch.randn(batch, c_in, h, w)
    weight = torch.randn(c_out, c_in // groups, kh, kw)
    kwargs = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
    assert conv2d_flops(batch, c_in, c_out, h, w, kernel, **kwargs) == counted_flops(
        F.conv2d, x, weight, **kwargs)
    out = F.conv2d(x, weight, **kwargs)
    s = (stride, stride) if isinstance(stride, int) else stride
    p = (padding, padding) if isinstance(padding, int) else padding
    d = (dilation, dilation) if isinstance(dilation, int) else dilation
    assert out.shape[2] == conv2d_output_size(h, kh, s[0], p[0], d[0])
    assert out.shape[3] == conv2d_output_size(w, kw, s[1], p[1], d[1])


def test_conv2d_flops_known_value() -> None:
    # 'same' 3x3 conv: every output value is a 3*3*c_in dot product, 2 FLOPs per term.
    assert conv2d_flops(8, 32, 32, 64, 64, 3, padding=1) == 2 * 8 * 32 * 64 * 64 * 32 * 9


@pytest.mark.parametrize("kwargs", [dict(groups=3), dict(kernel=0), dict(padding=-1),
                                    dict(kernel=(3, 3, 3)), dict(batch=0), dict(kernel=9)])
def test_conv2d_bad_input(kwargs: dict) -> None:  # type: ignore[type-arg]
    args = dict(batch=1, c_in=4, c_out=4, height=5, width=5, kernel=3)
    args.update(kwargs)
    with pytest.raises(ValueError):
        conv2d_flops(**args)  # type: ignore[arg-type]


def test_elementwise_bytes_match_tensor_sizes() -> None:
    a, b = torch.randn(1000), torch.randn(1000)
    assert elementwise_bytes(1000) == a.nbytes + b.nbytes + (a + b).nbytes
    assert elementwise_bytes(10, n_inputs=1, itemsize=8) == 160
    with pytest.raises(ValueError, match="numel"):
        elementwise_bytes(0)


@pytest.mark.parametrize("bad", [0, -3, 2.0, True, "4"])
def test_matmul_bad_sizes(bad: object) -> None:
    with pytest.raises(ValueError):
        matmul_flops(bad, 2, 2)  # type: ignore[arg-type]


@pytest.mark.parametrize("value,unit,text", [(12.3e9, "FLOP", "12.3 GFLOP/s"), (4.56e10, "byte", "45.6 GB/s"),
                                             (1.5e15, "FLOP", "1.5 PFLOP/s"), (0.5, "byte", "0.5 B/s")])
def test_format_rate(value: float, unit: str, text: str) -> None:
    assert format_rate(value, unit) == text


def test_format_rate_bad_unit() -> None:
    with pytest.raises(ValueError, match="unit"):
        format_rate(1.0, "bytes")


def test_sweep_result_throughput_and_best() -> None:
    r = SweepResult("mm", "cpu", (1, 2, 4), (1.0, 2.0, 2.0), work=(10.0, 40.0, 60.0))
    assert r.throughput() == (10.0, 20.0, 30.0)
    assert r.best() == (4, 30.0)
    with pytest.raises(ValueError, match="no work"):
        SweepResult("mm", "cpu", (1,), (1.0,)).throughput()


@pytest.mark.parametrize("kwargs", [dict(sizes=(1, 2), seconds=(1.0,)), dict(sizes=(2, 1), seconds=(1.0, 1.0)),
                                    dict(sizes=(1,), seconds=(0.0,)), dict(sizes=(1,), seconds=(1.0,), unit="B"),
                                    dict(sizes=(1,), seconds=(1.0,), work=(1.0, 2.0)), dict(sizes=(), seconds=())])
def test_sweep_result_validation(kwargs: dict) -> None:  # type: ignore[type-arg]
    with pytest.raises(ValueError):
        SweepResult("op", "cpu", **kwargs)


def test_sweep_result_round_trip() -> None:
    r = SweepResult("add", "cpu", (8, 16), (1e-6, 2e-6), work=(96.0, 192.0), unit="byte",
                    iqr=(1e-7, 1e-7), num_threads=2)
    assert SweepResult.from_dict("add", json.loads(json.dumps(r.to_dict()))) == r
    minimal = SweepResult.from_dict("x", {"sizes": [1, 2], "seconds": [0.1, 0.2]})
    assert minimal.work is None and minimal.unit == "FLOP"
    with pytest.raises(ValueError, match="seconds"):
        SweepResult.from_dict("x", {"sizes": [1]})


def test_run_sweep_measures_known_durations() -> None:
    def make_case(size: int):  # type: ignore[no-untyped-def]
        return time.sleep, (size / 1000,)

    r = run_sweep("sleep", make_case, [5, 20], device="cpu", work=lambda s: 2.0 * s,
                  min_run_time=0.1, warmup=0)
    assert r.sizes == (5, 20) and r.device == "cpu" and r.num_threads == torch.get_num_threads()
    assert 0.005 <= r.seconds[0] < 0.015 and 0.02 <= r.seconds[1] < 0.04
    assert r.work == (10.0, 40.0) and len(r.iqr) == 2


def test_run_sweep_times_a_real_op() -> None:
    r = run_sweep("mm", lambda n: (torch.mm, (torch.randn(n, n), torch.randn(n, n))), [8, 32],
                  device="cpu", work=lambda n: matmul_flops(n, n, n), min_run_time=0.02, warmup=1)
    assert all(t > 0 for t in r.throughput())
    # The Timings behind the curve are kept, for their noise verdicts.
    assert [t.median for t in r.timings] == list(r.seconds)
    assert [t.iqr for t in r.timings] == list(r.iqr)


def test_run_sweep_bad_input() -> None:
    with pytest.raises(TypeError, match="make_case"):
        run_sweep("x", 3, [1], device="cpu")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="size"):
        run_sweep("x", lambda s: (time.sleep, (0,)), [0], device="cpu")


@pytest.mark.parametrize("cpu,acc,expected", [
    ([1, 2, 4, 8], [2, 3, 3, 4], 4),  # the accelerator wins from size 4 on
    ([1, 2, 4, 8], [2, 3, 5, 9], None),  # never wins
    ([5, 5, 5, 5], [1, 1, 1, 1], 1),  # wins everywhere: the smallest size
    ([1, 9, 1, 9], [2, 1, 2, 1], 8),  # wins at 2 but loses again at 4: the crossover is 8
    ([1, 1, 1, 1], [1, 1, 1, 1], None),  # a tie is no win
])
def test_crossover(cpu: list[float], acc: list[float], expected: int | None) -> None:
    assert crossover([1, 2, 4, 8], cpu, acc) == expected


def test_crossover_bad_input() -> None:
    with pytest.raises(ValueError, match="lengths"):
        crossover([1, 2], [1.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="increasing"):
        crossover([2, 1], [1.0, 1.0], [1.0, 1.0])


def test_device_slug() -> None:
    assert device_slug("NVIDIA H100 80GB HBM3") == "nvidia-h100-80gb-hbm3"
    assert device_slug(" Apple GPU (MPS) on arm64 ") == "apple-gpu-mps-on-arm64"
    with pytest.raises(ValueError):
        device_slug("---")


def test_save_and_load_recorded_sweeps(tmp_path: Path) -> None:
    r = SweepResult("matmul", "cuda:0", (64, 128), (1e-5, 2e-5), work=(5.2e5, 4.2e6))
    path = tmp_path / "results" / "gpu-x.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"pinned": {"sizes": [1]}}))  # another notebook's key
    save_sweeps(path, [r], device_name="GPU X", torch_version="2.13.0", date="2025-01-31")
    (tmp_path / "results" / "other.json").write_text(json.dumps({"device": "no sweeps here"}))
    runs = load_recorded_sweeps(tmp_path / "results")
    assert len(runs) == 1
    run = runs[0]
    assert run.device_name == "GPU X" and run.date == "2025-01-31" and run.torch_version == "2.13.0"
    assert run.sweeps["matmul"] == r
    assert run.sweeps["matmul"].label == run.label == "recorded on GPU X (2025-01-31, torch 2.13.0)"
    assert json.loads(path.read_text())["pinned"] == {"sizes": [1]}  # kept
    assert '"sizes": [64, 128]' in path.read_text()  # a list of numbers stays on one line


def test_load_recorded_sweeps_edge_cases(tmp_path: Path) -> None:
    assert load_recorded_sweeps(tmp_path / "absent") == []
    (tmp_path / "broken.json").write_text("{not json")
    with pytest.raises(ValueError, match="broken.json"):
        load_recorded_sweeps(tmp_path)


def test_other_keys_can_hold_curves(tmp_path: Path) -> None:
    r = SweepResult("h2d", "cuda:0", (1024,), (1e-5,), work=(1024.0,), unit="byte")
    save_sweeps(tmp_path / "x.json", [r], device_name="GPU X", key="transfers")
    assert load_recorded_sweeps(tmp_path) == []  # nothing under 'sweeps'
    (run,) = load_recorded_sweeps(tmp_path, key="transfers")
    assert run.sweeps["h2d"] == r

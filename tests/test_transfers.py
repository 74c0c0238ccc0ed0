"""course_utils.transfers against hand-computed sizes, NumPy patterns and real copies."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from course_utils.transfers import (
    CopyTiming,
    gb_per_s,
    pattern,
    pattern_holds,
    pinned_memory_available,
    read_records,
    sweep_copies,
    time_copy,
    to_record,
    transfer_sizes,
    write_record,
)

KIB, MIB = 2**10, 2**20
HAS_ACCEL = torch.accelerator.is_available()


def test_sizes_default_is_4kib_to_256mib_in_steps_of_4() -> None:
    sizes = transfer_sizes()
    assert sizes == [4 * KIB * 4**k for k in range(9)]
    assert sizes[0] == 4096 and sizes[-1] == 256 * MIB


@pytest.mark.parametrize("args,expected", [((1, 1), [1]), ((1, 10, 2), [1, 2, 4, 8]),
                                           ((3, 100, 3), [3, 9, 27, 81]), ((5, 24, 5), [5])])
def test_sizes_small_cases(args: tuple[int, ...], expected: list[int]) -> None:
    assert transfer_sizes(*args) == expected


@pytest.mark.parametrize("args", [(0, 10), (10, 5), (1, 10, 1)])
def test_sizes_bad_values(args: tuple[int, ...]) -> None:
    with pytest.raises(ValueError, match="min_bytes"):
        transfer_sizes(*args)


@pytest.mark.parametrize("args", [(1.5, 10), (1, "10"), (True, 10)])
def test_sizes_bad_types(args: tuple[object, ...]) -> None:
    with pytest.raises(TypeError, match="must be an int"):
        transfer_sizes(*args)  # type: ignore[arg-type]


def test_gb_per_s_by_hand() -> None:
    assert gb_per_s(10**9, 1.0) == 1.0
    assert gb_per_s(MIB, 1e-3) == pytest.approx(1.048576)
    assert gb_per_s(0, 2.0) == 0.0
    for bad in ((-1, 1.0), (1, 0.0), (1, -1.0), (1, float("nan"))):
        with pytest.raises(ValueError):
            gb_per_s(*bad)


@pytest.mark.parametrize("n", [1, 250, 251, 252, 4096, 100_003])
def test_pattern_matches_numpy(n: int) -> None:
    t = pattern(n)
    assert t.dtype == torch.uint8 and t.shape == (n,) and t.device.type == "cpu"
    np.testing.assert_array_equal(t.numpy(), (np.arange(n) % 251).astype(np.uint8))
    assert pattern_holds(t)


def test_pattern_holds_catches_wrong_copies() -> None:
    n = 10_000
    assert not pattern_holds(pattern(n + 1)[1:])  # shifted by one byte
    assert not pattern_holds(torch.zeros(n, dtype=torch.uint8))
    damaged = pattern(n)
    damaged[-1] += 1  # the last byte is always among the samples
    assert not pattern_holds(damaged)


def test_pattern_holds_on_a_large_tensor() -> None:
    # 2**25 - 1 is not a float32: positions computed in floats would land past the end.
    t = pattern(2**25)
    assert pattern_holds(t)
    t[-1] += 1
    assert not pattern_holds(t)


@pytest.mark.parametrize("bad", [0, -3, 2.0, True])
def test_pattern_bad_size(bad: object) -> None:
    with pytest.raises(ValueError, match="nbytes"):
        pattern(bad)  # type: ignore[arg-type]


def test_pattern_on_meta_has_shape_only() -> None:
    t = pattern(1000, "meta")
    assert t.device.type == "meta" and t.shape == (1000,)


def test_pinned_availability_matches_the_build() -> None:
    if not HAS_ACCEL:
        assert pinned_memory_available() is False
        with pytest.raises(RuntimeError, match="pinned_memory_available"):
            pattern(10, pinned=True)
    with pytest.raises(ValueError, match="host"):
        pattern(10, "meta", pinned=True)


@pytest.mark.parametrize("method", ["copy_", "to"])
def test_host_copy_is_timed_and_checked(method: str) -> None:
    p = time_copy(64 * KIB, "cpu", "cpu", method=method, min_run_time=0.01)
    assert isinstance(p, CopyTiming)
    assert p.nbytes == 64 * KIB and p.route == "cpu -> cpu"
    assert p.timing.device == "cpu" and p.timing.num_threads == torch.get_num_threads()
    assert p.seconds == p.timing.median > 0
    assert p.gbps == pytest.approx(64 * KIB / p.timing.median / 1e9)


def test_threads_are_passed_to_benchmark() -> None:
    p = time_copy(64 * KIB, "cpu", "cpu", num_threads=1, min_run_time=0.01)
    assert p.timing.num_threads == 1


def test_copy_to_meta_runs_without_data() -> None:
    p = time_copy(4 * KIB, "cpu", "meta", min_run_time=0.01)
    assert p.route == "cpu -> meta" and p.timing.device == "meta"


def test_bad_options() -> None:
    with pytest.raises(ValueError, match="method"):
        time_copy(16, "cpu", "cpu", method="clone")
    with pytest.raises(ValueError, match="host"):
        time_copy(16, "meta", "meta", pinned=True)
    with pytest.raises(ValueError, match="sizes"):
        sweep_copies([], "cpu", "cpu")


def test_sweep_returns_one_timing_per_size() -> None:
    sizes = transfer_sizes(KIB, 16 * KIB)
    points = sweep_copies(sizes, "cpu", "cpu", min_run_time=0.01)
    assert [p.nbytes for p in points] == sizes


def test_record_round_trip_keeps_other_keys(tmp_path: Path) -> None:
    points = sweep_copies([KIB, 4 * KIB], "cpu", "cpu", min_run_time=0.01)
    path = tmp_path / "results" / "some-gpu.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"device": "Some GPU", "sweeps": {"matmul": {}}}))
    write_record(path, {"host copy": points, "empty": []}, device_name="Some GPU")
    data = json.loads(path.read_text())
    assert data["sweeps"] == {"matmul": {}}  # another notebook's key is kept
    assert data["torch"] == torch.__version__ and data["device"] == "Some GPU"
    entry = data["transfers"]["host copy"]
    assert entry["unit"] == "byte" and entry["sizes"] == entry["work"] == [KIB, 4 * KIB]
    assert entry["device"] == "cpu" and entry["route"] == "cpu -> cpu"
    assert "empty" not in data["transfers"]
    (tmp_path / "results" / "other.json").write_text(json.dumps({"sweeps": {}}))
    [rec] = read_records(tmp_path / "results")
    assert rec.device == "Some GPU" and rec.torch == torch.__version__ and rec.path == path
    assert rec.curves == {"host copy": [(p.nbytes, p.seconds) for p in points]}
    assert to_record({"host copy": points}) == data["transfers"]


def test_read_records_empty_and_malformed(tmp_path: Path) -> None:
    assert read_records(tmp_path) == []
    assert read_records(tmp_path / "missing") == []
    (tmp_path / "bad.json").write_text(json.dumps({"transfers": {"h2d": {"sizes": [1]}}}))
    with pytest.raises(ValueError, match="malformed"):
        read_records(tmp_path)


@pytest.mark.gpu
@pytest.mark.parametrize("pinned", [False, True])
@pytest.mark.parametrize("non_blocking", [False, True])
def test_cuda_copies_both_ways_are_checked(pinned: bool, non_blocking: bool) -> None:
    assert pinned_memory_available()
    for src, dst in (("cpu", "cuda"), ("cuda", "cpu"), ("cuda", "cuda")):
        pin = pinned and "cpu" in (src, dst)
        p = time_copy(MIB + 3, src, dst, pinned=pin, non_blocking=non_blocking,
                      min_run_time=0.01)
        assert p.timing.device.startswith("cuda") and p.gbps > 0


@pytest.mark.gpu
def test_cuda_pattern_and_pinned_pattern() -> None:
    assert pattern(4 * KIB, pinned=True).is_pinned()
    assert pattern_holds(pattern(4 * KIB, "cuda"))

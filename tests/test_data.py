"""peaks against hand-computed values, and the layout of peaks_grid."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from course_utils import data_path, peaks, peaks_grid, seed_everything

# Worked by hand from f(x, y) = 3(1-x)^2 e^(-x^2-(y+1)^2) - 10(x/5 - x^3 - y^5) e^(-x^2-y^2) - e^(-(x+1)^2-y^2)/3
HAND = [
    ((0.0, 0.0), 3 * math.exp(-1) - math.exp(-1) / 3),  # (8/3)/e
    ((1.0, 1.0), 18 * math.exp(-2) - math.exp(-5) / 3),  # first term vanishes at x = 1
    ((0.0, -1.0), 3 - 10 * math.exp(-1) - math.exp(-2) / 3),
    ((-1.0, 0.0), 12 * math.exp(-2) - 8 * math.exp(-1) - 1 / 3),
]


@pytest.mark.parametrize("point,value", HAND)
def test_peaks_hand_values(point: tuple[float, float], value: float) -> None:
    x, y = (torch.tensor(v, dtype=torch.float64) for v in point)
    assert peaks(x, y).item() == pytest.approx(value, rel=1e-12)


def test_peaks_known_extremes() -> None:
    # MATLAB's peaks has its maximum about 8.106 near (-0.009, 1.581) and minimum about -6.551 near (0.228, -1.626).
    top, bottom = peaks(torch.tensor([-0.0093, 0.2283]), torch.tensor([1.5814, -1.6255])).tolist()
    assert top == pytest.approx(8.1062, abs=1e-3) and bottom == pytest.approx(-6.5511, abs=1e-3)


def test_grid_shapes_and_dtype() -> None:
    X, y = peaks_grid(200)
    assert X.shape == (40_000, 2) and y.shape == (40_000, 1)
    assert X.dtype == torch.float32 and y.dtype == torch.float32
    assert X.device == torch.device("cpu")


def test_grid_layout_x_varies_fastest() -> None:
    X, y = peaks_grid(4, lo=-1.0, hi=2.0)
    assert X[0].tolist() == [-1.0, -1.0]
    assert X[1].tolist() == [0.0, -1.0]
    assert X[3].tolist() == [2.0, -1.0]
    assert X[-1].tolist() == [2.0, 2.0]
    grid = y.reshape(4, 4)
    assert grid[1, 2].item() == pytest.approx(peaks(torch.tensor(1.0), torch.tensor(0.0)).item(), rel=1e-5)  # row = y index, column = x index


def test_grid_values_are_peaks() -> None:
    X, y = peaks_grid(50)
    expected = peaks(X[:, 0].double(), X[:, 1].double()).float().unsqueeze(1)
    torch.testing.assert_close(y, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n", [1, 0, -5, 2.5, "10", True])
def test_grid_bad_n(n: object) -> None:
    with pytest.raises(ValueError, match="n must"):
        peaks_grid(n)  # type: ignore[arg-type]


@pytest.mark.parametrize("lo,hi", [(1.0, 1.0), (2.0, -2.0), (float("nan"), 1.0), (0.0, float("inf"))])
def test_grid_bad_range(lo: float, hi: float) -> None:
    with pytest.raises(ValueError, match="lo < hi"):
        peaks_grid(10, lo=lo, hi=hi)


def test_grid_on_meta_device() -> None:
    X, y = peaks_grid(5, device="meta")
    assert X.device.type == "meta" and y.shape == (25, 1)


def test_seed_everything_repeats_every_generator() -> None:
    import random

    def draw() -> tuple[float, float, list[float]]:
        return random.random(), float(np.random.rand()), torch.rand(3).tolist()

    seed_everything(123)
    first = draw()
    seed_everything(123)
    assert draw() == first
    seed_everything(124)
    assert draw() != first


@pytest.mark.parametrize("bad", [-1, 2**32, 1.5, "0", None, True])
def test_seed_bad_input(bad: object) -> None:
    with pytest.raises(ValueError, match="seed"):
        seed_everything(bad)  # type: ignore[arg-type]


@pytest.mark.gpu
def test_grid_on_cuda_matches_cpu() -> None:
    X, y = peaks_grid(64, device="cuda")
    Xc, yc = peaks_grid(64)
    assert X.is_cuda and y.is_cuda
    torch.testing.assert_close(y.cpu(), yc)


@pytest.mark.gpu
def test_seed_reaches_cuda() -> None:
    seed_everything(7)
    a = torch.rand(4, device="cuda")
    seed_everything(7)
    assert torch.equal(a, torch.rand(4, device="cuda"))


def test_published_allreduce_rows_are_consistent() -> None:
    """Each printed row of nccl-tests: algbw = size / time, busbw = algbw x 2(n-1)/n."""
    import csv

    with open(data_path("published_allreduce.csv"), encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    curves = {r["curve"] for r in rows}
    assert len(curves) >= 3 and all(r["source_url"].startswith("https://") for r in rows)
    for r in rows:
        size, t_us, n = float(r["size_bytes"]), float(r["time_us"]), int(r["n_gpus"])
        algbw, busbw = float(r["algbw_GBps"]), float(r["busbw_GBps"])
        if algbw >= 1:  # printed to two decimals: smaller ones are rounded away
            assert abs(size / t_us / 1e3 - algbw) <= 0.01 * algbw + 0.01, r
            assert abs(algbw * 2 * (n - 1) / n - busbw) <= 0.01 * busbw + 0.01, r
    for curve in curves:  # each curve rises with the message size, from 8 bytes
        sizes = [int(r["size_bytes"]) for r in rows if r["curve"] == curve]
        assert sizes == sorted(sizes) and sizes[0] == 8 and len(sizes) >= 6, curve


def test_published_fsdp_rows_are_consistent() -> None:
    """torchtitan's FSDP2 tables: each configuration at two GPU counts, as printed."""
    import csv
    import re

    with open(data_path("published_fsdp.csv"), encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    curves: dict[str, list[dict]] = {}
    for r in rows:
        curves.setdefault(r["curve"], []).append(r)
        assert int(r["n_gpus"]) == 8 * int(r["n_nodes"]), r  # 8 GPUs per host
        assert r["model"] == "Llama 3.1 8B" and r["local_batch_size"] == "2", r
        if r["global_batch_size"]:  # printed: the local batch times the GPUs
            assert int(r["global_batch_size"]) == 2 * int(r["n_gpus"]), r
        assert (r["torch_compile"] == "yes") == ("torch.compile" in r["techniques"]), r
        assert (r["float8"] == "yes") == ("Float8" in r["techniques"]), r
        assert re.fullmatch(r"https://github\.com/pytorch/torchtitan/blob/[0-9a-f]{40}/\S+",
                            r["source_url"]), r
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", r["posted"]), r
    assert len(curves) == 4 and all(len(c) == 2 for c in curves.values())
    for curve, (small, large) in curves.items():  # more GPUs: a smaller share of each
        assert int(small["n_gpus"]) < int(large["n_gpus"]), curve
        assert float(large["memory_gib"]) < float(small["memory_gib"]), curve
        kept = float(large["tokens_per_s_per_gpu"]) / float(small["tokens_per_s_per_gpu"])
        assert 0.95 <= kept < 1, curve  # nearly all of each GPU's throughput kept
    # The figures notebook 16 reads, as the torchtitan team's Tables 1 and 3 print them.
    printed = {(r["techniques"], r["n_gpus"]): (r["tokens_per_s_per_gpu"], r["memory_gib"])
               for r in rows if r["reported_by"] == "torchtitan team"}
    assert printed == {("FSDP", "8"): ("5762", "82.4"), ("FSDP", "128"): ("5605", "67.0"),
                       ("FSDP + torch.compile", "8"): ("6667", "77.0"),
                       ("FSDP + torch.compile", "128"): ("6514", "62.0"),
                       ("FSDP + torch.compile + Float8", "8"): ("8532", "76.8"),
                       ("FSDP + torch.compile + Float8", "128"): ("8380", "61.8")}

"""course_utils.training against references: PyTorch's own loop, known fits, known op counts."""

from __future__ import annotations

import copy
import gc
import json
import sys
import time
import weakref
from pathlib import Path

import pytest
import torch
from torch import nn

from course_utils import peaks_grid
from course_utils.training import (
    cuda_graph_step,
    launch_floor,
    load_training_records,
    make_step,
    peaks_mlp,
    profile_step,
    same_weights,
    save_training_record,
    time_per_epoch,
    timed_call,
    train_full_batch,
)


def test_peaks_mlp_is_the_labs_network() -> None:
    model = peaks_mlp()
    linears = [m for m in model if isinstance(m, nn.Linear)]
    assert [(m.in_features, m.out_features) for m in linears] == [(2, 20), (20, 5), (5, 1)]
    assert [type(m) for m in model] == [nn.Linear, nn.ReLU, nn.Linear, nn.ReLU, nn.Linear]
    assert sum(p.numel() for p in model.parameters()) == 2 * 20 + 20 + 20 * 5 + 5 + 5 + 1
    assert model(torch.zeros(7, 2)).shape == (7, 1)


@pytest.mark.parametrize("bad", [(2,), (), (2, 0, 1), (2, 2.5, 1), (2, True, 1)])
def test_peaks_mlp_bad_widths(bad: tuple) -> None:
    with pytest.raises(ValueError, match="widths"):
        peaks_mlp(bad)


def test_same_weights() -> None:
    torch.manual_seed(0)
    a = peaks_mlp()
    b = copy.deepcopy(a)
    assert same_weights(a, b) and b[0].weight is not a[0].weight
    with torch.no_grad():
        b[2].bias[0] += 1e-7  # the smallest change counts
    assert not same_weights(a, b)
    assert not same_weights(a, peaks_mlp((2, 20, 1)))  # other layers
    assert not same_weights(a, peaks_mlp())  # fresh random weights


def _reference_losses(model: nn.Module, x: torch.Tensor, y: torch.Tensor, n: int) -> list[float]:
    """The loop written out with PyTorch's Adam and MSELoss, reading the loss each epoch."""
    opt = torch.optim.Adam(model.parameters(), lr=0.08)
    out = []
    for _ in range(n):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        out.append(loss.item())
    return out


def test_train_full_batch_matches_the_written_out_loop() -> None:
    torch.manual_seed(1)
    x, y = peaks_grid(12)
    model = peaks_mlp()
    twin = copy.deepcopy(model)
    losses = train_full_batch(model, x, y, 25)
    assert losses.device.type == "cpu" and losses.shape == (25,)
    assert losses.tolist() == _reference_losses(twin, x, y, 25)  # bit for bit
    assert same_weights(model, twin)


def test_train_full_batch_fits_a_line() -> None:
    torch.manual_seed(0)
    x = torch.linspace(-1, 1, 64).unsqueeze(1)
    model = peaks_mlp((1, 1))  # one Linear layer: y = w x + b
    losses = train_full_batch(model, x, 3 * x - 2, 300, lr=0.08)
    assert losses[-1] < 1e-8 < losses[0]
    assert model[0].weight.item() == pytest.approx(3.0, abs=1e-3)
    assert model[0].bias.item() == pytest.approx(-2.0, abs=1e-3)


def test_same_start_same_run_on_one_device() -> None:
    torch.manual_seed(2)
    x, y = peaks_grid(10)
    a = peaks_mlp()
    b = copy.deepcopy(a)
    assert torch.equal(train_full_batch(a, x, y, 10), train_full_batch(b, x, y, 10))


def test_train_full_batch_bad_input() -> None:
    x, y = peaks_grid(4)
    with pytest.raises(ValueError, match="n_epochs"):
        train_full_batch(peaks_mlp(), x, y, 0)
    with pytest.raises(ValueError, match="one device"):
        train_full_batch(peaks_mlp().to("meta"), x, y, 1)
    with pytest.raises(ValueError, match="same number of rows"):
        train_full_batch(peaks_mlp(), x, y[:-1], 1)


def test_make_step_returns_the_loss_before_the_update() -> None:
    torch.manual_seed(3)
    x, y = peaks_grid(6)
    model = peaks_mlp()
    expected = nn.functional.mse_loss(model(x), y).item()
    step = make_step(model, x, y, torch.optim.SGD(model.parameters(), lr=0.01))
    loss = step()
    assert not loss.requires_grad and loss.item() == pytest.approx(expected, rel=1e-6)
    assert step().item() < expected  # the update lowered it


def test_timed_call_returns_result_and_duration() -> None:
    result, seconds = timed_call(lambda: time.sleep(0.05) or 42, "cpu")
    assert result == 42
    assert 0.05 <= seconds < 0.5


def test_time_per_epoch_leaves_the_model_alone() -> None:
    x, y = peaks_grid(8)
    model = peaks_mlp()
    before = copy.deepcopy(model)
    t = time_per_epoch(model, x, y, optimizer_options={"foreach": False}, min_run_time=0.02)
    assert same_weights(model, before)
    assert t.device == "cpu" and t.median > 0 and t.runs >= 1


def test_profile_step_counts_known_operators() -> None:
    a, b = torch.ones(4), torch.ones(4)
    one = profile_step(lambda: torch.add(a, b), "cpu")
    assert one.top_level_calls == 1 and one.aten_calls >= 1 and one.device_kernels is None
    assert one.top_ops == (("aten::add", 1),)
    three = profile_step(lambda: (a + b).mul(2).sum(), "cpu")
    assert three.top_level_calls == 3
    print("stderr is back", file=sys.stderr)  # the quieting of fd 2 was undone


def test_fused_adam_makes_fewer_calls_than_the_loop() -> None:
    x, y = peaks_grid(8)
    counts = {}
    for name, opts in {"loop": {"foreach": False}, "fused": {"fused": True}}.items():
        model = peaks_mlp()
        opt = torch.optim.Adam(model.parameters(), lr=0.08, **opts)
        counts[name] = profile_step(make_step(model, x, y, opt), "cpu").top_level_calls
    assert counts["fused"] < counts["loop"]


def test_launch_floor_on_cpu() -> None:
    t = launch_floor("cpu", min_run_time=0.02)
    assert t.device == "cpu" and 0 < t.median < 1e-3


def test_cuda_graph_step_refuses_the_cpu() -> None:
    x, y = peaks_grid(4)
    with pytest.raises(RuntimeError, match="CUDA"):
        cuda_graph_step(peaks_mlp(), x, y)


def test_records_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "results" / "some-gpu.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"device": "Some GPU", "sweeps": {"matmul": {}}}))
    (tmp_path / "results" / "other.json").write_text(json.dumps({"device": "Other"}))
    record = {"sweep": {"sizes": (100, 400), "cpu_seconds": torch.tensor([1.0, 2.0])}}
    save_training_record(path, record, device_name="Some GPU")
    data = json.loads(path.read_text())
    assert data["sweeps"] == {"matmul": {}}  # another notebook's key is kept
    assert data["device"] == "Some GPU" and data["torch"] == torch.__version__
    found = load_training_records(tmp_path / "results")
    assert len(found) == 1  # other.json has no "training" key
    assert found[0]["device"] == "Some GPU"
    assert found[0]["sweep"] == {"sizes": [100, 400], "cpu_seconds": [1.0, 2.0]}


def test_records_edge_cases(tmp_path: Path) -> None:
    assert load_training_records(tmp_path / "absent") == []
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_training_records(tmp_path)
    with pytest.raises(ValueError, match="non-empty"):
        save_training_record(tmp_path / "x.json", {}, device_name="x")


@pytest.mark.gpu
def test_cuda_graph_replays_match_eager_steps() -> None:
    torch.manual_seed(0)
    x, y = peaks_grid(32, device="cuda")
    eager = peaks_mlp().cuda()
    graphed = copy.deepcopy(eager)
    replay, loss = cuda_graph_step(graphed, x, y, warmup_steps=3)
    # The eager twin takes the same 3 warm-up steps with the same (capturable) Adam.
    opt = torch.optim.Adam(eager.parameters(), lr=0.08, capturable=True)
    step = make_step(eager, x, y, opt)
    for _ in range(3):
        step()
    for _ in range(5):
        replay()
        expected = step()
        torch.testing.assert_close(loss, expected, rtol=1e-4, atol=1e-6)


@pytest.mark.gpu
def test_profile_counts_cuda_kernels() -> None:
    a = torch.ones(1024, device="cuda")
    prof = profile_step(lambda: (a + 1).mul_(2), "cuda")
    assert prof.device_kernels == 2


@pytest.mark.gpu
def test_cuda_graph_step_keeps_what_the_graph_uses_alive() -> None:
    x, y = peaks_grid(8, device="cuda")
    model = peaks_mlp().cuda()
    alive = weakref.ref(model)
    replay, loss = cuda_graph_step(model, x, y)
    del model
    gc.collect()
    assert alive() is not None  # each replay writes into its parameters by address
    replay()
    assert torch.isfinite(loss).item()


@pytest.mark.gpu
def test_profile_counts_kernels_not_annotations() -> None:
    a = torch.ones(1024, device="cuda")

    def annotated() -> None:
        with torch.profiler.record_function("two kernels"):  # mirrored on the GPU timeline
            (a + 1).mul_(2)

    assert profile_step(annotated, "cuda").device_kernels == 2

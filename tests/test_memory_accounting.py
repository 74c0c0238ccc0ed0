"""memory_accounting against references: sizes worked out by hand and PyTorch's own gradients."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.checkpoint import checkpoint

from course_utils.memory_accounting import (
    SavedActivations,
    gradient_bytes,
    optimizer_state_breakdown,
    optimizer_state_bytes,
    parameter_bytes,
    peak_cuda_bytes,
)


def tiny_net() -> nn.Sequential:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))


def test_linear_parameter_bytes() -> None:
    assert parameter_bytes(nn.Linear(10, 20)) == (10 * 20 + 20) * 4
    assert parameter_bytes(nn.Linear(10, 20, bias=False, dtype=torch.float64)) == 10 * 20 * 8


def test_shared_parameter_counts_once() -> None:
    layer = nn.Linear(5, 5)
    assert parameter_bytes(nn.Sequential(layer, layer)) == parameter_bytes(layer)


def test_gradient_bytes_follow_backward_and_zero_grad() -> None:
    layer = nn.Linear(10, 20)
    assert gradient_bytes(layer) == 0
    layer(torch.randn(3, 10)).sum().backward()
    assert gradient_bytes(layer) == parameter_bytes(layer)
    layer.zero_grad(set_to_none=True)
    assert gradient_bytes(layer) == 0


def test_adam_keeps_two_floats_per_parameter_plus_step_counters() -> None:
    layer = nn.Linear(10, 20)
    opt = torch.optim.Adam(layer.parameters())
    assert optimizer_state_bytes(opt) == 0  # created lazily by the first step
    layer(torch.randn(3, 10)).sum().backward()
    opt.step()
    parts = optimizer_state_breakdown(opt)
    assert parts["exp_avg"] == parts["exp_avg_sq"] == (10 * 20 + 20) * 4
    assert parts["step"] == 2 * 4  # one float32 scalar per parameter tensor
    assert optimizer_state_bytes(opt) == sum(parts.values())


def test_sgd_state() -> None:
    layer = nn.Linear(10, 20)
    layer(torch.randn(3, 10)).sum().backward()
    plain = torch.optim.SGD(layer.parameters(), lr=0.1)
    plain.step()
    assert optimizer_state_bytes(plain) == 0
    momentum = torch.optim.SGD(layer.parameters(), lr=0.1, momentum=0.9)
    momentum.step()
    assert optimizer_state_breakdown(momentum) == {"momentum_buffer": (10 * 20 + 20) * 4}


def test_saved_activations_of_a_tiny_network_exactly() -> None:
    model, x = tiny_net(), torch.randn(5, 4)
    with SavedActivations(exclude=model.parameters()) as saved:
        loss = model(x).sum()
    # x (5x4) for the first weight's gradient; the ReLU output (5x3), saved by the ReLU and by
    # the second Linear, counts once; the second weight is a parameter and is excluded.
    assert saved.total_bytes == (5 * 4 + 5 * 3) * 4
    assert saved.count == 2
    assert saved.peak_bytes == saved.alive_bytes() == saved.total_bytes
    loss.backward()
    assert saved.alive_bytes() == 0  # backward frees what it used


def test_parameters_count_unless_excluded() -> None:
    model, x = tiny_net(), torch.randn(5, 4)
    with SavedActivations() as saved:
        model(x).sum()
    assert saved.total_bytes == (5 * 4 + 5 * 3 + 2 * 3) * 4  # plus the second weight


def test_cross_entropy_saves_log_probs_targets_and_a_scalar() -> None:
    model, x, y = tiny_net(), torch.randn(5, 4), torch.tensor([0, 1, 1, 0, 1])
    with SavedActivations(exclude=model.parameters()) as saved:
        F.cross_entropy(model(x), y)
    assert saved.total_bytes == (5 * 4 + 5 * 3 + 5 * 2) * 4 + 5 * 8 + 4


def test_hooks_change_no_gradient() -> None:
    model, x = tiny_net(), torch.randn(5, 4)
    model(x).pow(2).sum().backward()
    reference = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    with SavedActivations(exclude=model.parameters()):
        loss = model(x).pow(2).sum()
    loss.backward()
    for p, g in zip(model.parameters(), reference):
        torch.testing.assert_close(p.grad, g, rtol=0, atol=0)


def test_dropping_the_graph_frees_the_saved_tensors() -> None:
    model, x = tiny_net(), torch.randn(5, 4)
    with SavedActivations(exclude=model.parameters()) as saved:
        out = model(x)
    assert saved.alive_bytes() == saved.total_bytes
    del out
    assert saved.alive_bytes() == 0


def test_peak_over_micro_batches_is_one_micro_batch() -> None:
    model = tiny_net()
    with SavedActivations(exclude=model.parameters()) as saved:
        for _ in range(3):
            model(torch.randn(5, 4)).sum().backward()
    assert saved.count == 6 and saved.total_bytes == 3 * (5 * 4 + 5 * 3) * 4
    assert saved.peak_bytes == (5 * 4 + 5 * 3) * 4


def test_checkpoint_keeps_only_segment_inputs() -> None:
    torch.manual_seed(0)
    block = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 8), nn.ReLU())
    x = torch.randn(6, 8)
    with SavedActivations(exclude=block.parameters()) as plain:
        block(x).sum()
    with SavedActivations(exclude=block.parameters()) as ckpt:
        checkpoint(block, x, use_reentrant=False).sum()
    assert plain.total_bytes == 3 * 6 * 8 * 4  # x and both ReLU outputs
    assert ckpt.total_bytes == 6 * 8 * 4  # only x, the segment's input


def test_a_view_counts_its_whole_storage() -> None:
    base = torch.randn(100, 4)
    w = torch.randn(4, 2, requires_grad=True)
    with SavedActivations(exclude=[w]) as saved:
        base[:10] @ w
    assert saved.total_bytes == 100 * 4 * 4  # the slice keeps all of `base` alive


def test_bad_inputs() -> None:
    with pytest.raises(TypeError, match="nn.Module"):
        parameter_bytes("model")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="nn.Module"):
        gradient_bytes(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Optimizer"):
        optimizer_state_bytes([])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="tensors"):
        SavedActivations(exclude=[1.0])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="callable"):
        peak_cuda_bytes(3, "cpu")  # type: ignore[arg-type]
    meter = SavedActivations()
    with meter, pytest.raises(RuntimeError, match="already in use"):
        meter.__enter__()


def test_peak_is_none_off_cuda_and_fn_is_not_run() -> None:
    calls: list[int] = []
    assert peak_cuda_bytes(lambda: calls.append(1), "cpu") is None
    assert calls == []


@pytest.mark.gpu
def test_cuda_peak_sees_a_temporary() -> None:
    device = torch.device("cuda")
    n = 64 * 2**20
    peak = peak_cuda_bytes(lambda: torch.empty(n, dtype=torch.uint8, device=device), device)
    assert peak is not None and peak >= n
    assert peak_cuda_bytes(lambda: None, device) == 0


@pytest.mark.gpu
def test_cuda_saved_activations_match_cpu() -> None:
    model, x = tiny_net(), torch.randn(5, 4)
    with SavedActivations(exclude=model.parameters()) as on_cpu:
        model(x).sum()
    model, x = model.to("cuda"), x.to("cuda")
    with SavedActivations(exclude=model.parameters()) as on_gpu:
        model(x).sum()
    assert on_gpu.total_bytes == on_cpu.total_bytes

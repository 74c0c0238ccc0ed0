"""The peaks lab's network and step against PyTorch written out by hand."""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn

from course_utils import format_rate, peaks_grid, peaks_model, peaks_step


def test_peaks_model_shape() -> None:
    model = peaks_model()
    widths = [(m.in_features, m.out_features) for m in model if isinstance(m, nn.Linear)]
    assert widths == [(2, 20), (20, 5), (5, 1)]
    assert sum(p.numel() for p in model.parameters()) == 2 * 20 + 20 + 20 * 5 + 5 + 5 + 1
    assert all(p.device.type == "cpu" for p in model.parameters())


def test_peaks_model_computes_the_written_out_network() -> None:
    # Linear, ReLU, Linear, ReLU, Linear: a ReLU dropped or added changes the output.
    torch.manual_seed(0)
    model = peaks_model()
    (w1, b1), (w2, b2), (w3, b3) = [(m.weight, m.bias) for m in model
                                    if isinstance(m, nn.Linear)]
    x = torch.randn(64, 2)
    by_hand = torch.relu(torch.relu(x @ w1.T + b1) @ w2.T + b2) @ w3.T + b3
    torch.testing.assert_close(model(x), by_hand)
    assert [type(m) for m in model] == [nn.Linear, nn.ReLU, nn.Linear, nn.ReLU, nn.Linear]


def test_peaks_step_matches_a_written_out_adam_step() -> None:
    torch.manual_seed(0)
    x, y = peaks_grid(8)
    model = peaks_model()
    twin = copy.deepcopy(model)
    opt = torch.optim.Adam(model.parameters(), lr=0.08)
    twin_opt = torch.optim.Adam(twin.parameters(), lr=0.08)
    for _ in range(3):
        loss = peaks_step(model, opt, x, y)
        twin_opt.zero_grad()
        twin_loss = ((twin(x) - y) ** 2).mean()
        twin_loss.backward()
        twin_opt.step()
        assert not loss.requires_grad
        torch.testing.assert_close(loss, twin_loss.detach())
    for p, q in zip(model.parameters(), twin.parameters()):
        torch.testing.assert_close(p, q)


@pytest.mark.parametrize(("rate", "unit", "text"), [
    (12.34e12, "FLOP", "12.3 TFLOP/s"), (45.6e9, "B", "45.6 GB/s"), (999.0, "B", "999 B/s"),
    (1.5e15, "FLOP", "1.5 PFLOP/s"), (2.5e3, "FLOP", "2.5 kFLOP/s"),
    (999.9e9, "FLOP", "1 TFLOP/s")])  # rounded before the prefix is chosen
def test_format_rate(rate: float, unit: str, text: str) -> None:
    assert format_rate(rate, unit) == text


def test_format_rate_bad_unit() -> None:
    with pytest.raises(ValueError, match="'FLOP' or 'B'"):
        format_rate(1.0, "bytes")

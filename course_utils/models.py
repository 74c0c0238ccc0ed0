"""The peaks lab's network and training step, written out where they are taught (notebook 06)."""

from __future__ import annotations

import torch
from torch import nn


def peaks_model() -> nn.Sequential:
    """The lab's network, on the CPU: Linear 2→20, ReLU, Linear 20→5, ReLU, Linear 5→1."""
    return nn.Sequential(nn.Linear(2, 20), nn.ReLU(), nn.Linear(20, 5), nn.ReLU(),
                         nn.Linear(5, 1))


def peaks_step(model: nn.Module, opt: torch.optim.Optimizer, x: torch.Tensor,
               y: torch.Tensor) -> torch.Tensor:
    """One full-batch step of the lab (MSE, backward, update); the loss, without waiting for it."""
    opt.zero_grad(set_to_none=True)
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    return loss.detach()

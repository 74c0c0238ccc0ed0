"""Shared test set-up: GPU-marked tests skip cleanly on machines without CUDA."""

from __future__ import annotations

import os

import pytest
import torch

os.environ.setdefault("JUPYTER_PREFER_ENV_PATH", "1")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip tests marked `gpu` when no CUDA device is present."""
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU; none on this machine")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)

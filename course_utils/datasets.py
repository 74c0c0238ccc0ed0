"""The course's data: the 'peaks' surface made on the fly, and the files in data/."""

from __future__ import annotations

import math
from pathlib import Path

import torch

from course_utils.devices import pick_device


def peaks(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """MATLAB's 'peaks' surface at (x, y): a smooth landscape of hills and pits to learn."""
    return (3 * (1 - x) ** 2 * torch.exp(-(x**2) - (y + 1) ** 2)
            - 10 * (x / 5 - x**3 - y**5) * torch.exp(-(x**2) - y**2)
            - torch.exp(-((x + 1) ** 2) - y**2) / 3)


def peaks_grid(
    n: int, lo: float = -3.0, hi: float = 3.0, device: str | torch.device | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Sample peaks on an n x n grid over [lo, hi]^2: X (n*n, 2) and y (n*n, 1), float32.

    Row k of X is (x, y) with x varying fastest, so y.reshape(n, n)[i, j] is the value at
    (xs[j], ys[i]), matplotlib's meshgrid layout. `device` None means the CPU.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 2:
        raise ValueError(f"n must be an integer >= 2, got {n!r}.")
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo >= hi:
        raise ValueError(f"need finite lo < hi, got lo={lo!r}, hi={hi!r}.")
    dev = torch.device("cpu") if device is None else pick_device(device)
    axis = torch.linspace(lo, hi, n, dtype=torch.float32)
    gy, gx = torch.meshgrid(axis, axis, indexing="ij")
    X = torch.stack([gx.reshape(-1), gy.reshape(-1)], dim=1)
    y = peaks(X[:, 0], X[:, 1]).unsqueeze(1)
    return X.to(dev), y.to(dev)


def data_path(*parts: str) -> Path:
    """The path of a file in the course's data folder, e.g. data_path("gpu_peaks.csv").

    In a checkout that is data/ beside course_utils/; an installed wheel carries it inside
    the package. A leftover course_utils/data/ folder without the tables (an older checkout's
    recordings, say) does not count.
    """
    package = Path(__file__).resolve().parent
    shipped = package / "data"
    inside = (shipped / "gpu_peaks.csv").is_file()
    return (shipped if inside else package.parent / "data").joinpath(*parts)

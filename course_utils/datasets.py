"""The course's data: the 'peaks' surface made on the fly, and the files in data/."""

from __future__ import annotations

import math
import zlib
from pathlib import Path

import torch
import torch.nn.functional as F

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


class CompressedImages(torch.utils.data.Dataset):
    """Small colour images stored zlib-compressed, decoded one sample per `__getitem__`.

    Each item is decompressed, flipped left-right at random (when `augment`), resized to
    `out_side` x `out_side` with antialiasing and normalised: per-sample CPU work like an
    image pipeline's decoding and augmentation, with no file and no download. Images are
    smooth colour ramps plus noise, labelled 0-9 at random, made from `seed`. A module-level
    class, so spawned DataLoader workers can unpickle it.
    """

    def __init__(self, n: int, side: int = 64, out_side: int = 32, seed: int = 0,
                 augment: bool = True) -> None:
        for name, value, low in (("n", n, 1), ("side", side, 2), ("out_side", out_side, 1)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"{name} must be an integer >= {low}, got {value!r}.")
        gen = torch.Generator().manual_seed(seed)
        ramp = torch.linspace(0, 1, side)
        self.side, self.out_side, self.augment = side, out_side, bool(augment)
        self.labels = torch.randint(0, 10, (n,), generator=gen)
        self.blobs: list[bytes] = []
        for _ in range(n):
            across, down = torch.rand(2, 3, 1, 1, generator=gen)
            image = ramp.view(1, 1, -1) * across + ramp.view(1, -1, 1) * down
            image = image / 2 + 0.05 * torch.randn(3, side, side, generator=gen)
            pixels = (image.clamp(0, 1) * 255).round().to(torch.uint8)
            self.blobs.append(zlib.compress(pixels.numpy().tobytes()))

    def __len__(self) -> int:
        return len(self.blobs)

    def pixels(self, index: int) -> torch.Tensor:
        """Image `index` decompressed: uint8, (3, side, side)."""
        raw = bytearray(zlib.decompress(self.blobs[index]))
        return torch.frombuffer(raw, dtype=torch.uint8).view(3, self.side, self.side)

    def __getitem__(self, index: int) -> tuple[torch.Tensor, torch.Tensor]:
        image = self.pixels(index).float().div_(255)
        if self.augment and torch.rand(()) < 0.5:
            image = image.flip(-1)
        image = F.interpolate(image[None], size=(self.out_side, self.out_side),
                              mode="bilinear", antialias=True)[0]
        return (image - 0.5) / 0.25, self.labels[index]


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

"""peaks_grid and CompressedImages at the edges of what they accept, and their refusals."""

from __future__ import annotations

import math

import pytest
import torch

from course_utils import CompressedImages, peaks, peaks_grid


def test_the_smallest_grid_is_its_four_corners() -> None:
    """n=2 over the default [-3, 3]^2: the corners, x varying fastest, peaks at each."""
    X, y = peaks_grid(2)
    assert X.tolist() == [[-3.0, -3.0], [3.0, -3.0], [-3.0, 3.0], [3.0, 3.0]]
    torch.testing.assert_close(y[:, 0], peaks(X[:, 0], X[:, 1]))
    assert X.device == y.device == torch.device("cpu")


@pytest.mark.parametrize("n,message", [
    (1, "n must be an integer >= 2, got 1."), (2.0, "n must be an integer >= 2, got 2.0."),
    (False, "n must be an integer >= 2, got False."),
])
def test_grid_refuses_bad_n_word_for_word(n: object, message: str) -> None:
    """The refusal names n, the rule and the value given."""
    with pytest.raises(ValueError) as err:
        peaks_grid(n)  # type: ignore[arg-type]
    assert str(err.value) == message


@pytest.mark.parametrize("lo,hi", [(-math.inf, 1.0), (0.0, math.nan), (1.0, 0.5)])
def test_grid_refuses_bad_ranges_word_for_word(lo: float, hi: float) -> None:
    """An infinite or NaN end, or lo above hi, is refused with both ends shown."""
    with pytest.raises(ValueError) as err:
        peaks_grid(3, lo=lo, hi=hi)
    assert str(err.value) == f"need finite lo < hi, got lo={lo!r}, hi={hi!r}."


def test_grid_on_a_named_device() -> None:
    """A device given by name is used for both tensors."""
    X, y = peaks_grid(3, device="cpu")
    assert X.device.type == y.device.type == "cpu" and X.shape == (9, 2)


@pytest.mark.parametrize("kwargs,message", [
    ({"n": 0}, "n must be an integer >= 1, got 0."),
    ({"n": 1, "side": 1}, "side must be an integer >= 2, got 1."),
    ({"n": 1, "side": True}, "side must be an integer >= 2, got True."),
    ({"n": 1, "out_side": 0}, "out_side must be an integer >= 1, got 0."),
    ({"n": 1, "out_side": 4.0}, "out_side must be an integer >= 1, got 4.0."),
])
def test_images_refuse_bad_sizes_word_for_word(kwargs: dict[str, object], message: str) -> None:
    """Each size is named with its lower limit and the value given."""
    with pytest.raises(ValueError) as err:
        CompressedImages(**kwargs)  # type: ignore[arg-type]
    assert str(err.value) == message


def test_the_smallest_images_are_allowed() -> None:
    """One image of 2 x 2 pixels, resized to 1 x 1: the limits themselves are accepted."""
    data = CompressedImages(1, side=2, out_side=1, augment=False)
    x, label = data[0]
    assert len(data) == 1 and x.shape == (3, 1, 1) and data.pixels(0).shape == (3, 2, 2)
    assert 0 <= int(label) <= 9


def test_labels_cover_zero_to_nine() -> None:
    """Labels are drawn from 0-9: among 500 images every one of the ten occurs, no other."""
    data = CompressedImages(500, side=2, out_side=1)
    assert set(data.labels.tolist()) == set(range(10))


def test_no_augmentation_means_no_flip() -> None:
    """augment=False (or a falsy value) gives the same item every time."""
    data = CompressedImages(2, side=8, out_side=8, augment=0)  # type: ignore[arg-type]
    assert data.augment is False
    torch.manual_seed(0)
    first = [data[0][0] for _ in range(20)]
    assert all(torch.equal(first[0], x) for x in first)


def test_images_are_smooth_ramps_plus_a_little_noise() -> None:
    """Each channel of each image is close to a plane over (row, column) -- a ramp -- with a
    small noise around it: a least-squares plane leaves a spread under 10% of the 0-255 range
    but above nothing, and the ramps differ from image to image."""
    data = CompressedImages(6, side=32, augment=False)
    rows, cols = torch.meshgrid(torch.arange(32.0), torch.arange(32.0), indexing="ij")
    design = torch.stack([torch.ones(32 * 32), rows.reshape(-1), cols.reshape(-1)], dim=1)
    slopes = []
    for i in range(len(data)):
        for channel in data.pixels(i).double():
            target = channel.reshape(-1, 1)
            fit = torch.linalg.lstsq(design.double(), target).solution
            residual = target - design.double() @ fit
            assert 0.5 < residual.std().item() < 0.1 * 255
            slopes.append(tuple(fit[1:, 0].tolist()))
    assert len(set(slopes)) == len(slopes)  # no two channels share their ramp

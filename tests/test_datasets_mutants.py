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



def _ramps(data: CompressedImages, index: int) -> tuple[list[tuple[float, float]], float]:
    """Per channel, how much a least-squares plane over the pixels changes (in levels of
    0-255) from the top to the bottom row and from the left to the right column; and the
    largest spread of the pixels around those planes."""
    side = data.side
    rows, cols = torch.meshgrid(torch.arange(side * 1.0), torch.arange(side * 1.0),
                                indexing="ij")
    design = torch.stack([torch.ones(side * side), rows.reshape(-1), cols.reshape(-1)],
                         dim=1).double()
    changes, spread = [], 0.0
    for channel in data.pixels(index).double():
        target = channel.reshape(-1, 1)
        fit = torch.linalg.lstsq(design, target).solution[:, 0]
        changes.append((fit[1].item() * (side - 1), fit[2].item() * (side - 1)))
        spread = max(spread, (target[:, 0] - design @ fit).std().item())
    return changes, spread


def test_images_are_colour_ramps_plus_a_little_noise() -> None:
    """'Smooth colour ramps plus noise': in each image some channel ramps visibly (by more
    than 20 levels) down the image and some across it; the channels ramp differently (colour,
    not grey); the pixels stay near their planes (a spread under 10% of the range, but some
    noise), and few are clipped to black."""
    data = CompressedImages(6, side=32, augment=False)
    for i in range(len(data)):
        changes, spread = _ramps(data, i)
        down, across = zip(*changes)
        assert max(map(abs, down)) > 20 and max(map(abs, across)) > 20
        assert max(across) - min(across) > 10 and max(down) - min(down) > 10
        assert 0.5 < spread < 0.1 * 255
        assert (data.pixels(i) == 0).float().mean() < 0.15


def test_default_sizes_seed_and_augmentation() -> None:
    """By default: 64 x 64 images, items of 32 x 32, seed 0, augmented."""
    data = CompressedImages(2)
    assert data.pixels(0).shape == (3, 64, 64) and data.augment is True
    plain = CompressedImages(2, augment=False)
    assert plain[1][0].shape == (3, 32, 32)
    assert data.blobs == CompressedImages(2, side=64, out_side=32, seed=0).blobs


def test_no_device_means_the_cpu_even_beside_an_accelerator(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """device None is the CPU, not the best device (here a simulated 'meta' one)."""
    import course_utils.datasets as datasets
    monkeypatch.setattr(datasets, "pick_device", lambda d=None: torch.device("meta"))
    X, y = peaks_grid(3)
    assert X.device == y.device == torch.device("cpu")
    X, y = peaks_grid(3, device="anything")  # a device named: pick_device decides
    assert X.device == y.device == torch.device("meta")


def test_grid_is_float32_whatever_the_default_dtype() -> None:
    """X and y are float32 even where a notebook made float64 the default."""
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        X, y = peaks_grid(3)
    finally:
        torch.set_default_dtype(before)
    assert X.dtype == y.dtype == torch.float32

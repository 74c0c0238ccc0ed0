"""CompressedImages: what 10's worker section decodes, checked against a decoding by hand."""

import pickle

import pytest
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader

from course_utils import CompressedImages


def by_hand(data, index):
    image = data.pixels(index).float() / 255
    small = F.interpolate(image[None], size=(data.out_side,) * 2, mode="bilinear",
                          antialias=True)[0]
    return (small - 0.5) / 0.25


def test_items_are_the_decoded_image_resized_and_normalised():
    data = CompressedImages(8, side=16, out_side=8, augment=False)
    assert len(data) == 8
    for i in range(8):
        x, y = data[i]
        assert x.shape == (3, 8, 8) and x.dtype == torch.float32
        torch.testing.assert_close(x, by_hand(data, i))
        assert y == data.labels[i] and 0 <= int(y) < 10
    pixels = data.pixels(0)
    assert pixels.dtype == torch.uint8 and pixels.shape == (3, 16, 16)
    assert len(data.blobs[0]) < pixels.numel()  # stored compressed


def test_augmentation_flips_about_half_the_items():
    data = CompressedImages(64, side=16, out_side=16, augment=True)
    torch.manual_seed(0)
    flipped = 0
    for i in range(64):
        x, _ = data[i]
        plain = by_hand(data, i)
        if torch.equal(x, plain):
            continue
        torch.testing.assert_close(x, plain.flip(-1))
        flipped += 1
    assert 16 <= flipped <= 48


def test_same_seed_same_data_and_pickles_for_spawned_workers():
    a, b = CompressedImages(4, seed=1), CompressedImages(4, seed=1)
    assert a.blobs == b.blobs and torch.equal(a.labels, b.labels)
    assert CompressedImages(4, seed=2).blobs != a.blobs
    c = pickle.loads(pickle.dumps(CompressedImages(4, seed=1, augment=False)))
    assert torch.equal(c[3][0], by_hand(a, 3))


def test_a_worker_process_decodes_the_same_batches():
    data = CompressedImages(12, side=16, out_side=8, augment=False)
    here = [x for x, _ in DataLoader(data, batch_size=4)]
    there = [x for x, _ in DataLoader(data, batch_size=4, num_workers=1)]
    assert len(here) == 3 and all(torch.equal(p, q) for p, q in zip(here, there))


@pytest.mark.parametrize("kwargs", [{"n": 0}, {"n": 2.0}, {"n": True}, {"n": 2, "side": 1},
                                    {"n": 2, "out_side": 0}])
def test_bad_sizes_are_refused_by_name(kwargs):
    name = [k for k in kwargs if k != "n" or len(kwargs) == 1][-1]
    with pytest.raises(ValueError, match=name):
        CompressedImages(**kwargs)

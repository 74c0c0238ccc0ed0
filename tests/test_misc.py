"""check_answer, the data inside the package, and the device rule of the hygiene tests."""

from __future__ import annotations

import re

import pytest

from course_utils import check_answer, data_path, tally


def test_check_answer_verdicts(capsys: pytest.CaptureFixture[str]) -> None:
    assert check_answer("q", None, 3) is False
    assert "not answered yet" in capsys.readouterr().out
    assert check_answer("q", 3, 3) is True
    assert "correct" in capsys.readouterr().out
    assert check_answer("q", 4, 3, hint="try again") is False
    assert "not yet (4). try again" in capsys.readouterr().out
    assert check_answer("q", 4, 3) is False  # no hint: the line ends at the answer
    assert capsys.readouterr().out == "[!] q: not yet (4).\n"


def test_check_answer_tolerance_and_strings() -> None:
    assert check_answer("q", 101.0, 100.0, rel_tol=0.05)
    assert not check_answer("q", 120.0, 100.0, rel_tol=0.05)
    assert not check_answer("q", "abc", 100.0, rel_tol=0.05)
    assert check_answer("q", " CPU ", "cpu")
    # "Within 50%" is of the expected value: twice it is not close, whichever side it is on.
    assert check_answer("q", 1.5, 1.0, rel_tol=0.5) and check_answer("q", 0.5, 1.0, rel_tol=0.5)
    assert not check_answer("q", 2.0, 1.0, rel_tol=0.5)


def test_check_answer_edges() -> None:
    # Truth values are not numbers here, either way round.
    assert not check_answer("q", False, 0) and not check_answer("q", 0, False)
    assert not check_answer("q", True, 1) and not check_answer("q", 1, True)
    assert check_answer("q", False, False) and not check_answer("q", True, False)
    assert check_answer("q", 0, 0) and check_answer("q", 0.0, 0, rel_tol=0.1)
    assert not check_answer("q", 1e-9, 0, rel_tol=0.1)  # 10% of nothing is nothing
    # A negative expected value: the tolerance is of its size.
    assert check_answer("q", -95, -100, rel_tol=0.1)
    assert not check_answer("q", 95, -100, rel_tol=0.1)
    assert not check_answer("q", -115, -100, rel_tol=0.1)
    # Lists: element by element, same length, each within the tolerance; strings inside too.
    assert check_answer("q", [1.04, 2.1], [1.0, 2.0], rel_tol=0.06)
    assert not check_answer("q", [1.04, 2.2], [1.0, 2.0], rel_tol=0.06)
    assert not check_answer("q", [1.0], [1.0, 2.0], rel_tol=0.5)
    assert not check_answer("q", 1.0, [1.0], rel_tol=0.5)
    assert check_answer("q", ("DDP", " fsdp"), ["ddp", "FSDP"])
    assert not check_answer("q", ["FSDP", "DDP"], ["DDP", "FSDP"])  # order counts
    assert check_answer("q", (1, 2), [1, 2])  # a tuple for a list


def test_a_miss_on_a_noisy_timing_is_not_graded(capsys: pytest.CaptureFixture[str]) -> None:
    # A match still counts; a miss says "not graded", names this run's value, returns None.
    assert check_answer("q", 1.2, 1.0, rel_tol=0.5, noisy=True) is True
    assert capsys.readouterr().out == "[x] q: correct.\n"
    assert check_answer("q", 3.0, 1.23456, rel_tol=0.5, noisy=True, hint="h") is None
    assert capsys.readouterr().out == ("[~] q: not graded (3.0; this run measured 1.23, on a "
                                       "timing flagged noisy: re-run on an idle machine).\n")
    assert check_answer("q", "b", "a", noisy=True) is None
    assert "measured 'a'" in capsys.readouterr().out
    assert check_answer("q", None, 1.0, noisy=True) is False  # not answered: as ever
    assert check_answer("q", 3.0, 1.0, rel_tol=0.5, noisy=False) is False


def test_tally_counts_graded_verdicts_only(capsys: pytest.CaptureFixture[str]) -> None:
    tally([True, False, True])
    assert capsys.readouterr().out == "2 of 3 correct\n"
    tally([True, None, False, None])
    assert capsys.readouterr().out == "1 of 2 correct; 2 not graded (a noisy timing)\n"
    tally([])
    assert capsys.readouterr().out == "0 of 0 correct\n"


def test_every_data_file_named_in_the_data_readme_ships_in_the_package() -> None:
    readme = data_path("README.md").read_text()
    named = set(re.findall(r"^\| `([\w.]+\.(?:csv|md))` \|", readme, re.M))
    assert {"shi2016_table7.csv", "gpu_peaks.csv"} <= named
    assert all(data_path(name).is_file() for name in named)


def test_the_device_rule_catches_hard_coded_devices() -> None:
    from tests.test_hygiene import _hard_coded_devices

    bad = ['x.cuda()', 'x.to("cuda")', 'torch.zeros(3, device="cuda:1")', 'torch.device("cuda")']
    assert [len(_hard_coded_devices(code)) for code in bad] == [1, 1, 1, 1]
    fine = ['device.type == "cuda"', 'x.to(device)', 'x.cuda(device)', 'torch.cuda.synchronize(device)',
            'torch.device(accelerator.type, 0)', 'torch.cuda.is_available()']
    assert [_hard_coded_devices(code) for code in fine] == [[]] * len(fine)


def test_data_path_ignores_a_leftover_package_data_folder(tmp_path, monkeypatch) -> None:
    """A course_utils/data/ left behind without the tables must not hide the checkout's data/."""
    import course_utils.datasets as datasets

    package = tmp_path / "course_utils"
    (package / "data" / "results").mkdir(parents=True)  # e.g. an older layout's recordings
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "gpu_peaks.csv").write_text("name_pattern\n")
    monkeypatch.setattr(datasets, "__file__", str(package / "datasets.py"))
    assert datasets.data_path("gpu_peaks.csv") == tmp_path / "data" / "gpu_peaks.csv"
    (package / "data" / "gpu_peaks.csv").write_text("name_pattern\n")  # a wheel's layout
    assert datasets.data_path("gpu_peaks.csv") == package / "data" / "gpu_peaks.csv"


def test_seed_zero_and_the_largest_seed_are_allowed() -> None:
    import random

    from course_utils import seed_everything
    for seed in (0, 2**32 - 1):
        seed_everything(seed)
        first = random.random()
        seed_everything(seed)
        assert random.random() == first
    for bad in (-1, 2**32):
        with pytest.raises(ValueError):
            seed_everything(bad)

"""tools.mutation_score: the share it reports, from mutmut's counts."""

import pytest

from tools.mutation_score import score


def test_score_counts_timeouts_as_killed_and_untested_as_survivors():
    stats = {"killed": 80, "timeout": 5, "segfault": 1, "survived": 10, "no_tests": 4,
             "suspicious": 0, "skipped": 7, "total": 107}
    percent, killed, tested = score(stats)
    assert (killed, tested) == (86, 100) and percent == pytest.approx(86.0)
    assert score({"killed": 0, "survived": 0}) == (0.0, 0, 0)
    assert score({"killed": 9, "survived": 1})[0] == pytest.approx(90.0)

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


class _Done:
    def __init__(self, stdout: str = "") -> None:
        self.stdout = stdout


def test_survivors_and_the_printed_report(tmp_path, monkeypatch, capsys):
    import json

    from tools import mutation_score

    results = "\n".join([
        "    course_utils.timing.x_benchmark__mutmut_3: survived",
        "    course_utils.timing.x_benchmark__mutmut_4: no tests",
        "    course_utils.memory.xǁSavedActivationsǁ__init____mutmut_1: survived",
        "    tools.fuzz.x_main__mutmut_2: killed",
        "    tools.fuzz.x_main__mutmut_5: timeout",
        "    a line that names no mutant: survived",
    ])
    calls = []

    def fake_run(cmd, cwd, capture_output, text=False, check=False):
        calls.append((cmd[2:], cwd, check))
        return _Done(results if cmd[-1] == "results" else "")

    (tmp_path / "mutants").mkdir()
    (tmp_path / "mutants" / "mutmut-cicd-stats.json").write_text(json.dumps(
        {"killed": 85, "timeout": 4, "segfault": 1, "survived": 6, "no_tests": 4,
         "suspicious": 0, "skipped": 2, "total": 130}))
    monkeypatch.setattr(mutation_score, "ROOT", tmp_path)
    monkeypatch.setattr(mutation_score.subprocess, "run", fake_run)
    assert dict(mutation_score.survivors()) == {"course_utils.timing": 2,
                                                "course_utils.memory": 1}
    calls.clear()
    assert mutation_score.main([]) == 0
    assert calls[0] == (["mutmut", "export-cicd-stats"], tmp_path, True)
    assert capsys.readouterr().out.splitlines() == [
        "mutation score 90.0%: 90 of 100 mutants killed (6 survived, 4 reached by no test, "
        "2 skipped; 28 of 130 not checked yet)",
        "  course_utils.timing: 2 left",
        "  course_utils.memory: 1 left"]
    assert mutation_score.main(["--min", "90"]) == 0  # at the bar is enough
    assert mutation_score.main(["--min", "90.1"]) == 1

"""tools.mutation_score: the share it reports, from mutmut's counts."""

import subprocess

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


def test_suspicious_mutants_count_as_tested_but_not_killed():
    """A "suspicious" mutant (the tests behaved oddly) is tested and not killed: 8 of 10."""
    assert score({"killed": 8, "survived": 1, "suspicious": 1}) == (80.0, 8, 10)


# A stand-in for `python -m mutmut`, found first on the path because it lies in the folder the
# command runs in: `results` prints mutants as mutmut does, `export-cicd-stats` writes the
# counts file under mutants/ (relative to where it runs) and says so, as mutmut does.
_FAKE_MUTMUT = '''
import pathlib, sys
if sys.argv[1:] == ["results"]:
    print("    tools.fuzz.x_main__mutmut_1: survived")
    print("    tools.fuzz.xǁRunǁstart__mutmut_2: no tests")
    print("    course_utils.timing.x_benchmark__mutmut_3: suspicious")
elif sys.argv[1:] == ["export-cicd-stats"]:
    pathlib.Path("mutants/mutmut-cicd-stats.json").write_text(
        '{"killed": 7, "survived": 1, "suspicious": 0, "total": 12}')
    print("exported the CI stats")
else:
    sys.exit(f"unexpected arguments {sys.argv[1:]}")
'''


def test_the_report_asks_mutmut_in_the_checkout(tmp_path, monkeypatch, capfd):
    """main and survivors run `python -m mutmut` in the checkout (ROOT), read its results as
    text, keep its own chatter out of the report, and read counts that an older mutmut wrote
    without "no_tests" and "skipped" as none of either."""
    from tools import mutation_score

    (tmp_path / "mutmut").mkdir()
    (tmp_path / "mutmut" / "__init__.py").write_text("")
    (tmp_path / "mutmut" / "__main__.py").write_text(_FAKE_MUTMUT, encoding="utf-8")
    (tmp_path / "mutants").mkdir()
    monkeypatch.setattr(mutation_score, "ROOT", tmp_path)
    assert dict(mutation_score.survivors()) == {"tools.fuzz": 2}  # suspicious is not listed
    assert mutation_score.main(["--min", "87.5"]) == 0
    assert capfd.readouterr().out.splitlines() == [
        "mutation score 87.5%: 7 of 8 mutants killed (1 survived, 0 reached by no test, "
        "0 skipped; 4 of 12 not checked yet)",
        "  tools.fuzz: 2 left"]
    (tmp_path / "mutmut" / "__main__.py").write_text("raise SystemExit(1)")
    with pytest.raises(subprocess.CalledProcessError):  # no stale counts when mutmut fails
        mutation_score.main([])


def test_the_command_line_help(capsys):
    """--help says what the command reports and what --min does."""
    from tools import mutation_score

    with pytest.raises(SystemExit):
        mutation_score.main(["--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert ("The mutation score of the last `mutmut run`: the share of mutants the tests "
            "killed.") in help_text
    assert "--min MIN fail below this percent" in help_text

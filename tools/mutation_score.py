"""The mutation score of the last `mutmut run`: the share of mutants the tests killed.

    python -m tools.mutation_score          # after `mutmut run` (make mutation runs both)
    python -m tools.mutation_score --min 90 # exit status 1 below 90%

Killed counts mutants the tests failed on, and those that timed out or crashed the test
process (each a change the tests noticed). The score divides them by every mutant that
was tested: a mutant that no test reaches (mutmut's "no tests") counts as a survivor, since
nothing would notice it; skipped mutants are left out. The survivors are listed by module.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def score(stats: dict[str, int]) -> tuple[float, int, int]:
    """(score in percent, killed, tested) from mutmut's CI/CD stats."""
    killed = stats["killed"] + stats.get("timeout", 0) + stats.get("segfault", 0)
    tested = killed + stats["survived"] + stats.get("no_tests", 0) + stats.get("suspicious", 0)
    return (100.0 * killed / tested if tested else 0.0), killed, tested


def survivors() -> Counter:
    """Surviving (or untested) mutants per module, from `mutmut results` (lines such as
    "course_utils.timing.x_benchmark__mutmut_3: survived")."""
    out = subprocess.run([sys.executable, "-m", "mutmut", "results"], cwd=ROOT,
                         capture_output=True, text=True).stdout
    per_module: Counter = Counter()
    for line in out.splitlines():
        name, _, status = line.strip().partition(": ")
        if "__mutmut_" in name and status in ("survived", "no tests"):
            # course_utils.timing.x_benchmark__mutmut_3, course_utils.memory.xǁClassǁmethod__...
            per_module[re.split(r"\.x[_ǁ]", name, maxsplit=1)[0]] += 1
    return per_module


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--min", type=float, default=None, help="fail below this percent")
    args = parser.parse_args(argv)
    subprocess.run([sys.executable, "-m", "mutmut", "export-cicd-stats"], cwd=ROOT,
                   capture_output=True, check=True)
    stats = json.loads((ROOT / "mutants" / "mutmut-cicd-stats.json").read_text())
    percent, killed, tested = score(stats)
    unchecked = stats["total"] - tested - stats.get("skipped", 0)
    print(f"mutation score {percent:.1f}%: {killed} of {tested} mutants killed "
          f"({stats['survived']} survived, {stats.get('no_tests', 0)} reached by no test, "
          f"{stats.get('skipped', 0)} skipped; {unchecked} of {stats['total']} not checked yet)")
    for module, n in survivors().most_common():
        print(f"  {module}: {n} left")
    return 1 if args.min is not None and percent < args.min else 0


if __name__ == "__main__":
    sys.exit(main())

"""Checking a student's answer to an exercise without stopping the notebook."""

from __future__ import annotations

from typing import Any


def check_answer(question: str, answer: Any, expected: Any, *, rel_tol: float | None = None,
                 hint: str = "", noisy: bool = False) -> bool | None:
    """Compare `answer` with `expected`, print a verdict for `question`, and return whether it matches.

    `answer` None means "not answered yet": the verdict says so and nothing is raised, so a
    notebook with open exercises still runs top to bottom. With `rel_tol`, numbers match when
    the answer is within rel_tol x |expected| of the expected value (0.5: within 50% of it);
    strings compare without case or surrounding blanks; lists and tuples match element by
    element (with `rel_tol`, each number within it of its counterpart). A truth value matches
    only a truth value: False is not the answer 0, nor True 1.

    `noisy` True says that `expected` rests on a timing flagged noisy, which a rerun could
    move: a match still counts, but a miss is not graded. The verdict says so, names this
    run's value, and the function returns None (`tally` leaves it out of the count).
    """
    if answer is None:
        print(f"[ ] {question}: not answered yet.")
        return False
    ok = _matches(answer, expected, rel_tol)
    if ok:
        print(f"[x] {question}: correct.")
    elif noisy:
        print(f"[~] {question}: not graded ({answer!r}; this run measured {_shown(expected)}, "
              "on a timing flagged noisy: re-run on an idle machine).")
        return None
    else:
        print(f"[!] {question}: not yet ({answer!r}). {hint}".rstrip())
    return ok


def tally(verdicts: list[bool | None]) -> None:
    """Print how many of the verdicts `check_answer` returned are correct, leaving out those
    it did not grade (None: an answer checked against a noisy timing)."""
    graded = [v for v in verdicts if v is not None]
    line = f"{sum(graded)} of {len(graded)} correct"
    if len(graded) < len(verdicts):
        line += f"; {len(verdicts) - len(graded)} not graded (a noisy timing)"
    print(line)


def _shown(value: Any) -> str:
    """A value as a verdict prints it: numbers to 3 significant figures."""
    if isinstance(value, float):
        return f"{value:.3g}"
    return repr(value)


def _matches(answer: Any, expected: Any, rel_tol: float | None) -> bool:
    if isinstance(answer, bool) != isinstance(expected, bool):
        return False  # False == 0 in Python, but "no" is not a count
    if isinstance(expected, (list, tuple)):
        return (isinstance(answer, (list, tuple)) and len(answer) == len(expected)
                and all(_matches(a, e, rel_tol) for a, e in zip(answer, expected)))
    if isinstance(answer, str) and isinstance(expected, str):
        return answer.strip().lower() == expected.strip().lower()
    if rel_tol is not None and not isinstance(expected, bool):
        try:
            return abs(float(answer) - float(expected)) <= rel_tol * abs(float(expected))
        except (TypeError, ValueError):
            return False
    return bool(answer == expected)

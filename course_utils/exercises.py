"""Checking a student's answer to an exercise without stopping the notebook."""

from __future__ import annotations

from typing import Any


def check_answer(question: str, answer: Any, expected: Any, *, rel_tol: float | None = None,
                 hint: str = "") -> bool:
    """Compare `answer` with `expected`, print a verdict for `question`, and return whether it matches.

    `answer` None means "not answered yet": the verdict says so and nothing is raised, so a
    notebook with open exercises still runs top to bottom. With `rel_tol`, numbers match when
    the answer is within rel_tol x |expected| of the expected value (0.5: within 50% of it);
    strings compare without case or surrounding blanks.
    """
    if answer is None:
        print(f"[ ] {question}: not answered yet.")
        return False
    if rel_tol is not None:
        try:
            ok = abs(float(answer) - float(expected)) <= rel_tol * abs(float(expected))
        except (TypeError, ValueError):
            ok = False
    elif isinstance(answer, str) and isinstance(expected, str):
        ok = answer.strip().lower() == expected.strip().lower()
    else:
        ok = bool(answer == expected)
    if ok:
        print(f"[x] {question}: correct.")
    else:
        print(f"[!] {question}: not yet ({answer!r}). {hint}".rstrip())
    return ok

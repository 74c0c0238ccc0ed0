"""Parameter contracts for the notebooks' setup cells: a wrong value is refused by name.

Each notebook's setup cell calls `check_param` once per parameter (its type, its range, its
choices) and `check_rule` for what ties several together (a batch that two ranks can share,
a segment count that divides the depth). A refusal raises ParameterError naming the
parameter, the value given and what is allowed, before the notebook does any work.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from numbers import Integral, Real
from typing import Any


class ParameterError(ValueError):
    """A notebook parameter outside its contract."""


_KINDS = {int: "an integer", float: "a number", bool: "True or False", str: "a string",
          list: "a list"}


def _fits(value: Any, kind: type) -> bool:
    if isinstance(value, bool):  # True is an int to Python, never a number here
        return kind is bool
    if kind is int:
        return isinstance(value, Integral)
    if kind is float:
        return isinstance(value, Real) and math.isfinite(value)
    return isinstance(value, kind)


def _bounds(low: Any, high: Any, low_open: bool) -> str:
    parts = []
    if low is not None:
        parts.append(f"{'>' if low_open else '>='} {low!r}")
    if high is not None:
        parts.append(f"<= {high!r}")
    return " and ".join(parts)


def _refuse(name: str, value: Any, allowed: str) -> ParameterError:
    return ParameterError(f"{name} = {value!r} is refused: {name} must be {allowed}.")


def check_param(name: str, value: Any, kind: type, *, low: Any = None, high: Any = None,
                low_open: bool = False, choices: Sequence[Any] | None = None,
                of: type | None = None, rising: bool = False, min_len: int = 1,
                none_ok: bool = False,
                none_means: str = "automatic") -> Any:
    """Return `value` if it is a `kind` within its bounds, else raise ParameterError.

    kind: int (never a bool, never 2.0), float (an int or a finite float, never a bool),
    bool (only True or False: not 0, 1 or "yes"), str, or list. `low` and `high` bound the
    value (for a list, each element), `low_open` makes `low` excluded. `choices`: the
    allowed values (for a list, of each element). A list has at least `min_len` elements (one
    by default), its elements of type `of` (int, float or str), and strictly rising when
    `rising`. `none_ok`: None is allowed too (`none_means` says what it does), so a 0 or an
    empty value is never taken for "automatic".
    """
    if kind not in _KINDS or (of is not None and of not in (int, float, str)):
        raise TypeError(f"check_param: kind must be one of {list(_KINDS)}, "
                        "of int, float or str.")
    if low is not None and high is not None and low > high:
        raise ValueError(f"check_param: low {low!r} above high {high!r} for {name}.")
    bounds = _bounds(low, high, low_open)
    if kind is list:
        element = _KINDS[of or float].removeprefix("an ").removeprefix("a ")
        count = "a non-empty list" if min_len <= 1 else f"a list of at least {min_len}"
        allowed = f"{count} of {element}s{' ' + bounds if bounds else ''}"
        allowed += ", strictly rising" if rising else ""
        if choices is not None:
            allowed += ", each one of " + ", ".join(repr(c) for c in choices)
    elif choices is not None:
        allowed = "one of " + ", ".join(repr(c) for c in choices)
    else:
        allowed = _KINDS[kind] + (f" {bounds}" if bounds else "")
    if none_ok:
        allowed = f"None ({none_means}) or {allowed}"
    if value is None and none_ok:
        return value
    items = value if kind is list else [value]
    if kind is list and (not isinstance(value, (list, tuple)) or len(value) < max(1, min_len)):
        raise _refuse(name, value, allowed)
    for item in items:
        if not _fits(item, of or float) if kind is list else not _fits(item, kind):
            raise _refuse(name, value, allowed)
        if choices is not None and item not in choices:
            raise _refuse(name, value, allowed)
        if low is not None and (item < low or (low_open and item == low)):
            raise _refuse(name, value, allowed)
        if high is not None and item > high:
            raise _refuse(name, value, allowed)
    if rising and any(b <= a for a, b in zip(items, items[1:])):
        raise _refuse(name, value, allowed)
    return value


def check_rule(holds: bool, name: str, value: Any, allowed: str) -> None:
    """Raise ParameterError naming `name`, `value` and `allowed` unless `holds`: for what
    ties parameters together, e.g. check_rule(DEPTH % SEGMENTS == 0, "SEGMENTS", SEGMENTS,
    f"a divisor of DEPTH = {DEPTH}")."""
    if not holds:
        raise _refuse(name, value, allowed)

"""check_param at the edges of its contract: lists, bounds, None, and the exact messages."""

from __future__ import annotations

import pytest

from course_utils import ParameterError, check_param


def _message(*args: object, **kwargs: object) -> str:
    with pytest.raises(ParameterError) as err:
        check_param(*args, **kwargs)  # type: ignore[arg-type]
    return str(err.value)


def test_low_above_high_is_a_bad_specification_word_for_word() -> None:
    """A contract whose low exceeds its high is the notebook author's error, named so."""
    with pytest.raises(ValueError) as err:
        check_param("X", 1, int, low=3, high=2)
    assert str(err.value) == "check_param: low 3 above high 2 for X."
    assert not isinstance(err.value, ParameterError)


@pytest.mark.parametrize("value", [[], ()])
def test_min_len_zero_still_needs_one_element(value: object) -> None:
    """An empty list is never allowed, even with min_len=0."""
    assert _message("L", value, list, min_len=0) == (
        f"L = {value!r} is refused: L must be a non-empty list of numbers.")


def test_min_len_counts_elements() -> None:
    """min_len=3: two elements are refused, three pass; the message says how many."""
    assert check_param("L", [1, 2, 3], list, of=int, min_len=3) == [1, 2, 3]
    assert _message("L", [1, 2], list, of=int, min_len=3) == (
        "L = [1, 2] is refused: L must be a list of at least 3 of integers.")


@pytest.mark.parametrize("value", ["abc", {1, 2}, 3.0, None])
def test_a_list_must_be_a_list_or_tuple(value: object) -> None:
    """A string, a set or a scalar is not a list, even where it could be iterated."""
    assert _message("L", value, list).startswith(f"L = {value!r} is refused: L must be a ")


def test_list_elements_keep_within_both_bounds() -> None:
    """Each element is bounded: one above high is refused; the edges themselves pass."""
    assert check_param("L", [1, 10], list, of=int, low=1, high=10) == [1, 10]
    assert _message("L", [1, 11], list, of=int, low=1, high=10) == (
        "L = [1, 11] is refused: L must be a non-empty list of integers >= 1 and <= 10.")
    assert _message("L", [0.5, 0.0], list, low=0, low_open=True) == (
        "L = [0.5, 0.0] is refused: L must be a non-empty list of numbers > 0.")


@pytest.mark.parametrize("value", [[1.0, "2"], [1.0, float("nan")], [True]])
def test_a_list_of_numbers_refuses_non_numbers(value: list[object]) -> None:
    """A list of numbers (the default element) refuses text, NaN and bools."""
    assert _message("L", value, list).endswith("L must be a non-empty list of numbers.")


def test_a_list_of_floats_is_called_numbers() -> None:
    """of=float words its elements as numbers, like the default."""
    assert _message("L", ["a"], list, of=float).endswith("a non-empty list of numbers.")


def test_scalar_choices_with_a_tuple_or_list() -> None:
    """choices may be any sequence; the refusal lists them all."""
    assert check_param("D", 2, int, choices=[1, 2, 4]) == 2
    assert _message("D", 3, int, choices=[1, 2, 4]) == (
        "D = 3 is refused: D must be one of 1, 2, 4.")


def test_none_is_refused_unless_allowed() -> None:
    """None passes only with none_ok; for a list too."""
    assert check_param("L", None, list, none_ok=True, none_means="every size") is None
    assert _message("N", None, int, low=1) == "N = None is refused: N must be an integer >= 1."
    assert _message("L", [], list, none_ok=True, none_means="every size") == (
        "L = [] is refused: L must be None (every size) or a non-empty list of numbers.")


def test_a_wrong_type_is_refused_before_the_bounds_are_compared() -> None:
    """Text given for a bounded integer is a ParameterError, not a TypeError from '<'."""
    assert _message("N", "8", int, low=1, high=9) == (
        "N = '8' is refused: N must be an integer >= 1 and <= 9.")


def test_a_float_kind_takes_ints_and_keeps_them() -> None:
    """An int is a number: it comes back unchanged (not converted)."""
    value = check_param("LR", 1, float, low=0, low_open=True)
    assert value == 1 and type(value) is int

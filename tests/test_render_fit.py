"""render.fit: the most leading rows whose text (each with its newline) fits, at least one."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from fsseam.tools.render import fit


@given(
    rows=st.lists(st.text(alphabet="ab\t", max_size=12), min_size=1, max_size=12),
    max_chars=st.integers(0, 120),
)
def test_fit_is_the_longest_prefix_that_fits(rows: list[str], max_chars: int) -> None:
    k = fit(rows, max_chars)
    used = [sum(len(r) + 1 for r in rows[:i]) for i in range(len(rows) + 1)]
    best = max(i for i in range(len(rows) + 1) if used[i] <= max_chars)
    assert k == max(1, best)


@given(
    lines=st.lists(
        st.one_of(st.text(alphabet="ab\té", max_size=12), st.just("x" * 2003)), max_size=12
    ),
    start=st.one_of(st.integers(1, 30), st.just(19_995), st.just(999_998)),
    cut_at=st.lists(st.integers(0, 11), max_size=3),
    max_chars=st.integers(-5, 4200),
)
def test_numbered_fit_is_numbered_then_fit(
    lines: list[str], start: int, cut_at: list[int], max_chars: int
) -> None:
    """The one-join rendering is the row-by-row one: same rows (long lines cut, lines a
    read shortened marked), same cut of the output."""
    from fsseam.tools.render import numbered, numbered_fit, numbered_text

    cut = {start + i: len(lines[i]) + 50 for i in cut_at if i < len(lines)}
    rows = numbered(lines, start, cut)
    assert numbered_text(lines, start, cut) == "\n".join(rows)
    shown = fit(rows, max_chars)
    assert numbered_fit(lines, start, cut, max_chars) == ("\n".join(rows[:shown]), shown)

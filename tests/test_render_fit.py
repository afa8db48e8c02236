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

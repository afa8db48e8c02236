"""How many examples a property test runs.

Each property states its full count (what it was written and tuned with). The suite runs
a fraction of it so that every property still runs on every change within the suite's
time budget; ``python -m pytest --hypothesis-profile=full`` (nightly, or before a change
to the code a property covers) runs the full counts. Profiles are registered in
tests/conftest.py.
"""

from __future__ import annotations

from hypothesis import settings

# The suite's share of each full count, and a floor so that a small property still
# explores more than a handful of inputs.
SHARE = 4
FLOOR = 25


def examples(full: int) -> int:
    if settings.get_current_profile_name() == "full":
        return full
    return min(full, max(FLOOR, full // SHARE))


def size(full: int, suite: int) -> int:
    """A stress loop's size: ``suite`` in the suite, ``full`` under the full profile."""
    return full if settings.get_current_profile_name() == "full" else suite

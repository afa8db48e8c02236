"""A frequent old_string in a large blob: the refusal is bounded and writes nothing (the
shared suite, fsseam.testing.stores.BoundsSuite)."""

from __future__ import annotations

from fsseam.testing.stores import BoundsSuite


class TestBounds(BoundsSuite):
    pass

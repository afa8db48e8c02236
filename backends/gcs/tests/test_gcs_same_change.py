"""A change someone else made is not yours, on gs:// (fake-gcs-server): the shared suite."""

from __future__ import annotations

from fsseam.testing.stores import SameChangeSuite


class TestSameChange(SameChangeSuite):
    pass

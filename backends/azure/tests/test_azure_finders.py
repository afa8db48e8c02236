"""glob / grep / delete / move on az://: requests counted at Azurite's proxy (the shared
finder suite, fsseam.testing.stores)."""

from __future__ import annotations

from fsseam.testing.stores import FinderSuite


class TestFinders(FinderSuite):
    pass

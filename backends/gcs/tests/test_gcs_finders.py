"""ls / glob / grep / delete / move on gs://: requests counted at a proxy in front of the
emulator (the shared finder suite, fsseam.testing.stores)."""

from __future__ import annotations

from fsseam.testing.stores import FinderSuite


class TestFinders(FinderSuite):
    # GCS pages at 1,000 names; the emulator answers everything at once unless asked, so
    # the suite's small page is what shows the paging.
    pass

"""A change someone else made is not yours, on az:// (Azurite): the shared suite. Azure
keeps no owner with a blob yet, so an owner's landed edit run again is refused, saying it
may be the agent's own earlier try."""

from __future__ import annotations

from fsseam.testing.stores import SameChangeSuite


class TestSameChange(SameChangeSuite):
    keeps_owner = False

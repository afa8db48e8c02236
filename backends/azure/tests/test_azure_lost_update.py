"""Lost updates on az://: threads and processes racing read-modify-write on one blob
through the backend, and agents in processes editing one shared file through the tools
(the shared suites, fsseam.testing.stores). Every acknowledged update must be in the
blob."""

from __future__ import annotations

from fsseam.testing.stores import AgentRaceSuite, LostUpdateSuite


class TestLostUpdate(LostUpdateSuite, AgentRaceSuite):
    processes = 3

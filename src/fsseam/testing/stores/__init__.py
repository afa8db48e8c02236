"""Suites every object store runs, written once (like ``fsspec.tests.abstract``).

A store's test suite subclasses a suite and gives it a ``store`` fixture: a fresh, empty
bucket (or container) of that store behind a point where requests are counted, as a
:class:`StoreRig`. What differs between stores is said by the rig's facts (the method of an
upload, the requests of a move), never by a copy of the test. A gap of one store's emulator
is a strict xfail in that store's subclass, so it is seen when the emulator closes it.

- :class:`LostUpdateSuite`: threads and processes racing read-increment-IfMatch on one
  object; :class:`AgentRaceSuite`: agents in processes racing edits of one file through
  the tools; :class:`SameChangeSuite`: counter agents, and another writer's identical
  change refused while the owner's own landed edit, run again, is done;
- :class:`FinderSuite`: glob, grep, delete and move, in requests counted at the store;
- :class:`BoundsSuite`: a refused edit of a frequent string in 16 MiB, in bounded memory;
- :class:`MissingBucketSuite`: a workspace on a bucket that does not exist, through the
  tools and the backend;
- :class:`ReadFaultSuite`: reads whose GETs fail, persistently or not (a
  ``faulty_store`` fixture that is a :class:`ReadFaultRig`);
- :class:`WriteFaultSuite`: uploads that fail (5xx) or land with their answer lost (a
  :class:`WriteFaultRig`);
- :class:`CredentialsSuite`: credentials the store refuses and a permission it lacks,
  each a :class:`Refusal` fixture of the store's making;
- :class:`LostAnswerSuite`: deletes and uploads that land with their answer lost inside a
  move or a patch, and the looks that would recover them failing too (a
  :class:`LostAnswerRig`);
- :class:`ChangeFaultSuite`: a multi-file change whose Nth request fails at the store (a
  ``faulty_store`` fixture: a :class:`FaultRig`, whose requests pass a fault plan).
"""

from .answers import LostAnswerSuite
from .bounds import BoundsSuite
from .buckets import MissingBucketSuite
from .changes import ChangeFaultSuite
from .credentials import CredentialsSuite, Refusal
from .finders import FinderSuite
from .races import AgentRaceSuite, LostUpdateSuite, SameChangeSuite, agent_edits
from .reads import ReadFaultSuite
from .rigs import FaultRig, LostAnswerRig, ReadFaultRig, StoreRig, WriteFaultRig
from .writes import WriteFaultSuite

__all__ = [
    "AgentRaceSuite",
    "BoundsSuite",
    "ChangeFaultSuite",
    "CredentialsSuite",
    "FaultRig",
    "FinderSuite",
    "LostAnswerRig",
    "LostAnswerSuite",
    "LostUpdateSuite",
    "MissingBucketSuite",
    "ReadFaultRig",
    "ReadFaultSuite",
    "Refusal",
    "SameChangeSuite",
    "StoreRig",
    "WriteFaultRig",
    "WriteFaultSuite",
    "agent_edits",
]

"""Test helpers shipped in the wheel, for fsseam and for every backend package.

``BackendConformance`` is a mixin test class, like ``fsspec.tests.abstract``: subclass it in
your test suite and provide a ``backend`` fixture returning a fresh backend over an empty
root. Add ``ProcessConformance`` when the storage is shared between processes, with a
``backend_spec`` fixture returning ``(url, storage_options)``, and ``ToolsConformance``
(a ``workspace`` fixture) to run the agent tools end to end, and ``HistoryConformance``
(a ``history_workspace`` fixture: storage that keeps versions) for history, restore, undo
and conflicts.

``fsseam.testing.stores`` holds the suites every object store runs (lost updates, finders'
request budget, missing buckets, read and change faults): a store's tests subclass them and
give a rig over one fresh bucket (``fsseam_s3.testing.S3Rig`` and the like).
"""

from .conformance import BackendConformance, ProcessConformance, increment_worker
from .history import HistoryConformance
from .tools import ToolsConformance

__all__ = [
    "BackendConformance",
    "HistoryConformance",
    "ProcessConformance",
    "ToolsConformance",
    "increment_worker",
]

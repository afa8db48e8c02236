"""Test helpers shipped in the wheel, for fsseam and for every backend package.

``BackendConformance`` is a mixin test class, like ``fsspec.tests.abstract``: subclass it in
your test suite and provide a ``backend`` fixture returning a fresh backend over an empty
root. Add ``ProcessConformance`` when the storage is shared between processes, with a
``backend_spec`` fixture returning ``(url, storage_options)``.
"""

from .conformance import BackendConformance, ProcessConformance, increment_worker

__all__ = ["BackendConformance", "ProcessConformance", "increment_worker"]

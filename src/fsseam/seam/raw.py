"""Whole files as bytes, for a surface whose own API is bytes (Pydantic AI's workspace):
a read that counts as the owner's observation, and a whole-file write of exact bytes under
the same guard as ``write`` (no text rules: no BOM or newlines kept, any bytes).

The write is a plan of one step through :func:`~fsseam.seam.pipeline.run`, as every change
is; what the storage guards, and how a refusal is explained, are the write's own.
"""

from __future__ import annotations

from ..errors import FsError
from ..events import WrittenEvent
from ..text import decode
from ..versions import CreateOnly, IfMatch, Version
from .core import Core
from .pipeline import run
from .plans import FilePlan, Plan, ask, lost_of

__all__ = ["read_bytes", "write_bytes"]


def read_bytes(fs: Core, path: str) -> tuple[bytes, Version]:
    """The whole file (at most the edit limit) and its version; the owner has now observed
    that version, as after a read of every line."""
    with fs.observing():
        key, shown = fs._file(path)
        data, version = fs._load_bytes(key)
        fs._observed(key, shown, data, version)
        return data, version


def write_bytes(fs: Core, path: str, data: bytes) -> Version:
    """Replace (or create) the whole file with ``data``, exactly: conditional on the
    version this owner observed, create-only when it observed none (the observation
    policy's rule for a whole-file write). Returns the version the file now has."""
    with fs.observing():
        fs._writable()
        key, shown = fs._file(path)
        fs._writable_at(key)
        fs._check_size(shown, len(data))
        intent = ask(fs, "write", key, shown, operation="write", size=len(data))
        plan = FilePlan(key, shown, data, intent.precondition, "write", "write",
                        lost_of(intent), fs._meta(), check_first="write")
        done = run(fs, Plan.one("write", plan))[0]
        version = done.version
        assert version is not None
        if done.unchanged:
            fs._observed(key, shown, data, version)
            return version
        pre = plan.precondition
        _keep(fs, key, shown, data, version)
        fs._gate.dispatch(WrittenEvent(
            owner=fs.owner, key=key, path=shown, operation="write", version=version,
            created=isinstance(pre, CreateOnly),
            replaced=pre.version if isinstance(pre, IfMatch) else None))
        return version


def _keep(fs: Core, key: str, shown: str, data: bytes, version: Version) -> None:
    """Keep the text of the version written, which a later refusal's diff starts from."""
    try:
        fmt = decode(data, shown).format
    except FsError:
        return
    fs._docs.put(key, version, fmt, data)

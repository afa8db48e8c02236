"""Copying one object to a new key: in the store when it guards both sides of a copy in
the request, else as a read of the source and a create-only write of the destination."""

from __future__ import annotations

import secrets

from ...versions import CreateOnly, Precondition, Version
from . import messages as msg
from .errors import AMBIGUOUS, Fault
from .view import StoreView

__all__ = ["copy"]


def copy(b: StoreView, src: str, dst: str, source: Precondition) -> Version:
    src = b._file_key(src, "copy")
    dst = b._file_key(dst, "copy")
    if isinstance(source, CreateOnly):
        raise msg.create_only_source(src)
    expected = b._expected(src, source)
    b._check_free(dst, "copy")
    if b.server_side_copy:
        return _copy_in_store(b, src, dst, expected)
    # The store does not guard a copy's conditions: read the source (its version comes
    # with its bytes), then write the destination create-only, which the store guards.
    try:
        got = b._client.get(b._keys.name(src))
    except Exception as e:
        if expected is not None and b._fault(e, "get") is Fault.NOT_FOUND:
            raise msg.no_longer_exists(src) from e
        raise b._missing_or_directory(e, "get", src, "copy") from e
    if expected is not None and got.version != expected:
        raise msg.changed_since_read(src)
    return b._put(dst, got.data, CreateOnly(), None, "copy")

def _copy_in_store(b: StoreView, src: str, dst: str, expected: Version | None) -> Version:
    write_id = secrets.token_hex(12)
    try:
        return b._client.copy(
            b._keys.name(src),
            b._keys.name(dst),
            source_match=expected,
            write_id=write_id,
        )
    except Exception as e:
        fault = b._fault(e, "copy")
        if fault is Fault.NOT_FOUND:
            if expected is not None:
                raise msg.no_longer_exists(src) from e
            raise b._missing_or_directory(e, "copy", src, "copy") from e
        if fault not in AMBIGUOUS:
            raise b._error(e, "copy", dst, "copy") from e
        dst_exists, head = b._look(dst)
        if head is not None and head.write_id == write_id:
            return head.version  # our copy landed; only its answer was lost
        if fault is Fault.PRECONDITION and dst_exists is False:
            # Not the destination's absence: the source's version failed.
            src_exists, _ = b._look(src)
            if src_exists is False:
                raise msg.no_longer_exists(src) from e
            raise msg.changed_since_read(src) from e
        raise b._error(e, "copy", dst, "copy", CreateOnly(), dst_exists) from e

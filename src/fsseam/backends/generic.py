"""Fallback for fsspec protocols without an adapter: the compare-and-swap is emulated."""

from __future__ import annotations

from typing import Any

import fsspec

from ..versions import Capabilities
from ._fsspec import FsspecDigestBackend


class GenericBackend(FsspecDigestBackend):
    """Digest versions; the precondition is checked under a lock of this process and then
    the object is written, so another process can still slip a write in between."""

    capabilities = Capabilities(
        create_only_atomic=False,
        if_match_atomic=False,
        version_kind="sha256",
        ranged_reads=False,
        note="emulated: checked then written under a lock of this process only (not atomic)",
    )

    @classmethod
    def from_url(
        cls, url: str, storage_options: dict[str, Any], fs: Any | None = None
    ) -> GenericBackend:
        if fs is None:
            fs, root = fsspec.core.url_to_fs(url, **storage_options)
        else:
            root = fs._strip_protocol(url)
        return cls(fs, root)

"""Content-digest versions, shared by the local, memory and generic backends."""

from __future__ import annotations

import hashlib

from ..versions import Version

DIGEST_KIND = "sha256"


def digest_version(data: bytes) -> Version:
    return Version(kind=DIGEST_KIND, value=hashlib.sha256(data).hexdigest())


def hasher() -> hashlib._Hash:
    return hashlib.sha256()


def version_of(h: hashlib._Hash) -> Version:
    return Version(kind=DIGEST_KIND, value=h.hexdigest())

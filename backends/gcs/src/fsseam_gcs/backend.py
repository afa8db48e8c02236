"""GCSBackend: the fsseam Backend protocol over Google Cloud Storage (through gcsfs).

Version = the object's generation. GCS gives every write a new generation (even for
identical bytes), returns it with the bytes of a media GET (``X-Goog-Generation``) and with
every upload, and checks ``ifGenerationMatch`` on the upload itself, so both CreateOnly
(``ifGenerationMatch=0``) and IfMatch are decided by the storage, atomically, in the same
request as the write. The object-store template (``fsseam.backends.objectstore``) does the
rest; this module says what GCS guarantees and builds the client.

Request budget (checked by tests/test_gcs_requests.py against a counting proxy):
read = 1 GET; write = 1 POST (below ``resumable_threshold``), after one listing of
``key/`` (and a metadata GET per parent) when it creates; stat = 1 GET for a file;
list = 1 GET per 1000 children; delete with a version = 1 DELETE; walk = 1 GET per 1000
objects. Extra requests happen only on error paths (telling a directory from a missing
key, a vanished object from a moved-on one).
"""

from __future__ import annotations

import os
from typing import Any

from fsspec.core import split_protocol
from google.auth.exceptions import GoogleAuthError

from fsseam.backends.objectstore import (
    MAX_VERSIONS_LISTED,
    KeySpace,
    ObjectStoreBackend,
    StoreFacts,
    unusable_credentials,
)

from .client import RESUMABLE_THRESHOLD, VERSION_KIND, GcsClient, make_filesystem
from .errors import MAPPER

__all__ = ["BACKEND_OPTIONS", "RESUMABLE_THRESHOLD", "GCSBackend"]

_GOOGLE = "https://storage.googleapis.com"


def _custom_endpoint(fs: Any) -> bool:
    """Talking to something other than Google (an emulator)?"""
    endpoint = getattr(fs, "_endpoint", None) or os.environ.get("STORAGE_EMULATOR_HOST")
    return bool(endpoint) and str(endpoint).rstrip("/") != _GOOGLE


class GCSBackend(ObjectStoreBackend):
    """Generation-versioned GCS objects under ``bucket/prefix``.

    ``server_side_copy``: copy with ``rewriteTo`` carrying ``ifGenerationMatch=0`` and
    ``ifSourceGenerationMatch`` (GCS decides both). By default only against Google itself;
    against an emulator (which ignores both) a copy reads the source and uploads the
    destination create-only.
    """

    facts = StoreFacts(
        version_kind=VERSION_KIND,
        note=(
            "ifGenerationMatch on the upload (0 = create only), on DELETE and on rewriteTo "
            "(with ifSourceGenerationMatch): decided by GCS in the request; history where "
            "the bucket has object versioning"
        ),
    )

    def __init__(
        self,
        fs: Any,
        bucket: str,
        prefix: str = "",
        *,
        server_side_copy: bool | None = None,
        list_page_size: int | None = None,
        max_versions_listed: int = MAX_VERSIONS_LISTED,
    ) -> None:
        keys = KeySpace.parse(f"{bucket}/{prefix}", "gs")
        self.fs = fs
        self._gcs = GcsClient(fs, keys.bucket)
        super().__init__(
            self._gcs,
            MAPPER,
            keys,
            server_side_copy=(
                not _custom_endpoint(fs) if server_side_copy is None else server_side_copy
            ),
            list_page_size=list_page_size,
            max_versions_listed=max_versions_listed,
        )

    @property
    def resumable_threshold(self) -> int:
        """Objects larger than this go by resumable upload (8 MiB chunks)."""
        return self._gcs.resumable_threshold

    @resumable_threshold.setter
    def resumable_threshold(self, value: int) -> None:
        self._gcs.resumable_threshold = value

    @classmethod
    def parse_url(cls, url: str) -> str:
        """``gs://bucket/prefix`` (or ``gcs://``). ``storage_options`` go to GCSFileSystem
        (``endpoint_url``, ``token``, ``project``, ...), except the backend's options."""
        scheme, path = split_protocol(url)
        return KeySpace.parse(path, scheme or "gs").root

    @classmethod
    def make_filesystem(cls, fs_options: dict[str, Any], url: str) -> Any:
        try:
            return make_filesystem(fs_options)
        except GoogleAuthError as e:
            # gcsfs sets credentials up when the filesystem is made (token=
            # "google_default" without Application Default Credentials, say).
            raise unusable_credentials("GCS", e, MAPPER.configure) from e

    @classmethod
    def from_root(cls, fs: Any, root: str, options: dict[str, Any]) -> GCSBackend:
        bucket, _, prefix = root.partition("/")
        return cls(fs, bucket, prefix, **options)


BACKEND_OPTIONS = GCSBackend.backend_options()
"""Options read by GCSBackend itself; everything else goes to gcsfs.GCSFileSystem."""

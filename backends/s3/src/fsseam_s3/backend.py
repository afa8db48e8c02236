"""S3Backend: ETag versions and storage-side compare-and-swap through S3 conditional requests.

The object-store template (``fsseam.backends.objectstore``) does the work; this module only
says what S3 guarantees and builds the client from a URL and storage options.

Request budget (counted at a moto server by tests/test_s3_requests.py):
  read    one GetObject, which returns the bytes and their ETag together
  write   one PutObject carrying If-Match / If-None-Match, for up to
          ``multipart_threshold`` bytes (default 64 MiB); above it a multipart upload with
          the condition on CompleteMultipartUpload. A create (CreateOnly, Overwrite) first
          lists ``key/`` (and HEADs each parent): a path is a file or a directory.
  delete  one DeleteObject with If-Match (HEAD + DeleteObject without a version: S3 deletes
          a missing key without a word)
  walk    one ListObjectsV2 per 1,000 keys
  history one ListObjectVersions page per 1,000 versions, up to ``max_versions_listed``
          (owners: only those this process wrote, unless ``history_owners`` asks one
          HeadObject per version shown); reading an older version is one GetObject with
          its VersionId, and a restore by a full VersionId needs no listing
"""

from __future__ import annotations

import os
import re
from typing import Any

from fsseam.backends.objectstore import (
    MAX_VERSIONS_LISTED,
    KeySpace,
    ObjectStoreBackend,
    StoreFacts,
)
from fsseam.errors import ErrorCode, FsError
from fsseam.messages import Reason

from . import sentences  # noqa: F401  (the sentences raised here)
from ._filesystem import make_filesystem
from .client import (
    DEFAULT_MULTIPART_THRESHOLD,
    DEFAULT_PART_SIZE,
    MAX_PART_COUNT,
    MAX_PUT_SIZE,
    MIN_PART_SIZE,
    S3Client,
)
from .errors import MAPPER

__all__ = ["MAX_PART_COUNT", "MAX_PUT_SIZE", "MIN_PART_SIZE", "S3Backend"]


def _custom_endpoint(fs: Any) -> bool:
    """Talking to something other than AWS S3 (MinIO, moto, R2...)?"""
    kwargs = getattr(fs, "client_kwargs", None) or {}
    return bool(
        kwargs.get("endpoint_url")
        or getattr(fs, "endpoint_url", None)
        or os.environ.get("AWS_ENDPOINT_URL_S3")
        or os.environ.get("AWS_ENDPOINT_URL")
    )


class S3Backend(ObjectStoreBackend):
    """A workspace rooted at ``bucket/prefix`` of an S3 (or S3-compatible) store.

    ``server_side_copy``: copy with one CopyObject carrying ``If-None-Match: *`` and
    ``x-amz-copy-source-if-match`` (AWS S3 decides both). By default only against AWS
    itself; against another endpoint (MinIO, moto, ...), whose CopyObject may ignore those
    conditions, a copy reads the source and writes the destination create-only.

    ``history_owners``: ListObjectVersions returns no user metadata, so the owner each
    write stores (``x-amz-meta-fsseam-owner``) is asked with one HeadObject per version a
    history shows. Off by default: a history is then one request.

    ``direct_requests``: GetObject, HeadObject and a single PutObject sent from the calling
    thread, signed by botocore's signer with the client's credentials
    (:mod:`fsseam_s3.transport`), when the s3fs client is one that path can speak for.
    False: every request through s3fs's event loop and aiobotocore's pipeline.
    """

    facts = StoreFacts(
        version_kind="etag",
        note=(
            "PutObject / CompleteMultipartUpload with If-None-Match: * (create-only) or "
            "If-Match: <ETag>, DeleteObject with If-Match, CopyObject with If-None-Match: * "
            "and x-amz-copy-source-if-match: decided by S3 in the request; history where "
            "the bucket is versioned (GetBucketVersioning)"
        ),
    )
    store_options = ("multipart_threshold", "multipart_part_size", "conflict_retries",
                     "history_owners", "direct_requests")

    def __init__(
        self,
        fs: Any,
        root: str,
        *,
        multipart_threshold: int = DEFAULT_MULTIPART_THRESHOLD,
        multipart_part_size: int = DEFAULT_PART_SIZE,
        conflict_retries: int = 5,
        server_side_copy: bool | None = None,
        list_page_size: int | None = None,
        history_owners: bool = False,
        max_versions_listed: int = MAX_VERSIONS_LISTED,
        direct_requests: bool = True,
    ) -> None:
        keys = KeySpace.parse(root, "s3")
        if not 0 < multipart_threshold <= MAX_PUT_SIZE:
            raise FsError(
                ErrorCode.FS_INVALID_ARGUMENT,
                reason=Reason.limit_out_of_range,
                details={"arg": "multipart_threshold", "low": 1, "high": MAX_PUT_SIZE,
                         "value": multipart_threshold},
            )
        if multipart_part_size < MIN_PART_SIZE:
            raise FsError(
                ErrorCode.FS_INVALID_ARGUMENT, reason="s3_part_size", details={"min": MIN_PART_SIZE}
            )
        self.fs = fs
        client = S3Client(
            fs,
            keys.bucket,
            multipart_threshold=multipart_threshold,
            multipart_part_size=multipart_part_size,
            conflict_retries=conflict_retries,
            direct_requests=direct_requests,
        )
        super().__init__(
            client,
            MAPPER,
            keys,
            server_side_copy=(
                not _custom_endpoint(fs) if server_side_copy is None else server_side_copy
            ),
            list_page_size=list_page_size,
            history_owners=history_owners,
            max_versions_listed=max_versions_listed,
        )
        self.multipart_threshold = multipart_threshold
        self.multipart_part_size = multipart_part_size
        self.conflict_retries = conflict_retries

    @classmethod
    def parse_url(cls, url: str) -> str:
        # Both s3:// and s3a:// name a bucket; strip either scheme.
        return re.sub(r"^[a-zA-Z0-9]+://", "", url)

    @classmethod
    def make_filesystem(cls, fs_options: dict[str, Any], url: str) -> Any:
        return make_filesystem(fs_options)

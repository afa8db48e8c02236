"""The shipped conformance suite against fake-gcs-server, under a prefix and at a bucket root."""

from __future__ import annotations

from typing import Any

import pytest
from fsseam_gcs import RESUMABLE_THRESHOLD, GCSBackend

from fsseam.backends import Backend, open_backend
from fsseam.testing import BackendConformance, ProcessConformance


class TestGCS(BackendConformance, ProcessConformance):
    @pytest.fixture
    def backend_spec(
        self, gcs_bucket: str, gcs_options: dict[str, Any]
    ) -> tuple[str, dict[str, Any]]:
        return (f"gs://{gcs_bucket}/work/space", dict(gcs_options))

    @pytest.fixture
    def backend(self, backend_spec: tuple[str, dict[str, Any]]) -> Backend:
        b = open_backend(*backend_spec)
        assert isinstance(b, GCSBackend)
        assert b.root == backend_spec[0].removeprefix("gs://")
        # The suite's large object (8 MiB) stays below the resumable threshold, so it is one
        # multipart request, where the emulator enforces preconditions.
        assert BackendConformance.large_size < RESUMABLE_THRESHOLD
        return b


class TestGCSBucketRoot(BackendConformance):
    """The same suite with the root at the bucket itself (no prefix), via gcs://."""

    @pytest.fixture
    def backend(self, gcs_bucket: str, gcs_options: dict[str, Any]) -> Backend:
        b = open_backend(f"gcs://{gcs_bucket}", dict(gcs_options))
        assert isinstance(b, GCSBackend)
        assert b.root == gcs_bucket
        return b

"""The shipped conformance suite, over moto: under a prefix of a plain bucket (copies read
and write, as against any S3-compatible endpoint), and at the root of a versioned bucket
with CopyObject doing the copies (as against AWS S3)."""

from __future__ import annotations

from typing import Any

import pytest
from fsseam_s3 import S3Backend

from fsseam.backends import Backend, open_backend
from fsseam.testing import BackendConformance, ProcessConformance

MOTO_IGNORES_COPY_CONDITIONS = (
    "moto 5.2.5 ignores If-None-Match and x-amz-copy-source-if-match on CopyObject "
    "(AWS S3 decides both and answers 412)"
)


class TestS3Prefix(BackendConformance, ProcessConformance):
    keeps_history = False

    @pytest.fixture
    def backend_spec(self, bucket: str, s3_options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        return (f"s3://{bucket}/work/space", s3_options)

    @pytest.fixture
    def backend(self, backend_spec: tuple[str, dict[str, Any]]) -> Backend:
        b = open_backend(*backend_spec)
        assert isinstance(b, S3Backend)
        assert b.server_side_copy is False  # moto is a custom endpoint
        return b


class TestS3aBucketRootVersioned(BackendConformance):
    """The whole bucket as the root, through the s3a:// alias, with versioning on and
    server-side copies."""

    keeps_history = True

    @pytest.fixture
    def backend(self, versioned_bucket: str, s3_options: dict[str, Any]) -> Backend:
        b = open_backend(f"s3a://{versioned_bucket}", {**s3_options, "server_side_copy": True})
        assert isinstance(b, S3Backend)
        assert b.root == versioned_bucket
        assert b.capabilities.copy_create_only_atomic is True
        return b

    @pytest.mark.xfail(strict=True, reason=MOTO_IGNORES_COPY_CONDITIONS)
    def test_copy_onto_existing_conflicts(self, backend: Backend) -> None:
        super().test_copy_onto_existing_conflicts(backend)

    @pytest.mark.xfail(strict=True, reason=MOTO_IGNORES_COPY_CONDITIONS)
    def test_copy_stale_source_conflicts(self, backend: Backend) -> None:
        super().test_copy_stale_source_conflicts(backend)

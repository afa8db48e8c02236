"""The shipped conformance suite, over moto."""

from __future__ import annotations

from typing import Any

import pytest
from fsseam_s3 import S3Backend

from fsseam.backends import Backend, open_backend
from fsseam.testing import BackendConformance, ProcessConformance


class TestS3Prefix(BackendConformance, ProcessConformance):
    @pytest.fixture
    def backend_spec(self, bucket: str, s3_options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        return (f"s3://{bucket}/work/space", s3_options)

    @pytest.fixture
    def backend(self, backend_spec: tuple[str, dict[str, Any]]) -> Backend:
        b = open_backend(*backend_spec)
        assert isinstance(b, S3Backend)
        return b


class TestS3aBucketRootVersioned(BackendConformance):
    """The whole bucket as the root, through the s3a:// alias, with versioning on."""

    @pytest.fixture
    def backend(self, versioned_bucket: str, s3_options: dict[str, Any]) -> Backend:
        b = open_backend(f"s3a://{versioned_bucket}", s3_options)
        assert isinstance(b, S3Backend)
        assert b.root == versioned_bucket
        return b

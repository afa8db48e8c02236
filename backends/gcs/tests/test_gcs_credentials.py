"""Credentials and buckets that are not there: errors that say what to do next.

fake-gcs-server checks no credentials, so a fault proxy in front of it answers the way GCS
answers an anonymous caller (401) or a caller without the permission (403), in GCS's own
JSON error format (the shared :class:`~fsseam.testing.stores.CredentialsSuite`).
Application Default Credentials that do not exist fail locally, when the
filesystem is made.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from fsseam_gcs.testing import GcsEndpoint, GcsFaultProxy

from fsseam import ErrorCode, FsError, Workspace, open_backend
from fsseam.testing.stores import CredentialsSuite, Refusal

CONFIGURE = ("storage_options", "GOOGLE_APPLICATION_CREDENTIALS")


@pytest.fixture
def refused_credentials(gcs_server: GcsEndpoint, gcs_bucket: str) -> Iterator[Refusal]:
    """An anonymous caller."""
    with gcs_server.fault_proxy() as proxy:
        for method in ("GET", "POST"):
            proxy.inject(method, f"/b/{gcs_bucket}/o", "401", 100)
        ws = Workspace(f"gs://{gcs_bucket}/p", storage_options=proxy.storage_options())
        yield Refusal(says="Anonymous caller", hints=CONFIGURE, workspace=ws,
                      check=lambda: _nothing_reached(proxy, gcs_bucket))


def _nothing_reached(proxy: GcsFaultProxy, bucket: str) -> None:
    # One request each: a 401 is not retried, and nothing reached the storage.
    assert proxy.seen("GET", f"/b/{bucket}/o") == 2
    assert proxy.seen("GET", f"/b/{bucket}/o", forwarded=True) == 0
    assert proxy.seen("POST", f"/b/{bucket}/o") == 0


@pytest.fixture
def missing_permission(gcs_server: GcsEndpoint, gcs_bucket: str) -> Iterator[Refusal]:
    """Uploads refused for want of storage.objects.create."""
    with gcs_server.fault_proxy() as proxy:
        proxy.inject("POST", f"/upload/storage/v1/b/{gcs_bucket}/o", "403", 100)
        backend = open_backend(f"gs://{gcs_bucket}/p", proxy.storage_options())
        yield Refusal(says="", hints=("roles/storage.objectUser", "storage.objects.create"),
                      backend=backend, ops=("write",),
                      check=lambda: _nothing_written(gcs_server, gcs_bucket))


def _nothing_written(gcs_server: GcsEndpoint, bucket: str) -> None:
    with pytest.raises(FsError) as gone:
        open_backend(f"gs://{bucket}/p", gcs_server.storage_options()).read("a.txt")
    assert gone.value.code is ErrorCode.FS_NOT_FOUND


class TestCredentials(CredentialsSuite):
    pass


def test_no_default_credentials_fail_when_the_workspace_is_made(
    gcs_server: GcsEndpoint, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    """token="google_default" with no Application Default Credentials anywhere (and no GCE
    metadata server asked): a misconfigured workspace raises, saying what to configure."""
    monkeypatch.delenv("GOOGLE_APPLICATION_CREDENTIALS", raising=False)
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "gcloud"))
    monkeypatch.setenv("NO_GCE_CHECK", "true")
    monkeypatch.setenv("GCE_METADATA_HOST", "127.0.0.1:9")
    monkeypatch.setenv("GCE_METADATA_IP", "127.0.0.1:9")
    options = {"endpoint_url": gcs_server.url, "token": "google_default", "project": "test"}
    with pytest.raises(FsError) as info:
        Workspace("gs://any-bucket/p", storage_options=options)
    assert info.value.code is ErrorCode.FS_PERMISSION_DENIED
    assert "DefaultCredentialsError" in info.value.message
    assert all(hint in info.value.message for hint in CONFIGURE)
    assert os.environ["NO_GCE_CHECK"] == "true"

"""Credentials and buckets that are not there: errors that say what to do next.

fake-gcs-server checks no credentials, so a fault proxy in front of it answers the way GCS
answers an anonymous caller (401) or a caller without the permission (403), in GCS's own
JSON error format. Application Default Credentials that do not exist fail locally, when the
filesystem is made.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from fsseam_gcs.testing import GcsEndpoint

from fsseam import CreateOnly, ErrorCode, FsError, Workspace, open_backend

CONFIGURE = ("storage_options", "GOOGLE_APPLICATION_CREDENTIALS")


def _denied(res: Any) -> str:
    assert not res.ok
    assert res.error is not None and res.error.code is ErrorCode.FS_PERMISSION_DENIED, res.text
    assert "Retry later" not in res.text  # retrying never helps
    text: str = res.text
    return text


def test_anonymous_caller_is_permission_denied_saying_what_to_configure(
    gcs_server: GcsEndpoint, gcs_bucket: str
) -> None:
    with gcs_server.fault_proxy() as proxy:
        for method in ("GET", "POST"):
            proxy.inject(method, f"/b/{gcs_bucket}/o", "401", 100)
        ctx = Workspace(f"gs://{gcs_bucket}/p", storage_options=proxy.storage_options())
        ctx_a = ctx.context("a")
        for tool, args in [
            ("read", {"file_path": "/a.txt"}),
            ("write", {"file_path": "/a.txt", "content": "x"}),
        ]:
            text = _denied(ctx_a.tools.execute(tool, args))
            assert "Anonymous caller" in text
            assert all(hint in text for hint in CONFIGURE), text
        # One request each: a 401 is not retried, and nothing reached the storage.
        assert proxy.seen("GET", f"/b/{gcs_bucket}/o") == 2
        assert proxy.seen("GET", f"/b/{gcs_bucket}/o", forwarded=True) == 0
        assert proxy.seen("POST", f"/b/{gcs_bucket}/o") == 0


def test_missing_permission_is_permission_denied_saying_what_to_grant(
    gcs_server: GcsEndpoint, gcs_bucket: str
) -> None:
    with gcs_server.fault_proxy() as proxy:
        proxy.inject("POST", f"/upload/storage/v1/b/{gcs_bucket}/o", "403", 100)
        backend = open_backend(f"gs://{gcs_bucket}/p", proxy.storage_options())
        with pytest.raises(FsError) as info:
            backend.write("a.txt", b"x", CreateOnly())
        assert info.value.code is ErrorCode.FS_PERMISSION_DENIED
        assert "roles/storage.objectUser" in info.value.message
        assert "storage.objects.create" in info.value.message
    with pytest.raises(FsError) as gone:
        open_backend(f"gs://{gcs_bucket}/p", gcs_server.storage_options()).read("a.txt")
    assert gone.value.code is ErrorCode.FS_NOT_FOUND


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

"""Credentials and buckets that are not there: errors that say what to do next.

No credentials at all never reach S3 (botocore refuses to sign); unknown keys and missing
permissions are answered by a moto server that checks signatures and IAM policies (moto's
``INITIAL_NO_AUTH_ACTION_COUNT``, set to 0 for one test and restored after it).
"""

from __future__ import annotations

import importlib
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from fsseam_s3 import S3Backend
from fsseam_s3.testing import CREDENTIALS, MotoEndpoint

from fsseam import CreateOnly, ErrorCode, FsError, Workspace, open_backend

CONFIGURE = ("storage_options", "AWS_ACCESS_KEY_ID")


def _denied(res: Any) -> str:
    assert not res.ok
    assert res.error is not None and res.error.code is ErrorCode.FS_PERMISSION_DENIED, res.text
    assert "Retry later" not in res.text  # retrying never helps
    text: str = res.text
    return text


@pytest.fixture
def no_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """No AWS credentials anywhere botocore looks (and no instance metadata to ask)."""
    import os

    for name in list(os.environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


@pytest.fixture
def auth_enforced(moto: MotoEndpoint) -> Iterator[dict[str, str]]:
    """moto checks every request's signature and IAM policy while the test runs; yields the
    keys of an IAM user that may do nothing."""
    boto3: Any = importlib.import_module("boto3")
    iam = boto3.client(
        "iam",
        endpoint_url=moto.url,
        region_name="us-east-1",
        aws_access_key_id=CREDENTIALS["key"],
        aws_secret_access_key=CREDENTIALS["secret"],
    )
    user = f"nobody-{uuid.uuid4().hex[:8]}"
    iam.create_user(UserName=user)
    key = iam.create_access_key(UserName=user)["AccessKey"]
    settings: Any = importlib.import_module("moto.settings")
    authorization: Any = importlib.import_module("moto.core.authorization")
    previous = settings.INITIAL_NO_AUTH_ACTION_COUNT
    settings.INITIAL_NO_AUTH_ACTION_COUNT = 0
    authorization.ActionAuthenticatorMixin.request_count = 0
    try:
        yield {"key": key["AccessKeyId"], "secret": key["SecretAccessKey"]}
    finally:
        settings.INITIAL_NO_AUTH_ACTION_COUNT = previous


def test_no_credentials_is_permission_denied_saying_what_to_configure(
    no_credentials: None, moto: MotoEndpoint, bucket: str
) -> None:
    ws = Workspace(f"s3://{bucket}/p", storage_options={"endpoint_url": moto.url})
    ctx = ws.context("a")
    moto.log.clear()
    for tool, args in [
        ("read", {"file_path": "/a.txt"}),
        ("write", {"file_path": "/a.txt", "content": "x"}),
    ]:
        text = _denied(ctx.tools.execute(tool, args))
        assert "NoCredentialsError" in text
        assert all(hint in text for hint in CONFIGURE), text
    assert moto.log.to_bucket(bucket) == []  # nothing was even sent


def test_unknown_key_is_permission_denied_saying_what_to_configure(
    moto: MotoEndpoint, bucket: str, auth_enforced: dict[str, str]
) -> None:
    options = {"endpoint_url": moto.url, "key": "AKIAIOSFODNN7EXAMPLE", "secret": "wrong"}
    ctx = Workspace(f"s3://{bucket}/p", storage_options=options).context("a")
    moto.log.clear()
    for tool, args in [
        ("read", {"file_path": "/a.txt"}),
        ("write", {"file_path": "/a.txt", "content": "x"}),
    ]:
        text = _denied(ctx.tools.execute(tool, args))
        assert "InvalidAccessKeyId" in text
        assert all(hint in text for hint in CONFIGURE), text
    assert {r.status for r in moto.log.records_to(bucket)} == {403}


def test_missing_permission_is_permission_denied_saying_what_to_grant(
    moto: MotoEndpoint, bucket: str, auth_enforced: dict[str, str]
) -> None:
    backend = open_backend(f"s3://{bucket}/p", {"endpoint_url": moto.url, **auth_enforced})
    assert isinstance(backend, S3Backend)
    moto.log.clear()
    for call in (lambda: backend.read("a.txt"), lambda: backend.write("a.txt", b"x",
                                                                       CreateOnly())):
        with pytest.raises(FsError) as info:
            call()
        assert info.value.code is ErrorCode.FS_PERMISSION_DENIED
        assert "AccessDenied" in info.value.message
        assert "s3:GetObject" in info.value.message and "s3:PutObject" in info.value.message
    assert {r.status for r in moto.log.records_to(bucket)} == {403}  # no PUT got through

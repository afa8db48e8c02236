"""Credentials and buckets that are not there: errors that say what to do next.

No credentials at all never reach S3 (botocore refuses to sign); unknown keys and missing
permissions (the shared :class:`~fsseam.testing.stores.CredentialsSuite`) are answered by a
moto server that checks signatures and IAM policies (moto's
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

from fsseam import Workspace, open_backend
from fsseam.testing.stores import CredentialsSuite, Refusal
from fsseam.testing.stores.credentials import denied

CONFIGURE = ("storage_options", "AWS_ACCESS_KEY_ID")


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
        text = denied(ctx.tools.execute(tool, args))
        assert "NoCredentialsError" in text
        assert all(hint in text for hint in CONFIGURE), text
    assert moto.log.to_bucket(bucket) == []  # nothing was even sent


def _only_refusals(moto: MotoEndpoint, bucket: str) -> None:
    assert {r.status for r in moto.log.records_to(bucket)} == {403}  # no PUT got through


@pytest.fixture
def refused_credentials(
    moto: MotoEndpoint, bucket: str, auth_enforced: dict[str, str]
) -> Refusal:
    """An unknown key."""
    options = {"endpoint_url": moto.url, "key": "AKIAIOSFODNN7EXAMPLE", "secret": "wrong"}
    ws = Workspace(f"s3://{bucket}/p", storage_options=options)
    moto.log.clear()
    return Refusal(says="InvalidAccessKeyId", hints=CONFIGURE, workspace=ws,
                   check=lambda: _only_refusals(moto, bucket))


@pytest.fixture
def missing_permission(
    moto: MotoEndpoint, bucket: str, auth_enforced: dict[str, str]
) -> Refusal:
    """An IAM user that may do nothing: reads and writes are refused."""
    backend = open_backend(f"s3://{bucket}/p", {"endpoint_url": moto.url, **auth_enforced})
    assert isinstance(backend, S3Backend)
    moto.log.clear()
    return Refusal(says="AccessDenied", hints=("s3:GetObject", "s3:PutObject"),
                   backend=backend, check=lambda: _only_refusals(moto, bucket))


class TestCredentials(CredentialsSuite):
    pass

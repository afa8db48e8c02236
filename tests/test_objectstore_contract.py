"""The client contract of the object-store template: one base class, ``ObjectClient``,
whose facts and optional operations have defaults a client overrides (never found by
name, never told by isinstance)."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any, ClassVar

import pytest

import fsseam.backends.objectstore as objectstore
from fsseam.backends.objectstore import (
    KeySpace,
    ObjectClient,
    ObjectData,
    ObjectStoreBackend,
    Op,
    Resent,
    StoreError,
    StoreFacts,
    StoreFault,
)
from fsseam.errors import Conflict, ConflictKind, ErrorCode, FsError
from fsseam.versions import IfMatch, Version


class _Store(ObjectStoreBackend):
    facts = StoreFacts(version_kind="etag", note="a store")


class _Client(ObjectClient):
    """Only what these tests reach: the declarations and a GET that records its version."""

    version_kind: ClassVar[str] = "etag"
    bucket = "b"

    def __init__(self) -> None:
        self.gets: list[Version | None] = []

    def get(self, name: str, **kw: Any) -> ObjectData:
        self.gets.append(kw.get("version"))
        return ObjectData(data=b"old", version=kw["version"], size=3)


class _ClientById(_Client):
    keeps_owner: ClassVar[bool] = True

    def version_of_id(self, version_id: str) -> Version | None:
        return Version(kind="etag", value="", detail=version_id) if version_id else None


def _backend(client: _Client) -> _Store:
    return _Store(client, mapper=None, keys=KeySpace("b"), server_side_copy=False)  # type: ignore[arg-type]


def test_the_clients_declare_whether_they_keep_owners() -> None:
    from fsseam_azure.client import AzureClient
    from fsseam_gcs.client import GcsClient
    from fsseam_s3.client import S3Client

    declared = {c.__name__: c.__dict__.get("keeps_owner") for c in
                (S3Client, GcsClient, AzureClient)}
    assert declared == {"S3Client": True, "GcsClient": True, "AzureClient": False}
    named = {c.__name__: "version_of_id" in c.__dict__ for c in
             (S3Client, GcsClient, AzureClient)}
    assert named == {"S3Client": True, "GcsClient": True, "AzureClient": True}


def test_keeps_owner_is_read_off_the_client_class() -> None:
    assert not _backend(_Client()).capabilities.write_meta
    assert _backend(_ClientById()).capabilities.write_meta


def test_a_client_that_names_versions_by_id_is_read_with_one_get() -> None:
    client = _ClientById()
    blob = _backend(client).read_version_id("a.txt", "7")
    assert blob.data == b"old"
    assert client.gets == [Version(kind="etag", value="", detail="7")]


def test_a_client_without_ids_says_the_version_is_not_kept_and_asks_nothing() -> None:
    client = _Client()
    backend = _backend(client)
    with pytest.raises(FsError) as info:
        backend.read_version_id("a.txt", "7")
    assert info.value.code is ErrorCode.FS_NOT_FOUND
    assert client.gets == []


def test_the_template_finds_no_client_operation_by_name() -> None:
    root = Path(objectstore.__file__).parent
    found = [
        f"{path.name}:{node.lineno}"
        for path in sorted(root.glob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
        and node.func.id in ("getattr", "hasattr")
    ]
    assert found == []


class _NoSuchKey(Exception):
    pass


class _Mapper:
    store = "X"
    configure = "_s3_configure"
    grant = "_s3_grant"

    def classify(self, exc: BaseException, op: Op) -> StoreError:
        return StoreError(StoreFault.NOT_FOUND, "NoSuchKey")


class _Deleting(_Client):
    """A guarded delete the store refuses: no such object."""

    def delete(self, name: str, *, if_match: Version | None) -> None:
        raise _NoSuchKey(name)


class _Telling(_Deleting):
    """As above, and the client knows how many times its request went out."""

    def __init__(self, sends: int) -> None:
        super().__init__()
        self.sends = sends

    def delete_telling_resends(self, name: str, *, if_match: Version | None) -> None:
        try:
            self.delete(name, if_match=if_match)
        except _NoSuchKey as e:
            if self.sends > 1:
                raise Resent(self.sends) from e
            raise


@pytest.mark.parametrize(("client", "resent"), [
    (_Deleting(), True), (_Telling(1), False), (_Telling(2), True)])
def test_a_guarded_delete_refusal_is_definitive_only_when_sent_once(
    client: _Deleting, resent: bool,
) -> None:
    """Only a client that counted one send makes a refusal definitive (a move then takes
    its copy back); a resend, or a client that cannot tell, may have met our own delete."""
    backend = _Store(client, mapper=_Mapper(), keys=KeySpace("b"), server_side_copy=False)
    with pytest.raises(Conflict) as info:
        backend.delete("a.txt", IfMatch(Version(kind="etag", value='"1"')))
    assert info.value.reason == ConflictKind.missing
    assert info.value.resent is resent


def test_the_store_clients_tell_resends() -> None:
    from fsseam_azure.client import AzureClient
    from fsseam_gcs.client import GcsClient
    from fsseam_s3.client import S3Client

    told = {c.__name__: "delete_telling_resends" in c.__dict__ for c in
            (S3Client, GcsClient, AzureClient)}
    assert told == {"S3Client": True, "GcsClient": True, "AzureClient": True}


def test_the_base_client_answers_each_optional_operation_without_a_request() -> None:
    """The defaults: no version named by id, no read started, no ranged listing; a failed
    delete may answer a resend (``Resent(0)``, the store's error its cause)."""
    client = _Deleting()
    assert client.version_of_id("7") is None
    assert client.start_get("a") is None
    assert not client.lists_after
    with pytest.raises(Resent) as info:
        client.delete_telling_resends("a", if_match=None)
    assert info.value.sends == 0 and isinstance(info.value.__cause__, _NoSuchKey)
    assert client.gets == []

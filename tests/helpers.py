"""Small helpers shared by the test modules (imported as ``tests.helpers``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, ClassVar

from fsseam import ErrorCode, ToolResult, Workspace
from fsseam.backends import MemoryBackend
from fsseam.backends.base import Stat
from fsseam.backends.objectstore import ObjectClient


def raw(ws: Workspace, path: str) -> bytes | None:
    """The bytes at a virtual path straight from the backend (None when absent)."""
    from fsseam import FsError

    try:
        return ws.backend.read(path.lstrip("/")).data
    except FsError as e:
        if e.code is ErrorCode.FS_NOT_FOUND:
            return None
        raise


def s3_reader(s3: Any, bucket: str) -> Callable[[str], bytes | None]:
    """The bytes of a key of ``bucket`` through a plain boto3 client, past every fsseam
    layer (None when absent)."""

    def read(path: str) -> bytes | None:
        try:
            body: bytes = s3.get_object(Bucket=bucket, Key=path.lstrip("/"))["Body"].read()
        except s3.exceptions.NoSuchKey:
            return None
        return body

    return read


def call(ws: Workspace, owner: str, tool: str, **args: Any) -> ToolResult:
    return ws.context(owner).tools.execute(tool, args)


def ok(res: ToolResult) -> ToolResult:
    assert res.ok, res.text
    return res


def fails(res: ToolResult, code: ErrorCode) -> ToolResult:
    assert not res.ok, res.text
    assert res.error is not None
    assert res.error.code is code, res.text
    assert res.text.startswith(f"Error [{code.value}]: ")
    return res


class Unsized(MemoryBackend):
    """A memory store that does not say sizes (in a stat or a walk), so a search streams
    its files chunk by chunk; counts the bytes its streams hand out (``streamed``) and
    calls ``on_chunk`` with each chunk's length."""

    streamed = 0
    on_chunk: Callable[[int], None] | None = None

    def stat(self, key: str) -> Stat:
        return super().stat(key).model_copy(update={"size": None})

    def walk(self, key: str) -> Iterator[Any]:
        for e in super().walk(key):
            yield e.model_copy(update={"size": None})

    def open_read(self, key: str, chunk_size: int = 1 << 20) -> Any:
        stream = super().open_read(key, chunk_size)
        owner = self

        class Counting:
            size = None
            version = property(lambda _: stream.version)

            def chunks(self) -> Iterator[bytes]:
                for chunk in stream.chunks():
                    owner.streamed += len(chunk)
                    if owner.on_chunk is not None:
                        owner.on_chunk(len(chunk))
                    yield chunk

            def close(self) -> None:
                stream.close()

        return Counting()


class GeneratedClient(ObjectClient):
    """The class facts of a store client a test makes up (keys generated, requests
    counted): S3's, which ``generated_s3`` puts it behind. A subclass supplies the calls."""

    version_kind: ClassVar[str] = "etag"
    silent_delete_of_missing: ClassVar[bool] = True
    bucket = "bucket"


def generated_s3(client: Any, **workspace: Any) -> Workspace:
    """A workspace over the S3 adapter with ``client`` as its store's client (generated
    keys, counted requests): the S3 backend's own facts (errors, versions) over a store
    made up by the test. Skips where the S3 adapter is not installed."""
    import pytest

    s3 = pytest.importorskip("fsseam_s3", reason="the S3 adapter gives the store's facts")
    from fsseam_s3.errors import MAPPER

    from fsseam.backends.objectstore import KeySpace, ObjectStoreBackend

    class Generated(s3.S3Backend):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            ObjectStoreBackend.__init__(self, client, MAPPER, KeySpace("bucket"),
                                        server_side_copy=False)

    return Workspace("s3://bucket", backend=Generated(), load_entry_points=False,
                     **workspace)

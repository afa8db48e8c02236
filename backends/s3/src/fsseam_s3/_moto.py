"""moto's in-process ``mock_aws`` for the s3fs client of an S3 workspace.

    from moto import mock_aws

    @mock_aws
    def test_agent():
        boto3.client("s3", region_name="us-east-1").create_bucket(Bucket="b")
        ws = Workspace("s3://b/p")        # no endpoint, no server: moto answers in-process

moto mocks AWS with a ``before-send`` handler (``botocore_stubber``) that answers botocore's
synchronous requests with botocore responses. s3fs speaks through aiobotocore, whose
request bodies are read asynchronously and whose responses must be awaitable, so that
answer breaks every call (``'coroutine' object has no attribute 'items'``). Each S3
workspace's aiobotocore session therefore carries a ``before-send`` hook of its own which,
while a mock is active, reads the request body, hands the request to moto's stubber and
wraps the answer in the aiohttp-shaped response aiobotocore reads. Everything else is
moto's real S3 model: ETags, ``If-Match`` / ``If-None-Match`` and their 412s, so
compare-and-swap is decided by moto exactly as against its server. The requests of one
workspace run one at a time on s3fs's event loop thread, so each conditional write is
checked and stored in one step.

Only this workspace's session is touched (moto's own handler is taken off it): other
aiobotocore clients in the process and moto itself are left as they are. Without an active
mock the hook answers nothing and the request goes out as usual.
"""

from __future__ import annotations

import asyncio
import inspect
import sys
from typing import Any

from fsseam.errors import ErrorCode, FsError

from . import sentences  # noqa: F401  (the sentence raised here)

__all__ = ["BRIDGE_MODULE", "attach", "attach_to_filesystem", "mock_active"]

_HOOK_ID = "fsseam-moto-in-process"
BRIDGE_MODULE = __name__
"""The module of the hook this puts on a session (a request hook that sends nothing while
no mock is active)."""


def _active_stubber() -> Any | None:
    """moto's stubber while a ``mock_aws`` is active; None otherwise (or without moto).

    Looked up per request in ``sys.modules``: a process that never imported moto pays one
    dictionary lookup, and moto is never imported here.
    """
    models = sys.modules.get("moto.core.models")
    stubber = getattr(models, "botocore_stubber", None)
    return stubber if getattr(stubber, "enabled", False) else None


def mock_active() -> bool:
    """Whether a ``mock_aws`` is active: requests must then go through the hook."""
    return _active_stubber() is not None


class _Content:
    """The ``content`` stream of an aiohttp response, over moto's in-memory body."""

    def __init__(self, raw: Any) -> None:
        self._raw = raw
        self._eof = False

    async def read(self, n: int = -1) -> bytes:
        data = self._raw.read() if n is None or n < 0 else self._raw.read(n)
        if not data or n is None or n < 0:
            self._eof = True
        return bytes(data or b"")

    def at_eof(self) -> bool:
        return self._eof


class _Response:
    """What aiobotocore reads of an ``aiohttp.ClientResponse``: ``read()``, ``content``,
    ``url`` and ``close()``."""

    def __init__(self, raw: Any, url: str) -> None:
        self.content = _Content(raw)
        self.url = url

    async def read(self) -> bytes:
        return await self.content.read(-1)

    def close(self) -> None:
        self.content._eof = True

    def release(self) -> None:
        self.close()


async def _body_bytes(body: Any) -> Any:
    """The request body as moto wants it: aiobotocore's checksum wrapper reads async."""
    if inspect.isawaitable(body):
        return await body
    read = getattr(body, "read", None)
    if read is not None and asyncio.iscoroutinefunction(read):
        return await read()
    return body


async def _before_send(request: Any, event_name: str = "", **kwargs: Any) -> Any:
    stubber = _active_stubber()
    if stubber is None:
        return None
    try:
        from aiobotocore.awsrequest import AioAWSResponse
        from botocore.compat import HTTPHeaders

        request.body = await _body_bytes(request.body)
        answer = stubber(event_name, request, **kwargs)
        if answer is None:
            return None  # not an AWS URL moto serves (a custom endpoint): send it
        headers = HTTPHeaders()
        for name, value in answer.headers.items():
            headers.add_header(str(name), str(value))
        return AioAWSResponse(
            answer.url, answer.status_code, headers, _Response(answer.raw, answer.url)
        )
    except FsError:
        raise
    except Exception as e:
        # moto's own errors arrive as HTTP answers above; anything raised here means this
        # moto or aiobotocore no longer fits the bridge. Retrying cannot help.
        raise FsError(
            ErrorCode.FS_UNSUPPORTED,
            reason="s3_moto_bridge",
            details={"error": f"{type(e).__name__}: {e}"},
        ) from e


def attach(session: Any) -> None:
    """Give an aiobotocore session the in-process moto hook (idempotent)."""
    models = sys.modules.get("moto.core.models")
    stubber = getattr(models, "botocore_stubber", None)
    if stubber is not None:
        # Sessions made after moto was imported carry its handler among the built-in ones;
        # it would answer first, in botocore's shape.
        session.unregister("before-send", stubber)
    session.register("before-send", _before_send, unique_id=_HOOK_ID)


def attach_to_filesystem(fs: Any) -> None:
    """Attach the hook to the session an ``s3fs.S3FileSystem`` will make its client from.

    s3fs makes its session lazily; the one made here is the one s3fs would make (same
    arguments), and it is marked as given so that s3fs keeps it when it rebuilds its
    client.
    """
    if getattr(fs, "session", None) is None:
        from aiobotocore.session import AioSession

        fs.session = AioSession(**getattr(fs, "kwargs", {}))
        fs._session_is_owned = False
    attach(fs.session)

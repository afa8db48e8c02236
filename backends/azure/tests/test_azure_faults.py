"""Fault injection against Azure, through a fault-injecting proxy in front of Azurite
(``fsseam_azure.testing.fault_proxy``, built on ``fsseam.testing.faults``).

The proxy forwards every request and can be told to make the next N matching requests
(method, path, optional query substring) fail:

- ``500`` / ``503``: an Azure XML error answer; the request never reaches Azurite;
- ``reset``: Azurite gets the headers and the first ``cut_after`` body bytes, then both
  connections are reset: no answer, a broken body upstream;
- ``lost``: the request is forwarded whole (the write lands), then the client's connection
  is reset instead of answering.

Counts are taken at the proxy. The SDK's retry policy (``ExponentialRetry``: 3 retries
after 5xx, 408 and connection errors, 15 s and more apart) keeps its decisions and counts;
only its sleeps are shortened here. Below it, aiohttp resends a PUT, GET, HEAD or DELETE
once by itself when a kept-alive connection breaks before the answer. Every failed call
leaves the old bytes, every call that succeeded the new ones.

The faults every store meets alike (a 5xx or a lost answer on an upload, faults on a read,
a change whose Nth request fails) are the shared suites' (``fsseam.testing.stores``), run
from ``test_azure_change_faults.py``; these are the ones this store's client shapes itself.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from azure.storage.blob import BlobServiceClient
from fsseam_azure import WRITE_ID_KEY
from fsseam_azure.testing import AzureFaultProxy, fault_proxy, shorten_retries

from fsseam import Conflict, ErrorCode, FsError, IfMatch, Workspace
from fsseam.testing.azurite import ACCOUNT_NAME, connection_string

NAME = "doc.txt"
PATH = "/doc.txt"
OLD = "old line 1\nold line 2\n"
NEW = "new line 1\nnew line 2\nnew line 3\n"
ATTEMPTS = 4  # the SDK's first try and its three retries


@pytest.fixture(scope="module")
def proxy(azurite: Any) -> Iterator[AzureFaultProxy]:
    with fault_proxy(azurite) as p:
        yield p


@pytest.fixture(autouse=True)
def fast_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    shorten_retries(monkeypatch)


@dataclass
class Env:
    proxy: AzureFaultProxy
    admin: Any
    """A sync ContainerClient straight to Azurite: seeds and inspects, never counted."""
    container: str

    @property
    def path(self) -> str:
        return f"/{ACCOUNT_NAME}/{self.container}/{NAME}"

    def workspace(self, **options: Any) -> Workspace:
        return Workspace(f"az://{self.container}", storage_options=self.proxy.storage_options(
            **options))

    def seed(self, data: bytes) -> str:
        etag: str = self.admin.get_blob_client(NAME).upload_blob(data, overwrite=True)["etag"]
        return etag

    def state(self) -> tuple[bytes, str] | None:
        """(bytes, ETag) of the blob now, straight from Azurite."""
        blob = self.admin.get_blob_client(NAME)
        if not blob.exists():
            return None
        got = blob.download_blob()
        return got.readall(), str(got.properties.etag)

    def inject(self, method: str, kind: str, times: int, **kw: Any) -> None:
        self.proxy.inject(method, self.path, kind, times, **kw)

    def puts(self, *, forwarded: bool = False) -> int:
        return self.proxy.seen("PUT", self.path, forwarded=forwarded)

    def gets(self) -> int:
        return self.proxy.seen("GET", self.path)

    def heads(self) -> int:
        return self.proxy.seen("HEAD", self.path)


@pytest.fixture
def env(proxy: AzureFaultProxy, azurite: Any, container: str) -> Iterator[Env]:
    proxy.clear()
    admin_url = f"{azurite.server_url}/{ACCOUNT_NAME}"
    with BlobServiceClient.from_connection_string(connection_string(admin_url)) as svc:
        yield Env(proxy, svc.get_container_client(container), container)
    proxy.clear()


def _ledger(ws: Workspace) -> dict[str, Any]:
    assert ws.policy is not None
    return ws.policy.ledger.model_dump()


def _code(res: Any) -> ErrorCode:
    assert not res.ok, res.text
    assert res.error is not None
    code: ErrorCode = res.error.code
    assert res.text.startswith(f"Error [{code.value}]: "), res.text
    return code


def _observe(env: Env, ws: Workspace) -> Any:
    ctx = ws.context("a")
    assert ctx.tools.execute("read", {"file_path": PATH}).ok
    env.proxy.clear()
    return ctx


# -- a connection reset mid-upload -----------------------------------------------------------


def test_put_reset_mid_body_transient_succeeds_once(env: Env) -> None:
    old = env.seed(OLD.encode())
    ws = env.workspace()
    ctx = _observe(env, ws)
    env.inject("PUT", "reset", 1, cut_after=20_000)
    content = "line\n" * 50_000  # 250 kB

    res = ctx.tools.execute("write", {"file_path": PATH, "content": content})

    assert res.ok, res.text
    assert env.puts() == 2
    assert env.proxy.cut_bodies == [20_000]
    assert env.puts(forwarded=True) == 1
    state = env.state()
    assert state is not None and state[0] == content.encode() and state[1] != old


def test_put_reset_mid_body_persistent_is_fs_backend(env: Env) -> None:
    old_bytes = ("keep\n" * 50_000 + "target\n").encode()
    old = env.seed(old_bytes)
    ws = env.workspace()
    ctx = _observe(env, ws)
    before = _ledger(ws)
    env.inject("PUT", "reset", 1000, cut_after=20_000)

    res = ctx.tools.execute(
        "edit", {"file_path": PATH, "old_string": "target", "new_string": "changed"}
    )

    assert _code(res) is ErrorCode.FS_BACKEND
    assert "nothing was changed" in res.text
    # Put Blob goes from the calling thread (fsseam_azure.transport): one send per try of
    # the SDK's retry policy, none resent at once (through aiohttp, which resends a PUT on
    # a broken kept-alive connection, there were two per try).
    assert env.puts() == ATTEMPTS
    assert env.proxy.cut_bodies == [20_000] * ATTEMPTS
    # Azurite got four truncated bodies and stored none of them.
    assert env.state() == (old_bytes, old)
    assert _ledger(ws) == before


# -- the write landed, its answer was lost ---------------------------------------------------


def test_lost_answer_of_the_block_list_commit_is_recognised_as_our_write(env: Env) -> None:
    old = env.seed(OLD.encode())
    backend = env.workspace(block_threshold=1024, block_size=4096).backend
    version = backend.read(NAME).version
    assert version.value == old
    data = b"0123456789abcdef" * 1000  # 16,000 bytes: four blocks
    env.proxy.clear()
    env.inject("PUT", "lost", 1, query="comp=blocklist")

    new = backend.write(NAME, data, IfMatch(version))

    assert env.proxy.seen("PUT", env.path, "comp=block&") == 4
    assert env.proxy.seen("PUT", env.path, "comp=blocklist", forwarded=True) == 2
    assert env.state() == (data, new.value)


def test_block_stage_5xx_persistent_leaves_the_old_bytes(env: Env) -> None:
    old = env.seed(OLD.encode())
    backend = env.workspace(block_threshold=1024, block_size=4096).backend
    version = backend.read(NAME).version
    env.proxy.clear()
    env.inject("PUT", "503", 1000, query="comp=block&")

    with pytest.raises(FsError) as info:
        backend.write(NAME, b"x" * 16_000, IfMatch(version))

    assert info.value.code is ErrorCode.FS_BACKEND
    assert env.proxy.seen("PUT", env.path, "comp=blocklist") == 0  # never committed
    assert env.state() == (OLD.encode(), old)


def test_conflict_with_other_content_is_still_a_conflict(env: Env) -> None:
    """The write id in the blob's metadata is not ours: the 412 stands, nothing written."""
    env.seed(OLD.encode())
    backend = env.workspace().backend
    version = backend.read(NAME).version
    env.seed(b"theirs\n")

    with pytest.raises(Conflict) as info:
        backend.write(NAME, NEW.encode(), IfMatch(version))

    assert info.value.code is ErrorCode.FS_STALE
    state = env.state()
    assert state is not None and state[0] == b"theirs\n"
    props = env.admin.get_blob_client(NAME).get_blob_properties()
    assert WRITE_ID_KEY not in (props.metadata or {})

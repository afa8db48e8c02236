"""A multi-file change on GCS whose Nth storage call fails (issue 16): every file is left
byte-for-byte as it was, the parts already written being rolled back with their own
compare-and-swap (``ifGenerationMatch`` on the generation just written); and a rollback
that loses to another writer says what each file holds.

The failures are real GCS error answers from the fault proxy in front of fake-gcs-server
(``fsseam_gcs.testing.fault_proxy``), aimed at one object's upload by the generation its
compare-and-swap names (uploads carry the object's name in their body, not their URL), or
at its DELETE by its name. gcsfs's retry sleeps are shortened; its decisions are not."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import gcsfs.retry
import pytest
from fsseam_gcs.client import GcsClient
from fsseam_gcs.testing import FaultProxy, GcsEndpoint

from fsseam import ErrorCode, Workspace
from fsseam.testing.faults import shorten_sleeps

PREFIX = "proj"
BEFORE = {"a.txt": b"a\r\n", "b.txt": b"b\n", "c.txt": b"\xef\xbb\xbfc\n", "d.txt": b"d\n"}
AFTER = {"n.txt": b"new\n", "a.txt": b"A\r\n", "b.txt": b"B\n", "c.txt": b"\xef\xbb\xbfC\n"}
PATCH = (
    "*** Begin Patch\n*** Add File: n.txt\n+new\n"
    "*** Update File: a.txt\n@@\n-a\n+A\n*** Update File: b.txt\n@@\n-b\n+B\n"
    "*** Update File: c.txt\n@@\n-c\n+C\n*** Delete File: d.txt\n*** End Patch"
)
UPLOAD = "/upload/storage/v1/b/"


@pytest.fixture(scope="module")
def proxy(gcs_server: GcsEndpoint) -> Iterator[FaultProxy]:
    with gcs_server.fault_proxy() as p:
        yield p


@pytest.fixture(autouse=True)
def fast_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    shorten_sleeps(monkeypatch, gcsfs.retry)


class Env:
    def __init__(self, proxy: FaultProxy, admin: Any, bucket: str) -> None:
        self.proxy = proxy
        self.bucket = bucket
        self.client = GcsClient(admin, bucket)
        self.generations = {
            name: str(self.client.upload_multipart(f"{PREFIX}/{name}", data, None)["generation"])
            for name, data in BEFORE.items()
        }
        self.ws = Workspace(f"gs://{bucket}/{PREFIX}", storage_options={
            "endpoint_url": proxy.url, "token": "anon", "project": "test"})

    def stored(self) -> dict[str, bytes]:
        out = {}
        for name in ("n.txt", *BEFORE):
            with contextlib.suppress(FileNotFoundError):
                out[name] = self.client.get_media(f"{PREFIX}/{name}").data
        return out

    def observed(self) -> Any:
        ctx = self.ws.context("a")
        for name in BEFORE:
            assert ctx.tools.execute("read", {"file_path": name}).ok
        return ctx

    def fail(self, name: str) -> None:
        """Every upload or delete of ``name`` by the change fails with a 500."""
        if name == "n.txt":  # the only create-only upload of the commit
            self.proxy.inject("POST", UPLOAD + self.bucket, "500", 1000,
                              query="ifGenerationMatch=0")
        elif name == "d.txt":
            self.proxy.inject("DELETE", f"{PREFIX}%2F{name}", "500", 1000)
        else:
            self.proxy.inject("POST", UPLOAD + self.bucket, "500", 1000,
                              query=f"ifGenerationMatch={self.generations[name]}")


@pytest.fixture
def env(proxy: FaultProxy, gcs_admin: Any, gcs_bucket: str) -> Iterator[Env]:
    proxy.clear()
    yield Env(proxy, gcs_admin, gcs_bucket)
    proxy.clear()


@pytest.mark.parametrize("name", ["n.txt", "a.txt", "c.txt", "d.txt"])
def test_a_failure_on_the_nth_write_leaves_every_file_as_it_was(env: Env, name: str) -> None:
    ctx = env.observed()
    env.fail(name)
    res = ctx.tools.execute("apply_patch", {"patch": PATCH})
    assert res.error is not None and res.error.code is ErrorCode.FS_BACKEND, res.text
    assert res.text.endswith("Nothing was applied: every file is as it was."), res.text
    env.proxy.clear()
    assert env.stored() == BEFORE
    # GCS gives the restored files new generations: the agent reads them again first
    ctx = env.observed()
    res = ctx.tools.execute("apply_patch", {"patch": PATCH})
    assert res.ok, res.text
    assert env.stored() == AFTER


def test_a_rollback_that_loses_to_another_writer_says_so(env: Env) -> None:
    ctx = env.observed()
    inner = env.ws.backend

    class Meanwhile:
        """Another writer changes a.txt (just written by the change) before c.txt's
        upload is sent, which then fails at the store."""

        def __getattr__(self, attr: str) -> Any:
            return getattr(inner, attr)

        def write(self, key: str, data: bytes, pre: Any) -> Any:
            if key == "c.txt":
                env.client.upload_multipart(f"{PREFIX}/a.txt", b"theirs\n", None)
            return inner.write(key, data, pre)

    ctx.fs.backend = Meanwhile()
    env.fail("c.txt")
    res = ctx.tools.execute("apply_patch", {"patch": PATCH})
    env.proxy.clear()
    assert res.error is not None and res.error.code is ErrorCode.FS_BACKEND, res.text
    assert (
        "/n.txt is as it was; /a.txt was changed by someone else after this change wrote it, "
        "and was left as they made it; /b.txt is as it was; /c.txt was not written; /d.txt "
        "was not written. Read these files before going on."
    ) in res.text, res.text
    assert env.stored() == {**BEFORE, "a.txt": b"theirs\n"}

"""Suites every object store runs, written once (like ``fsspec.tests.abstract``).

A store's test suite subclasses a suite and gives it a ``store`` fixture: a fresh, empty
bucket (or container) of that store behind a point where requests are counted, as a
:class:`StoreRig`. What differs between stores is said by the rig's facts (the method of an
upload, the requests of a move), never by a copy of the test. A gap of one store's emulator
is a strict xfail in that store's subclass, so it is seen when the emulator closes it.

- :class:`LostUpdateSuite`: threads and processes racing read-increment-IfMatch on one
  object; :class:`AgentRaceSuite`: agents in processes racing edits of one file through
  the tools;
- :class:`FinderSuite`: glob, grep, delete and move, in requests counted at the store;
- :class:`MissingBucketSuite`: a workspace on a bucket that does not exist, through the
  tools and the backend;
- :class:`ReadFaultSuite`: reads whose GETs fail, persistently or not (a
  ``faulty_store`` fixture that is a :class:`ReadFaultRig`);
- :class:`ChangeFaultSuite`: a multi-file change whose Nth request fails at the store (a
  ``faulty_store`` fixture: a :class:`FaultRig`, whose requests pass a fault plan).
"""

from __future__ import annotations

import multiprocessing
import re
import threading
import uuid
from collections.abc import Callable, Mapping
from typing import Any, Protocol

import pytest

from ..backends.registry import open_backend
from ..versions import CreateOnly, IfMatch, Version
from .conformance import increment, increment_worker

__all__ = [
    "AgentRaceSuite",
    "ChangeFaultSuite",
    "FaultRig",
    "FinderSuite",
    "LostUpdateSuite",
    "MissingBucketSuite",
    "ReadFaultRig",
    "ReadFaultSuite",
    "StoreRig",
    "agent_edits",
]


class StoreRig(Protocol):
    """One fresh bucket of a store, as the shared suites use it."""

    scheme: str
    """The URL scheme: ``s3``, ``gs``, ``az``."""
    bucket: str
    move_requests: list[str]
    """The HTTP methods a move of an observed object costs against this server (a store
    whose emulator ignores a copy's conditions reads and uploads instead of copying)."""

    def storage_options(self, **extra: Any) -> dict[str, Any]:
        """storage_options that reach the store through the counting point."""
        ...

    def take(self) -> list[str]:
        """The HTTP methods of the requests to this bucket since the last take."""
        ...

    def fill(self, objects: Mapping[str, bytes]) -> None:
        """Store ``objects`` (name in the bucket -> bytes) behind the backend's back; the
        requests this takes are not counted."""
        ...


def _url(rig: StoreRig | FaultRig, prefix: str) -> str:
    return f"{rig.scheme}://{rig.bucket}/{prefix}" if prefix else f"{rig.scheme}://{rig.bucket}"


class LostUpdateSuite:
    """Mixin: subclass with a ``store`` fixture. Every acknowledged update must be in the
    object, and the race must have been real (some compare-and-swaps lost)."""

    threads: int = 4
    thread_increments: int = 15
    processes: int = 2
    process_increments: int = 30
    backend_per_thread: bool = False
    """Each thread its own backend (its own filesystem and connections), or one shared."""

    def test_threads_and_processes_lose_no_increment(self, store: StoreRig) -> None:
        spec = (_url(store, "race"), store.storage_options())
        backend = open_backend(*spec)
        backend.write("counter", b"0", CreateOnly())
        results: list[tuple[int, int]] = []
        errors: list[BaseException] = []

        def run() -> None:
            mine = open_backend(*spec) if self.backend_per_thread else backend
            try:
                results.append(increment(mine, "counter", self.thread_increments))
            except BaseException as e:  # reported by the assertion below
                errors.append(e)

        ctx = multiprocessing.get_context("spawn")
        with ctx.Pool(self.processes) as pool:
            # Children build their own backend (own filesystem, own connections).
            pending = pool.starmap_async(
                increment_worker, [(spec, "counter", self.process_increments)] * self.processes
            )
            threads = [threading.Thread(target=run) for _ in range(self.threads)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            results.extend(pending.get(timeout=240))
        assert not errors, errors
        total = self.threads * self.thread_increments + self.processes * self.process_increments
        assert sum(r[0] for r in results) == total
        assert backend.read("counter").data == str(total).encode()
        assert sum(r[1] for r in results) > 0, "no CAS was ever lost: the race was not real"



class AgentRaceSuite:
    """Mixin: subclass with a ``store`` fixture. Agents in processes of their own, each
    appending tokens to its own line of one shared file through the tools: every
    acknowledged edit must be in the file."""

    agents: int = 4
    agent_edits: int = 10

    def test_agents_in_processes_lose_no_edit(self, store: StoreRig) -> None:
        agents, edits = self.agents, self.agent_edits
        url, options = _url(store, "agents"), store.storage_options()
        backend = open_backend(url, dict(options))
        backend.write(
            "shared.txt", "".join(f"slot-{a}:\n" for a in range(agents)).encode(), CreateOnly()
        )
        ctx = multiprocessing.get_context("spawn")
        with ctx.Manager() as manager, ctx.Pool(agents) as pool:
            start = manager.Barrier(agents)
            results = pool.starmap(
                agent_edits, [(url, dict(options), a, edits, start) for a in range(agents)]
            )
        final = backend.read("shared.txt").data.decode()
        acked = {token for tokens, _ in results for token in tokens}
        present = set(re.findall(r"t\d+\.\d+", final))
        assert len(acked) == agents * edits
        assert present == acked  # none lost, none invented
        for a in range(agents):  # each agent's tokens on its own line, in order
            assert final.splitlines()[a] == f"slot-{a}:" + "".join(
                f" t{a}.{i}" for i in range(edits)
            )
        assert sum(stale for _, stale in results) > 0  # the agents did collide


def agent_edits(
    url: str, storage_options: dict[str, Any], agent: int, times: int, start: Any = None
) -> tuple[list[str], int]:
    """One agent in a process of its own: ``times`` times read the shared file, then edit
    its own line (``slot-N:``) to append a token, re-reading after every FS_STALE. Returns
    (the tokens whose edit succeeded, the stale refusals met). Only the storage's
    compare-and-swap stands between agents. ``start``: a barrier (a multiprocessing
    manager's) the agents wait at once their workspace is made, so that they do overlap."""
    from ..workspace import Workspace

    ctx = Workspace(url, storage_options=storage_options).context(f"agent-{agent}")
    if start is not None:
        start.wait(timeout=120)
    mine = f"slot-{agent}:"
    done: list[str] = []
    stale = 0
    while len(done) < times:
        res = ctx.tools.execute("read", {"file_path": "/shared.txt"})
        if not res.ok:
            raise RuntimeError(res.text)
        line = next(x for x in res.value.lines if x.startswith(mine))
        token = f" t{agent}.{len(done)}"
        res = ctx.tools.execute(
            "edit", {"file_path": "/shared.txt", "old_string": line, "new_string": line + token}
        )
        if res.ok:
            done.append(token.strip())
        elif res.error is not None and res.error.code == "FS_STALE":
            stale += 1
        else:
            raise RuntimeError(res.text)
    return done, stale


def _tree(n: int, prefix: str = "p/tree") -> dict[str, bytes]:
    return {
        f"{prefix}/d{i % 7}/f{i:05d}.txt": f"line {i}\n{'needle' if i % 10 == 0 else 'hay'}\n"
        .encode()
        for i in range(n)
    }


class FinderSuite:
    """Mixin: subclass with a ``store`` fixture. The finders' request budget: a glob is one
    flat listing per page, a grep one listing and one GET per object, a delete of an
    observed object one request."""

    glob_objects: int = 250
    list_page_size: int | None = 100
    """The page the glob test lists by (None: the store's own, whose size a subclass gives
    as ``glob_objects`` / pages). Small by default: the paging is what is measured."""
    grep_objects: int = 60

    def _workspace(self, store: StoreRig, **options: Any) -> Any:
        from ..workspace import Workspace

        return Workspace(_url(store, "p"), storage_options=store.storage_options(**options))

    def test_glob_is_one_flat_listing_per_page(self, store: StoreRig) -> None:
        store.fill(_tree(self.glob_objects))
        options = {} if self.list_page_size is None else {"list_page_size": self.list_page_size}
        ctx = self._workspace(store, **options).context("a")
        store.take()
        res = ctx.tools.execute("glob", {"pattern": "tree/**/*.txt"})
        assert res.ok, res.text
        assert f"(Showing 100 of {self.glob_objects} matching files" in res.text
        page = self.list_page_size or 1000
        assert store.take() == ["GET"] * -(-self.glob_objects // page)
        res = ctx.tools.execute("glob", {"pattern": "tree/d3/*.txt"})
        assert res.text.splitlines()[0] == "/tree/d3/f00003.txt"
        assert store.take() == ["GET"]  # the literal base narrows the listing

    def test_grep_is_one_listing_and_one_get_per_object(self, store: StoreRig) -> None:
        n = self.grep_objects
        store.fill(_tree(n))
        ctx = self._workspace(store).context("a")
        store.take()
        res = ctx.tools.execute("grep", {"pattern": "needle", "output_mode": "count"})
        assert res.ok, res.text
        assert res.text.endswith(f"Total: {n // 10} matching lines in {n // 10} files.")
        assert store.take() == ["GET"] * (1 + n)

    def test_delete_of_an_observed_object_is_one_request(self, store: StoreRig) -> None:
        ctx = self._workspace(store).context("a")
        assert ctx.tools.execute("write", {"file_path": "/d.txt", "content": "x\n"}).ok
        store.take()
        assert ctx.tools.execute("delete", {"file_path": "/d.txt"}).ok
        assert store.take() == ["DELETE"]

    def test_move_of_an_observed_object(self, store: StoreRig) -> None:
        ws = self._workspace(store)
        ctx = ws.context("a")
        assert ctx.tools.execute("write", {"file_path": "/m.txt", "content": "y\n"}).ok
        store.take()
        res = ctx.tools.execute("move", {"source_path": "/m.txt", "destination_path": "/n.txt"})
        assert res.ok, res.text
        # Against AWS or Google: one guarded copy, the listing that keeps the new name from
        # being a directory too, and the guarded DELETE. Emulators that ignore a copy's
        # conditions get a GET of the observed version and a create-only upload instead.
        assert store.take() == store.move_requests
        assert ws.backend.read("n.txt").data == b"y\n"


class FaultRig(Protocol):
    """One fresh bucket of a store whose requests pass a fault plan the tests can aim."""

    scheme: str
    bucket: str
    content_versions: bool
    """The store's versions are hashes of the bytes (ETags): a file restored to its bytes
    is at the version an agent observed. Otherwise (GCS generations) it must be read
    again."""

    def storage_options(self, **extra: Any) -> dict[str, Any]:
        """storage_options that reach the store through the fault plan."""
        ...

    def fill(self, objects: Mapping[str, bytes]) -> None:
        """Store ``objects`` (name in the bucket -> bytes) behind the backend's back."""
        ...

    def fail(self, name: str, op: str) -> None:
        """Every request of a change's ``op`` (``create``, ``update`` or ``delete``) of the
        object ``name`` (in the bucket) fails with a 500 until :meth:`clear`."""
        ...

    def clear(self) -> None:
        """No more faults."""
        ...

    def stored(self, prefix: str) -> dict[str, bytes]:
        """Every object under ``prefix/`` now (name below the prefix -> bytes), faults off."""
        ...


_BEFORE = {"a.txt": b"a\r\n", "b.txt": b"b\n", "c.txt": b"\xef\xbb\xbfc\n", "d.txt": b"d\n"}
_AFTER = {"n.txt": b"new\n", "a.txt": b"A\r\n", "b.txt": b"B\n", "c.txt": b"\xef\xbb\xbfC\n"}
_PATCH = (
    "*** Begin Patch\n*** Add File: n.txt\n+new\n"
    "*** Update File: a.txt\n@@\n-a\n+A\n*** Update File: b.txt\n@@\n-b\n+B\n"
    "*** Update File: c.txt\n@@\n-c\n+C\n*** Delete File: d.txt\n*** End Patch"
)
# The patch commits n.txt (created), a, b, c (updated), then d (deleted).
_OPS = {"n.txt": "create", "a.txt": "update", "c.txt": "update", "d.txt": "delete"}


class ChangeFaultSuite:
    """Mixin: subclass with a ``faulty_store`` fixture (a :class:`FaultRig`). A multi-file
    change whose Nth storage call fails leaves every file byte for byte as it was, the parts
    already written rolled back with their own compare-and-swap; a rollback that loses to
    another writer says what each file holds."""

    prefix = "proj"

    def _observed(self, ws: Any) -> Any:
        ctx = ws.context("a")
        for name in _BEFORE:
            assert ctx.tools.execute("read", {"file_path": name}).ok
        return ctx

    def _workspace(self, rig: FaultRig) -> Any:
        from ..workspace import Workspace

        rig.fill({f"{self.prefix}/{name}": data for name, data in _BEFORE.items()})
        return Workspace(_url(rig, self.prefix), storage_options=rig.storage_options())

    @pytest.mark.parametrize("name", list(_OPS))
    def test_a_failure_on_the_nth_write_leaves_every_file_as_it_was(
        self, faulty_store: FaultRig, name: str
    ) -> None:
        from ..errors import ErrorCode

        ws = self._workspace(faulty_store)
        ctx = self._observed(ws)
        faulty_store.fail(f"{self.prefix}/{name}", _OPS[name])
        res = ctx.tools.execute("apply_patch", {"patch": _PATCH})
        assert res.error is not None and res.error.code is ErrorCode.FS_BACKEND, res.text
        assert res.text.endswith("Nothing was applied: every file is as it was."), res.text
        faulty_store.clear()
        assert faulty_store.stored(self.prefix) == _BEFORE
        if not faulty_store.content_versions:
            ctx = self._observed(ws)  # restored files have new versions: read them again
        res = ctx.tools.execute("apply_patch", {"patch": _PATCH})
        assert res.ok, res.text
        assert faulty_store.stored(self.prefix) == _AFTER

    def test_a_rollback_that_loses_to_another_writer_says_so(
        self, faulty_store: FaultRig
    ) -> None:
        from ..errors import ErrorCode

        ws = self._workspace(faulty_store)
        ctx = self._observed(ws)
        inner = ws.backend
        theirs = {f"{self.prefix}/a.txt": b"theirs\n"}

        class Meanwhile:
            """Another writer changes a.txt (just written by the change) before c.txt's
            write is sent, which then fails at the store."""

            def __getattr__(self, attr: str) -> Any:
                return getattr(inner, attr)

            def write(self, key: str, data: bytes, pre: Any) -> Any:
                if key == "c.txt":
                    faulty_store.fill(theirs)
                return inner.write(key, data, pre)

        ctx.fs.backend = Meanwhile()
        faulty_store.fail(f"{self.prefix}/c.txt", "update")
        res = ctx.tools.execute("apply_patch", {"patch": _PATCH})
        faulty_store.clear()
        assert res.error is not None and res.error.code is ErrorCode.FS_BACKEND, res.text
        assert (
            "/n.txt is as it was; /a.txt was changed by someone else after this change wrote "
            "it, and was left as they made it; /b.txt is as it was; /c.txt was not written; "
            "/d.txt was not written. Read these files before going on."
        ) in res.text, res.text
        assert faulty_store.stored(self.prefix) == {**_BEFORE, "a.txt": b"theirs\n"}


_TOOL_CALLS = [
    ("read", {"file_path": "/a.txt"}),
    ("write", {"file_path": "/a.txt", "content": "x"}),
    ("edit", {"file_path": "/a.txt", "old_string": "a", "new_string": "b"}),
    ("str_replace_editor", {"command": "create", "path": "/a.txt", "file_text": "x"}),
    ("ls", {"path": "/"}),
]
_BACKEND_CALLS: dict[str, Callable[[Any], Any]] = {
    "read": lambda b: b.read("f"),
    "stat": lambda b: b.stat("f"),
    "stat-root": lambda b: b.stat(""),
    "list": lambda b: b.list(""),
    "walk": lambda b: list(b.walk("")),
    "write": lambda b: b.write("f", b"x", CreateOnly()),
    "write-if-match": lambda b: b.write(
        "f", b"x", IfMatch(Version(kind=b.capabilities.version_kind, value="1"))
    ),
    "delete": lambda b: b.delete("f"),
    "open_read": lambda b: b.open_read("f"),
}


class MissingBucketSuite:
    """Mixin: subclass with a ``store`` fixture (only its server is used: the bucket named
    here does not exist). A missing bucket is never a missing file: every call says which
    bucket is missing, with the reason callers branch on."""

    @pytest.mark.parametrize(("tool", "args"), _TOOL_CALLS,
                             ids=["read", "write", "edit", "create", "ls"])
    def test_missing_bucket_is_reported_as_such_by_the_tools(
        self, store: StoreRig, tool: str, args: dict[str, Any]
    ) -> None:
        from ..errors import ErrorCode
        from ..workspace import Workspace

        bucket = f"fsseam-missing-{uuid.uuid4().hex[:8]}"
        url = f"{store.scheme}://{bucket}/p"
        ctx = Workspace(url, storage_options=store.storage_options()).context("a")
        res = ctx.tools.execute(tool, args)
        assert res.error is not None and res.error.code is ErrorCode.FS_NOT_FOUND, res.text
        assert f"the bucket {bucket} does not exist" in res.text
        assert "create the file" not in res.text

    @pytest.mark.parametrize("call", list(_BACKEND_CALLS))
    def test_missing_bucket_is_not_found_naming_the_bucket(
        self, store: StoreRig, call: str
    ) -> None:
        from ..errors import ErrorCode, FsError

        bucket = f"fsseam-missing-{uuid.uuid4().hex[:8]}"
        backend = open_backend(f"{store.scheme}://{bucket}/p", store.storage_options())
        with pytest.raises(FsError) as info:
            _BACKEND_CALLS[call](backend)
        assert type(info.value) is FsError  # never a Conflict: IfMatch met no object
        assert info.value.code is ErrorCode.FS_NOT_FOUND
        assert info.value.reason == "bucket_missing"
        assert f"the bucket {bucket} does not exist" in info.value.message


class ReadFaultRig(FaultRig, Protocol):
    """A :class:`FaultRig` that also aims faults at reads and counts requests per object."""

    read_attempts: int
    """GETs one read makes against a persistent 500 (the store library's retries)."""
    reset_read_attempts: tuple[int, int]
    """Bounds of the GETs against persistent connection resets (libraries may resend an
    idempotent GET once per try, depending on timing)."""

    def fail_reads(self, name: str, kind: str, times: int) -> None:
        """The next ``times`` GETs of ``name`` meet ``kind`` (``500``, ``reset``)."""
        ...

    def seen(self, name: str, method: str) -> int:
        """Requests of ``method`` to ``name`` since the last :meth:`clear` (``PUT``: every
        upload of it, whatever the store's upload method)."""
        ...

    def state(self, name: str) -> tuple[bytes, str] | None:
        """(bytes, version value) of ``name`` now, faults off; None when it is missing."""
        ...


_OLD = "old line 1\nold line 2\n"
_NEW = "new line 1\nnew line 2\nnew line 3\n"
_NOTHING_OBSERVED = {"format": 1, "owners": {}, "changes": {}}


def _ledger(ws: Any) -> dict[str, Any]:
    assert ws.policy is not None
    dumped: dict[str, Any] = ws.policy.ledger.model_dump()
    return dumped


def _code(res: Any) -> Any:
    assert not res.ok, res.text
    assert res.error is not None
    assert res.text.startswith(f"Error [{res.error.code.value}]: "), res.text
    return res.error.code


class ReadFaultSuite:
    """Mixin: subclass with a ``faulty_store`` fixture (a :class:`ReadFaultRig`). A read
    whose GETs fail records nothing, a transient failure is retried to the version of the
    bytes read, and an edit whose read fails changes nothing."""

    name = "doc.txt"

    def _seeded(self, rig: ReadFaultRig) -> tuple[Any, str]:
        from ..workspace import Workspace

        rig.fill({self.name: _OLD.encode()})
        state = rig.state(self.name)
        assert state is not None
        rig.clear()
        return Workspace(_url(rig, ""), storage_options=rig.storage_options()), state[1]

    def test_get_500_persistent_is_fs_backend_and_records_nothing(
        self, faulty_store: ReadFaultRig
    ) -> None:
        from ..errors import ErrorCode

        ws, _ = self._seeded(faulty_store)
        ctx = ws.context("a")
        faulty_store.fail_reads(self.name, "500", 1000)
        res = ctx.tools.execute("read", {"file_path": f"/{self.name}"})
        assert _code(res) is ErrorCode.FS_BACKEND
        assert faulty_store.seen(self.name, "GET") == faulty_store.read_attempts
        assert _ledger(ws) == _NOTHING_OBSERVED
        # Nothing observed: a write is create-only and refused, the file untouched.
        faulty_store.clear()
        res = ctx.tools.execute("write", {"file_path": f"/{self.name}", "content": _NEW})
        assert _code(res) is ErrorCode.FS_NOT_OBSERVED
        state = faulty_store.state(self.name)
        assert state is not None and state[0] == _OLD.encode()

    def test_get_500_transient_read_succeeds_with_the_version_of_its_bytes(
        self, faulty_store: ReadFaultRig
    ) -> None:
        ws, version = self._seeded(faulty_store)
        ctx = ws.context("a")
        faulty_store.fail_reads(self.name, "500", 2)
        res = ctx.tools.execute("read", {"file_path": f"/{self.name}"})
        assert res.ok, res.text
        assert faulty_store.seen(self.name, "GET") == 3
        assert _ledger(ws)["owners"]["a"][self.name]["value"] == version

    def test_get_reset_persistent_is_fs_backend(self, faulty_store: ReadFaultRig) -> None:
        from ..errors import ErrorCode

        ws, _ = self._seeded(faulty_store)
        ctx = ws.context("a")
        faulty_store.fail_reads(self.name, "reset", 1000)
        res = ctx.tools.execute("read", {"file_path": f"/{self.name}"})
        assert _code(res) is ErrorCode.FS_BACKEND
        low, high = faulty_store.reset_read_attempts
        assert low <= faulty_store.seen(self.name, "GET") <= high
        assert _ledger(ws) == _NOTHING_OBSERVED

    def test_edit_get_500_changes_nothing(self, faulty_store: ReadFaultRig) -> None:
        from ..errors import ErrorCode

        ws, version = self._seeded(faulty_store)
        ctx = ws.context("a")
        assert ctx.tools.execute("read", {"file_path": f"/{self.name}"}).ok
        before = _ledger(ws)
        faulty_store.clear()
        faulty_store.fail_reads(self.name, "500", 1000)
        res = ctx.tools.execute(
            "edit", {"file_path": f"/{self.name}", "old_string": "old line 1", "new_string": "X"}
        )
        assert _code(res) is ErrorCode.FS_BACKEND
        assert faulty_store.seen(self.name, "GET") == faulty_store.read_attempts
        assert faulty_store.seen(self.name, "PUT") == 0
        assert faulty_store.state(self.name) == (_OLD.encode(), version)
        assert _ledger(ws) == before

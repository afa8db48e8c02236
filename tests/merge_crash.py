"""A merge killed right after its k-th storage call (tests/test_branches_crash.py): the
counting wrapper, and a process that forks one merge per request.

    python tests/merge_crash.py     # one JSON job a line on stdin, one JSON answer a line

The forking process imports fsseam and the stores' clients once and opens nothing (no
client, no thread, no event loop): each job runs in a child forked from it, a process of
its own with clients of its own, which the wrapper kills with SIGKILL right after the
job's k-th storage call returns. The answer is the child's exit status and, when it was
not killed, what its merge made: the storage calls in order and the outcome.
"""

from __future__ import annotations

import builtins
import json
import os
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from fsseam.backends.base import ANY_VERSION, Backend, Blob, Stat, Wrapper, WriteMeta
from fsseam.errors import FsError
from fsseam.versions import Entry, Precondition, Version


class Killed(BaseException):
    """The process "died" (a store no other process reaches: memory): raised past every
    ``except Exception`` and ``except FsError`` of the merge, and by every later call."""


def sigkill() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


class KillAfter(Wrapper):
    """``inner``, counting every storage call made while armed, in order (``calls``: the
    method and its key); right after call ``after`` returns or raises, ``kill`` runs
    (SIGKILL by default; 0: never). A call after a ``kill`` that returned raises
    :class:`Killed`: a dead process makes none."""

    def __init__(self, inner: Backend, after: int = 0,
                 kill: Callable[[], None] = sigkill) -> None:
        super().__init__(inner)
        self.after = after
        self.kill = kill
        self.armed = False
        self.dead = False
        self.calls: builtins.list[tuple[str, str]] = []
        self._lock = threading.Lock()

    def _enter(self) -> None:
        if self.dead:
            raise Killed

    def _done(self, method: str, key: str) -> None:
        if not self.armed:
            return
        with self._lock:
            self.calls.append((method, key))
            if len(self.calls) != self.after:
                return
            self.dead = True
        self.kill()

    def _call(self, method: str, key: str, run: Callable[[], Any]) -> Any:
        self._enter()
        try:
            return run()
        finally:
            self._done(method, key)

    # Every operation forwarded, counted: a merge may make any of them.
    def read(self, key: str) -> Blob:
        return self._call("read", key, lambda: self.inner.read(key))  # type: ignore[no-any-return]

    def read_many(self, entries: Iterable[Entry]) -> Iterator[tuple[Entry, Blob | FsError]]:
        entries = builtins.list(entries)
        got = self._call("read_many", ",".join(e.key for e in entries),
                         lambda: builtins.list(self.inner.read_many(entries)))
        return iter(got)

    def read_many_unhashed(
        self, entries: Iterable[Entry]
    ) -> Iterator[tuple[Entry, Blob | bytes | FsError]]:
        entries = builtins.list(entries)
        got = self._call("read_many", ",".join(e.key for e in entries),
                         lambda: builtins.list(self.inner.read_many_unhashed(entries)))
        return iter(got)

    def stat(self, key: str) -> Stat:
        return self._call("stat", key, lambda: self.inner.stat(key))  # type: ignore[no-any-return]

    def write(self, key: str, data: bytes, precondition: Precondition, *,
              meta: WriteMeta | None = None) -> Version:
        return self._call("write", key,  # type: ignore[no-any-return]
                          lambda: self.inner.write(key, data, precondition, meta=meta))

    def list(self, key: str) -> builtins.list[Entry]:
        return self._call("list", key, lambda: self.inner.list(key))  # type: ignore[no-any-return]

    def list_lazy(self, key: str) -> Iterable[Entry]:
        return self.list(key)

    def delete(self, key: str, precondition: Precondition = ANY_VERSION, *,
               meta: WriteMeta | None = None) -> None:
        self._call("delete", key, lambda: self.inner.delete(key, precondition, meta=meta))

    def copy(self, src: str, dst: str, source: Precondition = ANY_VERSION) -> Version:
        return self._call("copy", dst,  # type: ignore[no-any-return]
                          lambda: self.inner.copy(src, dst, source))

    def walk(self, key: str) -> Iterator[Entry]:
        return iter(self._call("walk", key, lambda: builtins.list(self.inner.walk(key))))

    def walk_versioned(self, key: str) -> Iterator[tuple[Entry, Version | None]] | None:
        got = self._call("walk", key, lambda: self.inner.walk_versioned(key))
        return None if got is None else iter(builtins.list(got))

    def read_version(self, key: str, version: Version) -> Blob:
        return self._call("read_version", key,  # type: ignore[no-any-return]
                          lambda: self.inner.read_version(key, version))

    def writer_of(self, key: str) -> tuple[Version, str | None] | None:
        return self._call("writer_of", key,  # type: ignore[no-any-return]
                          lambda: self.inner.writer_of(key))

    def get_plain(self, key: str) -> Blob | None:
        return self._call("get_plain", key,  # type: ignore[no-any-return]
                          lambda: self.inner.get_plain(key))

    def put_plain(self, key: str, data: bytes, precondition: Precondition) -> Version:
        return self._call("put_plain", key,  # type: ignore[no-any-return]
                          lambda: self.inner.put_plain(key, data, precondition))

    def start_read(self, key: str) -> Callable[[], Blob] | None:
        return None  # a read waited on later would be counted out of order

    def read_tree_unhashed(self, *args: Any, **kwargs: Any) -> None:
        return None  # the plain walk and reads, each counted

    def prune_directories(self, key: str) -> None:
        self._call("prune", key, lambda: self.inner.prune_directories(key))


def merge_job(job: dict[str, Any]) -> dict[str, Any]:
    """Merge ``job["branch"]`` of the store ``job`` names through a :class:`KillAfter`
    of ``job["after"]``, publishing ``job["publishers"]`` files at once (1: each kill
    point is one point of the merge)."""
    from fsseam import Workspace
    from fsseam.backends.registry import open_backend
    from fsseam.branches import merging

    merging.PUBLISHERS = job["publishers"]
    counted = KillAfter(open_backend(job["url"], job["options"]), job["after"])
    ws = Workspace(job["url"], backend=counted, load_entry_points=False)
    counted.armed = True
    out = ws.merge(job["branch"], owner=job["owner"], paths=job.get("paths"))
    return {"calls": counted.calls, "outcome": out.model_dump(mode="json")}


def serve(lines: Iterable[str], answer: Callable[[str], None]) -> None:
    """Each job in a forked child; its answer (exit status, result) one line each."""
    for line in lines:
        if not line.strip():
            continue
        job = json.loads(line)
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: one merge, then out without the parent's cleanups
            os.close(r)
            code = 0
            try:
                text = json.dumps({"result": merge_job(job)})
            except BaseException:
                text, code = json.dumps({"error": traceback.format_exc()}), 1
            with os.fdopen(w, "w") as f:
                f.write(text)
            os._exit(code)
        os.close(w)
        with os.fdopen(r) as f:
            said = f.read()
        _, status = os.waitpid(pid, 0)
        reply: dict[str, Any] = json.loads(said) if said else {}
        reply["status"] = os.waitstatus_to_exitcode(status)
        answer(json.dumps(reply))


def _preload() -> None:
    """Import what the jobs' stores need, once, before any fork, and merge a branch of a
    memory store (what the first merge builds, each child then has: no thread is left)."""
    import contextlib
    import importlib

    from fsseam import CreateOnly, IfMatch, Workspace

    for name in ("fsseam_s3", "fsseam_gcs", "fsseam_azure", "s3fs", "gcsfs", "adlfs"):
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    ws = Workspace("memory://warm", {"global_store": False}, load_entry_points=False)
    ws.backend.write("a.txt", b"1\n", CreateOnly())
    branch = ws.branch("warm").backend
    branch.write("a.txt", b"2\n", IfMatch(branch.read("a.txt").version))
    assert ws.merge("warm", owner="warm").ok
    assert threading.active_count() == 1  # a fork copies only the thread that forks


if __name__ == "__main__":
    os.environ.setdefault("GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT", "false")
    _preload()

    def answer(text: str) -> None:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()

    serve(sys.stdin, answer)

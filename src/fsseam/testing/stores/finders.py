"""The finders' request budget on a store: glob, grep, delete and move."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from ...backends.objectstore import parallel
from ...errors import ErrorCode, FsError
from .rigs import StoreRig, url_of

__all__ = ["FinderSuite"]


def _tree(n: int, prefix: str = "p/tree") -> dict[str, bytes]:
    return {
        f"{prefix}/d{i % 7}/f{i:05d}.txt": f"line {i}\n{'needle' if i % 10 == 0 else 'hay'}\n"
        .encode()
        for i in range(n)
    }


class FinderSuite:
    """Mixin: subclass with a ``store`` fixture. The finders' request budget: a glob is one
    flat listing per page (and one listing of each directory above where it walks, for
    their ignore files), a grep one listing and one GET per object, a delete of an
    observed object one request."""

    glob_objects: int = 250
    list_page_size: int | None = 100
    """The page the glob test lists by (None: the store's own, whose size a subclass gives
    as ``glob_objects`` / pages). Small by default: the paging is what is measured."""
    grep_objects: int = 60
    starts_reads: bool = True
    """Whether the store's client starts a read on its library's event loop (``start_get``):
    a grep's reads then wait there, not on a thread each."""

    def _workspace(self, store: StoreRig, *, content_index: bool | None = None,
                   **options: Any) -> Any:
        from ...workspace import Workspace

        return Workspace(url_of(store, "p"), storage_options=store.storage_options(**options),
                         content_index=content_index)

    def test_glob_is_one_flat_listing_per_page(self, store: StoreRig) -> None:
        store.fill(_tree(self.glob_objects))
        options: dict[str, Any] = (
            {} if self.list_page_size is None else {"list_page_size": self.list_page_size})
        ctx = self._workspace(store, **options).context("a")
        store.take()
        res = ctx.tools.execute("glob", {"pattern": "tree/**/*.txt"})
        assert res.ok, res.text
        assert f"(Showing 100 of {self.glob_objects} matching files" in res.text
        page = self.list_page_size or 1000
        # The pattern's literal base (tree/) is walked; the directory above it is listed
        # once, for the ignore files whose rules reach below it (it has none).
        assert store.take() == ["GET"] * (-(-self.glob_objects // page) + 1)
        res = ctx.tools.execute("glob", {"pattern": "tree/d3/*.txt"})
        assert res.text.splitlines()[0] == "/tree/d3/f00003.txt"
        # The literal base narrows the walk to one listing; the two directories above it
        # are listed once each.
        assert store.take() == ["GET"] * 3
        res = ctx.tools.execute("glob", {"pattern": "tree/d3/*.txt", "include_ignored": True})
        assert store.take() == ["GET"]

    def test_grep_is_one_listing_and_one_get_per_object(self, store: StoreRig) -> None:
        n = self.grep_objects
        store.fill(_tree(n))
        ctx = self._workspace(store, content_index=False).context("a")
        store.take()
        res = ctx.tools.execute("grep", {"pattern": "needle", "output_mode": "count"})
        assert res.ok, res.text
        assert res.text.endswith(f"Total: {n // 10} matching lines in {n // 10} files.")
        assert store.take() == ["GET"] * (1 + n)

    def test_an_indexed_grep_reads_the_listing_the_shards_and_the_matches(
            self, store: StoreRig) -> None:
        n, shards = self.grep_objects, 7  # one content-index shard per directory tree/dN
        store.fill(_tree(n))
        ctx = self._workspace(store).context("a")
        total = f"Total: {n // 10} matching lines in {n // 10} files."
        store.take()
        res = ctx.tools.execute("grep", {"pattern": "needle", "output_mode": "count"})
        assert res.ok and res.text.endswith(total), res.text
        # Cold: every object read, each shard looked for (missing) and written once.
        cold = store.take()
        assert cold.count("GET") == 1 + shards + n and len(cold) == 1 + 2 * shards + n, cold
        res = ctx.tools.execute("grep", {"pattern": "needle", "output_mode": "count"})
        assert res.ok and res.text.endswith(total), res.text
        assert store.take() == ["GET"] * (1 + shards + n // 10)

    def test_a_greps_reads_wait_on_the_stores_loop_not_a_thread_each(
            self, store: StoreRig, monkeypatch: pytest.MonkeyPatch) -> None:
        threaded: list[Any] = []

        class Counting(ThreadPoolExecutor):
            def __init__(self, max_workers: int | None = None,
                         thread_name_prefix: str = "") -> None:
                super().__init__(max_workers, thread_name_prefix)
                # The pool of reads names its threads so (the pool of client calls does not).
                self.reads = thread_name_prefix == "fsseam-read"

            def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
                if fn is parallel.answer_of:  # a read on a thread of the pool
                    threaded.append(args)
                return super().submit(fn, *args, **kwargs)

        monkeypatch.setattr(parallel, "ThreadPoolExecutor", Counting)
        n = self.grep_objects
        store.fill(_tree(n))
        for content_index in (False, True):  # read_many, then the index's cold reads
            ctx = self._workspace(store, content_index=content_index).context("a")
            res = ctx.tools.execute("grep", {"pattern": "needle", "output_mode": "count"})
            assert res.ok and res.text.endswith(
                f"Total: {n // 10} matching lines in {n // 10} files."), res.text
        assert len(threaded) == (0 if self.starts_reads else 2 * n)

    def test_a_started_read_answers_what_read_does(self, store: StoreRig) -> None:
        store.fill({"p/a/b.txt": b"one\n", "p/dir/x.txt": b"two\n"})
        backend = self._workspace(store).backend
        started = backend.start_read("a/b.txt")
        if not self.starts_reads:
            assert started is None
            return
        assert started is not None
        blob = started()
        assert blob.data == b"one\n" and blob.version == backend.read("a/b.txt").version
        for key, code in (("nope.txt", ErrorCode.FS_NOT_FOUND),
                          ("dir", ErrorCode.FS_IS_DIRECTORY)):
            waiting = backend.start_read(key)
            assert waiting is not None
            with pytest.raises(FsError) as err:
                waiting()  # the store's answer, mapped where it is waited on
            assert err.value.code is code, key
        with pytest.raises(FsError) as err:
            backend.start_read("")  # no file key at all: refused before any request
        assert err.value.code is ErrorCode.FS_IS_DIRECTORY

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

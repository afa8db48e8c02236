"""When the guarded filesystem's write handles commit, on memory, local disk and S3 (moto).

A handle closed normally writes, whatever exception is being handled around it (pandas
writing a fallback file in an ``except`` block); a handle whose ``with`` block raised,
directly or through a wrapper (a text wrapper, a codec, fsspec's ``OpenFile``, pandas'
handles), writes nothing. An append handle's close is conditional on the version it read
when it opened, so two appends of one owner never both succeed over the same version: the
loser is refused (``FS_STALE``) and the file holds exactly the winner's bytes. Concurrent
appenders are lined up by a barrier, never by sleeps.
"""

from __future__ import annotations

import gc
import gzip
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import fsspec
import pytest

from fsseam import ErrorCode, GuardRefused, Workspace
from fsseam.filesystem import GuardedFileSystem

from .helpers import s3_reader

pd = pytest.importorskip("pandas", reason="pandas is not installed (pip install -e '.[test]')")

CSV = b"city,n\nOslo,1\nLima,2\n"


@dataclass
class Store:
    """A workspace's storage and raw access to it behind fsseam's back."""

    workspace: Callable[[], Workspace]
    raw: Callable[[str], bytes | None]
    chained: Callable[[str, str], tuple[str, dict[str, Any]]] | None


def _memory() -> Store:
    mem = fsspec.filesystem("memory")
    name = f"closes-{uuid.uuid4().hex[:10]}"

    def raw(path: str) -> bytes | None:
        key = f"/{name}{path}"
        return bytes(mem.cat_file(key)) if mem.exists(key) else None

    def chained(path: str, owner: str) -> tuple[str, dict[str, Any]]:
        return f"fsseam::memory://{name}{path}", {"fsseam": {"owner": owner}}

    return Store(lambda: Workspace(f"memory://{name}"), raw, chained)


def _local(root: Path) -> Store:
    def raw(path: str) -> bytes | None:
        file = root / path.lstrip("/")
        return file.read_bytes() if file.exists() else None

    def chained(path: str, owner: str) -> tuple[str, dict[str, Any]]:
        return f"fsseam::file://{root}{path}", {"fsseam": {"owner": owner, "root": str(root)}}

    return Store(lambda: Workspace(str(root)), raw, chained)


def _s3(moto_s3: Any) -> Store:
    s3 = moto_s3.client()
    bucket = moto_s3.create_bucket(client=s3)
    options = moto_s3.storage_options()

    raw = s3_reader(s3, bucket)

    def chained(path: str, owner: str) -> tuple[str, dict[str, Any]]:
        return f"fsseam::s3://{bucket}{path}", {"fsseam": {"owner": owner}, "s3": options}

    return Store(lambda: Workspace(f"s3://{bucket}", storage_options=options), raw, chained)


@pytest.fixture(params=["memory", "local", "s3"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    if request.param == "memory":
        return _memory()
    if request.param == "local":
        return _local(tmp_path)
    return _s3(request.getfixturevalue("moto_s3"))


def _frame() -> Any:
    return pd.DataFrame({"city": ["Oslo", "Lima"], "n": [1, 2]})


# -- a write closed normally inside an except block is written ---------------------------


def test_to_csv_inside_an_except_block_writes_the_exact_bytes(store: Store) -> None:
    fs = store.workspace().context("person").filesystem()
    try:
        raise ValueError("the primary source failed")
    except ValueError:
        with fs.open("/fallback.csv", "w") as f:  # text mode
            _frame().to_csv(f, index=False)
        with fs.open("/fallback-b.csv", "wb") as f:  # binary mode
            _frame().to_csv(f, index=False)
        handle = fs.open("/closed.csv", "wb")  # opened and closed by hand in the handler
        _frame().to_csv(handle, index=False)
        handle.close()
    assert store.raw("/fallback.csv") == CSV
    assert store.raw("/fallback-b.csv") == CSV
    assert store.raw("/closed.csv") == CSV


def test_to_csv_of_a_chained_url_inside_an_except_block_writes_the_exact_bytes(
        store: Store) -> None:
    assert store.chained is not None
    url, options = store.chained("/fallback.csv", "person")
    try:
        raise ValueError("the primary source failed")
    except ValueError:
        _frame().to_csv(url, index=False, storage_options=options)
        other, other_options = store.chained("/opened.csv", "person")
        with fsspec.open(other, "w", **other_options) as f:  # fsspec's OpenFile
            _frame().to_csv(f, index=False)
    assert store.raw("/fallback.csv") == CSV
    assert store.raw("/opened.csv") == CSV


def test_a_handle_opened_before_and_closed_in_an_except_block_is_written(
        store: Store) -> None:
    fs = store.workspace().context("person").filesystem()
    handle = fs.open("/late.txt", "wb")
    handle.write(b"written after the error was handled\n")
    try:
        {}["missing"]
    except KeyError:
        handle.close()
    assert store.raw("/late.txt") == b"written after the error was handled\n"


# -- a with block that raised writes nothing, whatever wraps the file -----------------------


class _Unprintable:
    """A cell pandas fails to format halfway through a CSV."""

    def __str__(self) -> str:
        raise ZeroDivisionError("no text for this cell")


def test_a_with_block_that_raised_writes_nothing_through_any_wrapper() -> None:
    store = _memory()
    fs = store.workspace().context("person").filesystem()
    fs.pipe_file("/data.csv", CSV)
    failing = pd.DataFrame({"city": ["Oslo", "Lima"], "n": [1, _Unprintable()]})
    assert store.chained is not None
    url, options = store.chained("/data.csv", "person")
    # pandas' own handles over fsspec's OpenFile: their exit closes the file.
    with pytest.raises(ZeroDivisionError):
        failing.to_csv(url, index=False, storage_options=options)
    with pytest.raises(ZeroDivisionError), fsspec.open(url, "w", **options) as f:
        f.write("half")
        raise ZeroDivisionError
    with pytest.raises(ZeroDivisionError), fs.open("/data.csv", "w") as f:
        f.write("half")
        raise ZeroDivisionError
    with pytest.raises(ZeroDivisionError), fs.open("/data.csv", "w", compression="gzip") as f:
        f.write("half")
        raise ZeroDivisionError
    # Raised inside an except block too: the with block's own exception decides.
    try:
        raise ValueError("handled")
    except ValueError:
        with pytest.raises(ZeroDivisionError), fs.open("/data.csv", "wb") as f:
            f.write(b"half")
            raise ZeroDivisionError from None
    assert store.raw("/data.csv") == CSV


def test_a_text_handle_dropped_unclosed_writes_nothing() -> None:
    store = _memory()
    fs = store.workspace().context("person").filesystem()
    dropped = fs.open("/dropped.txt", "w")
    dropped.write("never")
    del dropped
    gc.collect()
    assert store.raw("/dropped.txt") is None
    with fs.open("/kept.txt", "w") as f:  # and a text handle closed normally writes
        f.write("kept\n")
    assert store.raw("/kept.txt") == b"kept\n"


def test_a_codec_handle_is_a_binary_file_and_dropped_unclosed_writes_nothing() -> None:
    store = _memory()
    fs = store.workspace().context("person").filesystem()
    try:
        raise ValueError("handled")
    except ValueError:
        with fs.open("/frame.csv.gz", "wb", compression="gzip") as f:  # pandas: binary
            _frame().to_csv(f, index=False)
    stored = store.raw("/frame.csv.gz")
    assert stored is not None and gzip.decompress(stored) == CSV
    for mode in ("wb", "w"):
        dropped = fs.open(f"/dropped-{mode}.gz", mode, compression="gzip")
        dropped.write(b"never" if mode == "wb" else "never")
        del dropped
        gc.collect()
        assert store.raw(f"/dropped-{mode}.gz") is None


# -- each append handle's close is conditional on the version it opened ---------------------


def test_two_append_handles_of_one_owner_one_close_is_refused(store: Store) -> None:
    fs = store.workspace().context("person").filesystem()
    fs.pipe_file("/log.txt", b"start\n")
    first, second = fs.open("/log.txt", "ab"), fs.open("/log.txt", "ab")
    first.write(b"first\n")
    second.write(b"second\n")
    first.close()
    with pytest.raises(GuardRefused) as refused:
        second.close()
    assert isinstance(refused.value, OSError)
    assert refused.value.code is ErrorCode.FS_STALE and refused.value.path == "/log.txt"
    assert "+first" in (refused.value.diff or "")
    assert store.raw("/log.txt") == b"start\nfirst\n"
    with fs.open("/log.txt", "ab") as again:  # opened again: over the winner's bytes
        again.write(b"second\n")
    assert store.raw("/log.txt") == b"start\nfirst\nsecond\n"


def test_two_appends_of_the_same_line_are_not_one(store: Store) -> None:
    """The second close finds the file holding exactly its bytes, written by the first:
    its line is not in them, so it is refused, not answered as done."""
    fs = store.workspace().context("person").filesystem()
    fs.pipe_file("/ticks.log", b"start\n")
    first, second = fs.open("/ticks.log", "ab"), fs.open("/ticks.log", "ab")
    first.write(b"tick\n")
    second.write(b"tick\n")
    first.close()
    with pytest.raises(GuardRefused) as refused:
        second.close()
    assert refused.value.code is ErrorCode.FS_STALE and "+tick" in (refused.value.diff or "")
    assert store.raw("/ticks.log") == b"start\ntick\n"
    fresh, other = fs.open("/new.log", "ab"), fs.open("/new.log", "ab")
    fresh.write(b"tick\n")
    other.write(b"tick\n")
    fresh.close()
    with pytest.raises(GuardRefused) as refused:
        other.close()
    assert refused.value.code is ErrorCode.FS_STALE
    assert store.raw("/new.log") == b"tick\n"
    with fs.open("/ticks.log", "ab"):  # nothing appended: nothing to write
        pass
    assert store.raw("/ticks.log") == b"start\ntick\n"


def test_two_appends_creating_one_file_one_close_is_refused(store: Store) -> None:
    fs = store.workspace().context("person").filesystem()
    first, second = fs.open("/new.txt", "ab"), fs.open("/new.txt", "ab")
    first.write(b"first\n")
    second.write(b"second\n")
    first.close()
    with pytest.raises(GuardRefused) as refused:
        second.close()
    assert refused.value.code is ErrorCode.FS_STALE
    assert store.raw("/new.txt") == b"first\n"


def _append_until_written(fs: GuardedFileSystem, line: bytes, opened: threading.Barrier,
                          turn: threading.Event | None, first: threading.Event,
                          refusals: list[int]) -> None:
    """Append ``line``. Every thread's first handle is open (one version read) before any
    closes; the first thread closes first (``turn`` is None for it), the others once it has
    (``first``): each of them then closes over a version its handle never read."""
    handle = fs.open("/counter.log", "ab")
    handle.write(line)
    opened.wait()
    if turn is not None:
        turn.wait()
    while True:
        try:
            handle.close()
            return
        except GuardRefused as refused:
            assert refused.code is ErrorCode.FS_STALE
            refusals.append(1)
        finally:
            first.set()
        handle = fs.open("/counter.log", "ab")
        handle.write(line)


def test_sixteen_threads_appending_through_one_filesystem_lose_nothing(store: Store) -> None:
    fs = store.workspace().context("person").filesystem()
    fs.pipe_file("/counter.log", b"")
    lines = [f"line {i:02d}\n".encode() for i in range(16)]
    opened = threading.Barrier(len(lines))
    first = threading.Event()
    refusals: list[int] = []
    failures: list[BaseException] = []

    def run(i: int) -> None:
        try:
            _append_until_written(fs, lines[i], opened, None if i == 0 else first, first,
                                  refusals)
        except BaseException as e:  # reported below, not lost in the thread
            failures.append(e)
            first.set()
            opened.abort()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(lines))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    stored = store.raw("/counter.log")
    assert stored is not None
    assert sorted(stored.splitlines(keepends=True)) == lines  # each exactly once
    assert stored.startswith(lines[0])  # the first close won over the version all read
    assert len(refusals) >= len(lines) - 1  # every other first close lost that version

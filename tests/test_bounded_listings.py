"""Listings of huge directories keep only what their output can show: ``ls``, the editor's
directory view and the memory tool's view build entries for the rows they may show and
count the rest (a 200,000-entry directory once took +342-400 MB)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fsseam.seam.finding
from fsseam import ListEvent, Overwrite, Workspace, hookimpl
from fsseam.outcomes import ListEntry
from fsseam.seam import smallest
from fsseam.tools.render import MAX_LIST_CHARS

from .helpers import call, ok

N = 10_000
NAMES = [f"f{i:05d}.txt" for i in range(N)]


@settings(max_examples=300, deadline=None)
@given(items=st.lists(st.tuples(st.sampled_from("abcde"), st.integers(1, 5)), max_size=30),
       budget=st.integers(-2, 40))
def test_smallest_keeps_the_sorted_prefix_that_fills_the_budget(
    items: list[tuple[str, int]], budget: int
) -> None:
    kept, count = smallest(iter(items), lambda x: x[0], lambda x: x[1], budget)
    ordered = sorted(items, key=lambda x: x[0])
    n, total = 0, 0
    while n < len(ordered) and (total < budget or n == 0):
        total += ordered[n][1]
        n += 1
    assert kept == ordered[:n]
    assert count == len(items)


def _big(store: str, root: Path, *dirs: str) -> Workspace:
    """A workspace whose ``dirs`` hold the N files f00000.txt... of one byte each."""
    if store == "local":
        for d in dirs:
            (root / d).mkdir(parents=True)
            for name in NAMES:
                (root / d / name).write_bytes(b"x")
        return Workspace(str(root), load_entry_points=False)
    ws = Workspace(f"memory://listings-{uuid.uuid4().hex}", {"global_store": False},
                   load_entry_points=False)
    b: Any = ws.backend
    b.fs.pipe({b.path(f"{d}/{name}"): b"x" for d in dirs for name in NAMES})
    return ws


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many listing entries the seam keeps (a count, shared by every call)."""
    count = [0]
    real: Callable[..., ListEntry] = fsseam.seam.finding._entry

    def counting(*args: Any) -> ListEntry:
        count[0] += 1
        return real(*args)

    monkeypatch.setattr(fsseam.seam.finding, "_entry", counting)
    return count


@pytest.mark.parametrize("store", ["memory", "local"])
def test_ls_of_a_huge_directory_keeps_what_it_can_show(store: str, root: Path,
                                                       built: list[int]) -> None:
    ws = _big(store, root, "big")
    res = ok(call(ws, "a", "ls", path="/big"))
    body, notice = res.text.split("\n\n")
    rows = body.split("\n")
    shown = len(rows)
    assert rows == [f"/big/{name}  (1 bytes)" for name in NAMES[:shown]]
    assert notice == f"(Showing {shown} of {N} entries. Use glob with a pattern to narrow.)"
    # Entries are kept until their paths alone (16 characters a row) fill the output.
    assert built[0] == MAX_LIST_CHARS // len("/big/f00000.txt\n") < N
    assert len(res.value.entries) == built[0] and res.value.more == N - built[0]


@pytest.mark.parametrize("store", ["memory", "local"])
def test_the_editor_view_of_a_huge_directory_keeps_what_it_can_show(
    store: str, root: Path, built: list[int]
) -> None:
    ws = _big(store, root, "big")
    ws.backend.write("a.txt", b"a", Overwrite())
    res = ok(call(ws, "a", "str_replace_editor", command="view", path="/"))
    head, *rows, notice = res.text.split("\n")
    assert head == ("Here's the files and directories up to 2 levels deep in /, excluding "
                    "hidden items:")
    assert rows == ["/a.txt", "/big/", *(f"/big/{name}" for name in NAMES[:len(rows) - 2])]
    hidden = N + 2 - len(rows)
    assert notice == (f"<response clipped: {hidden} more entries not shown; view a "
                      "subdirectory to see them.>")
    assert built[0] < 1100  # 16,000 characters of rows: about 1,000 of them


@pytest.mark.parametrize("store", ["memory", "local"])
def test_the_memory_view_of_a_huge_directory_keeps_what_it_can_show(
    store: str, root: Path
) -> None:
    ws = _big(store, root, "memories/big")
    res = ok(call(ws, "a", "memory", command="view", path="/memories"))
    head, *rows, notice = res.text.split("\n")
    assert head == ("Here're the files and directories up to 2 levels deep in /memories, "
                    "excluding hidden items:")
    assert rows[:2] == ["-\t/memories", "-\t/memories/big/"]
    assert [r.split("\t")[1] for r in rows[2:]] == [
        f"/memories/big/{name}" for name in NAMES[:len(rows) - 2]]
    hidden = N + 2 - len(rows)
    assert notice == (f"<response clipped: {hidden} more entries not shown; view a "
                      "subdirectory to see them.>")
    kept = res.value.result.entries
    assert len(kept) < 1100 and res.value.result.more == N + 1 - len(kept)


class HideOdd:
    def __init__(self) -> None:
        self.batches: list[int] = []

    @hookimpl
    def fs_list(self, event: ListEvent) -> None:
        if event.operation == "list":
            self.batches.append(len(event.entries))
            event.entries = [e for e in event.entries if int(e.name[1:6]) % 2 == 0]


@pytest.mark.parametrize("store", ["memory", "local"])
def test_plugins_see_every_entry_before_the_cap(store: str, root: Path) -> None:
    """The gate's list hook gets the listing in batches, and what it hides takes no place
    in the output nor in the count."""
    ws = _big(store, root, "big")
    plugin = HideOdd()
    ws.gate.register(plugin)
    res = ok(call(ws, "a", "ls", path="/big"))
    body, notice = res.text.split("\n\n")
    rows = body.split("\n")
    assert rows == [f"/big/{name}  (1 bytes)" for name in NAMES[::2][:len(rows)]]
    assert notice == (f"(Showing {len(rows)} of {N // 2} entries. Use glob with a pattern to "
                      "narrow.)")
    assert sum(plugin.batches) == N and max(plugin.batches) == 1000


def test_ls_through_a_mount_does_not_gather_the_directory(root: Path) -> None:
    """A mount passes its store's listing on one entry at a time: the peak memory of ``ls``
    of a mounted directory does not grow with the directory (5,000 entries, then 15,000:
    gathered whole, the second took some 12 MB more)."""
    import tracemalloc

    sizes = {"small": 5_000, "large": 15_000}
    for d, n in sizes.items():
        (root / d).mkdir()
        for i in range(n):
            (root / d / f"f{i:05d}.txt").write_bytes(b"x")
    ws = Workspace.mount({"/": f"memory://mounted-{uuid.uuid4().hex}", "/repo": str(root)},
                         load_entry_points=False)
    peaks = {}
    for d, n in sizes.items():
        tracemalloc.start()
        try:
            res = ok(call(ws, "a", "ls", path=f"/repo/{d}"))
            peaks[d] = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert res.value.more == n - len(res.value.entries) > 0
    assert peaks["large"] - peaks["small"] < 1_000_000, peaks

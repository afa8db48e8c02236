"""glob and grep hold memory that does not grow with what they walk: they keep ``limit``
results and counts, never a list of every entry. Each test runs one call on a small and on
a four or five times larger tree (local files, object-store keys) and compares the peaks
(tracemalloc): a list of all entries would add hundreds of kilobytes to the larger one.
The suite's sizes (2,400 files, 10,000 keys) stand for the 200,000-file tree and the
100,000-key prefix: the peak is flat in the count, so the count does not matter. The full
profile (``--hypothesis-profile=full``) runs those sizes themselves.
"""

from __future__ import annotations

import os
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

import fsseam.seam.finding
from fsseam import Limits, ToolResult, Workspace
from fsseam.backends.local import parts as local_parts
from fsseam.backends.objectstore.client import ListedObject, ListPage, ObjectData
from fsseam.index.source import AHEAD
from fsseam.seam import finding, workers
from fsseam.seam.finding import PARTS_PER_HELPER
from fsseam.versions import Version

from .budget import size
from .helpers import GeneratedClient, generated_s3

KiB, MiB = 1 << 10, 1 << 20
BODY = b"x = 1\nneedle = 2\n"
GROWTH = 64 * KiB
"""What the larger run may add to the peak: a path string alone is some 60 bytes, so a
list of the extra entries' paths would be three to ten times this."""

WHOLE = Limits(finder_seconds=0)
"""No time budget: tracemalloc slows a call several times, and what is measured is the
memory of the whole walk."""


def _peak(ws: Workspace, tool: str, args: dict[str, Any]) -> tuple[ToolResult, int]:
    ctx = ws.context("agent")
    # The same call on one directory first: the pattern compiled, modules loaded, the
    # workspace's first observations stored are not what is measured.
    ctx.tools.execute(tool, {**args, "path": "/d0000"})
    tracemalloc.start()
    try:
        res = ctx.tools.execute(tool, args)
        return res, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _tree(root: Path, files: int, processes: int | None = None) -> Workspace:
    """``files`` files of 100 per directory, all links to one inode (made in a fraction of
    the time of as many writes; a search reads each as a file of its own)."""
    root.mkdir()
    source = root.parent / f"{root.name}.src"
    source.write_bytes(BODY)
    for d in range(files // 100):
        sub = root / f"d{d:04d}"
        sub.mkdir()
        for i in range(100):
            os.link(source, sub / f"f{i:03d}.py")
    limits = WHOLE if processes is None else WHOLE.model_copy(
        update={"finder_processes": processes})
    return Workspace(str(root), load_entry_points=False, limits=limits)


def _parts_bytes(ws: Workspace, processes: int) -> int:
    """What the list of the parts a search of the whole tree is split into holds."""
    if processes < 2:
        return 0
    split = ws.backend.split_tree  # type: ignore[attr-defined]
    tracemalloc.start()
    try:
        parts = split("", processes * PARTS_PER_HELPER)
        held = tracemalloc.get_traced_memory()[0]
        assert len(parts) >= 60  # runs of 10 files: a tenth of the files
        return held
    finally:
        tracemalloc.stop()


CALLS = [
    ("glob", {"pattern": "**/*.py"}),
    ("grep", {"pattern": "needle"}),
    ("grep", {"pattern": r"need\w+", "output_mode": "content"}),
]


@pytest.mark.parametrize("processes", [1, 2])
def test_a_local_tree_costs_the_same_memory_at_any_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, processes: int
) -> None:
    # A walk hands its entries to the gate a batch at a time: what a batch holds is the
    # bound, so the trees here are several batches of 100 (the suite's sizes) rather than
    # several of 1,000.
    monkeypatch.setattr(fsseam.seam.finding, "WALK_BATCH", 100)
    if processes > 1:
        # Helper processes from the first part, parts of 10 files: the findings of the
        # parts handed out ahead (16 per helper, each at most the limit) wait their turn,
        # so the bound is that many parts' findings; both trees have more parts.
        monkeypatch.setattr(finding, "SWITCH_SECONDS", 0.0)
        monkeypatch.setattr(local_parts, "RUN_FILES", 10)
        workers.helpers().wait_ready(processes)  # both trees searched by helpers throughout
    peaks: dict[int, list[int]] = {}
    for n in (size(40_000, 600), size(200_000, 2_400)):
        ws = _tree(tmp_path / f"t{n}", n, processes)
        # The split's list of parts is held through a call: a few strings a part, its
        # memory the count of parts by design (``split_tree``), which these runs of 10
        # files make a tenth of the files. Everything else is what is compared.
        parts = _parts_bytes(ws, processes)
        peaks[n] = []
        for tool, args in CALLS:
            res, peak = _peak(ws, tool, args)
            peak -= parts
            assert res.ok, res.text
            out = res.value
            if tool == "glob":
                assert out.total == n and len(out.paths) == 100
                assert out.paths[:2] == ["/d0000/f000.py", "/d0000/f001.py"]
            else:
                assert out.files_matched == n and out.truncated and not out.partial
                assert out.files[0].path == "/d0000/f000.py"
            peaks[n].append(peak)
    growth = [large - small for small, large in zip(*peaks.values(), strict=True)]
    assert max(growth) < GROWTH, peaks


def test_a_1_gib_file_in_a_tree_is_skipped_unread(tmp_path: Path) -> None:
    """Over ``Limits.max_edit_bytes`` a file is counted as too large, not read: a sparse
    1 GiB file among others costs the search nothing."""
    root = tmp_path / "root"
    (root / "logs").mkdir(parents=True)
    with (root / "logs" / "big.log").open("wb") as f:
        f.write(b"needle\n")
        f.truncate(1 << 30)
    (root / "logs" / "small.log").write_bytes(b"needle\n")
    ws = Workspace(str(root), load_entry_points=False)
    res, peak = _peak(ws, "grep", {"pattern": "needle", "output_mode": "content"})
    assert res.ok, res.text
    assert [f.path for f in res.value.files] == ["/logs/small.log"]
    assert res.value.skipped == {"too_large": 1} and "1 too large" in res.text
    assert peak < 4 * MiB, peak


class Keys(GeneratedClient):
    """An object store's client over ``count`` generated keys, 100 per "directory": a
    listing page is made when asked for and every object holds ``BODY``, so the store
    itself holds nothing. Counts its requests."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.pages = self.gets = 0

    @staticmethod
    def name(i: int) -> str:
        return f"d{i // 100:04d}/f{i % 100:03d}.py"

    def list_objects(self, prefix: str, *, delimiter: str | None, token: str | None = None,
                     limit: int | None = None) -> ListPage:
        assert delimiter is None
        self.pages += 1
        first, last = (0, self.count) if not prefix else (int(prefix[1:5]) * 100,
                                                          int(prefix[1:5]) * 100 + 100)
        start = int(token or first)
        end = min(last, start + (limit or 1000))
        return ListPage(objects=[ListedObject(name=self.name(i), size=len(BODY))
                                 for i in range(start, end)],
                        next_token=str(end) if end < last else None)

    def get(self, name: str, **_: Any) -> ObjectData:
        self.gets += 1
        return ObjectData(data=BODY, version=Version(kind="etag", value='"1"'),
                          size=len(BODY))


def _keys(count: int) -> tuple[Workspace, Keys]:
    client = Keys(count)
    return generated_s3(client, limits=WHOLE), client


def test_a_prefix_of_many_keys_is_walked_page_by_page() -> None:
    """Both sizes are past what an indexed grep holds ahead of its search (the batches
    listed ahead, ``AHEAD + 1`` of 1,000 keys), which is the same at any larger size."""
    assert size(20_000, 6_000) > (AHEAD + 1) * 1000
    peaks: dict[int, list[int]] = {}
    for n in (size(20_000, 6_000), size(100_000, 24_000)):
        ws, client = _keys(n)
        res, glob_peak = _peak(ws, "glob", {"pattern": "**/*.py"})
        assert res.ok and res.value.total == n, res.text
        assert client.pages == 1 + n // 1000  # one request per 1,000 keys
        # Every key is walked and matched against glob; only d0001's 100 objects are read.
        grep_peaks = []
        for _ in range(2):  # the walk's threads meet at varying points: see below
            client.gets = 0
            res, grep_peak = _peak(ws, "grep", {"pattern": "needle", "glob": "d0001/*.py"})
            assert res.ok and res.value.files_matched == res.value.searched == 100, res.text
            assert client.gets == 100  # (the call on /d0000 first matches nothing there)
            grep_peaks.append(grep_peak)
        # The smaller size keeps its larger peak, the larger size its smaller one: what
        # is left is growth with the size, which every run has.
        peaks[n] = [glob_peak, max(grep_peaks) if not peaks else min(grep_peaks)]
    (glob_small, grep_small), (glob_large, grep_large) = peaks.values()
    assert glob_large - glob_small < GROWTH, peaks
    # The indexed grep's peak moves by up to a listing batch (1,000 entries, some 450 KiB)
    # with where its threads meet; the 18,000 extra keys' paths alone would be 1 MiB.
    assert grep_large - grep_small < 512 * KiB, peaks

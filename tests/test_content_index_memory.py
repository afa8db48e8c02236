"""The content index holds memory that does not grow with the prefix it searches: a grep
keeps the shards of the directories it is walking, not every shard it has read, and stores
and lets go of each once the walk has left its directory.

A generated store (its listing gives each object's version, so the index is used; files
are made when read) holds the shards the index writes. A cold grep stores one shard per
directory; an outside writer then changes one file of every directory, so the measured
warm grep fetches every shard, reads the changed files and the matches, and stores every
shard again. Its peak (tracemalloc) on 8,000 and on 32,000 keys is the same, within what
the threads' timing moves it: a dictionary of every shard read would add megabytes to the
larger one. (Both sizes are several listing batches: the first batches of a walk, before
one is listed ahead while another is read and a third's shards stored, hold less.)
"""

from __future__ import annotations

import tracemalloc
from typing import Any

from fsseam import Limits, Workspace
from fsseam.backends.objectstore.client import ListedObject, ListPage, ObjectData
from fsseam.index import FOLDER
from fsseam.index.source import AHEAD, STEPS_AHEAD
from fsseam.versions import Version

from .helpers import GeneratedClient, generated_s3

KiB = 1 << 10
GROWTH = 2048 * KiB
"""How far the larger size's peak may pass the smaller's. Its 240 extra shards, held at
once, would be 7.2 MiB (a shard of a hundred entries is 30 KiB as Python objects). A
peak moves by up to 1.5 MiB from run to run (the walk's threads, the one listing ahead,
the four fetching shards, the readers and the one storing shards, meet at different
points of their batches: 10.8 to 11.8 MiB at 8,000 keys, 12.2 to 12.4 at 32,000, 12.4 to
12.7 at 64,000). So the smaller size keeps the larger of its two peaks and the larger
size the smaller of its two: what is left is growth with the size, which every run has."""
WHOLE = Limits(finder_seconds=0)
"""No time budget: tracemalloc slows a call several times."""


MATCHES = (50, 1050, 3950)
"""The files holding the needle, at both sizes: what the answer lists is the same."""


def body(i: int, edition: int) -> bytes:
    needle = "needle\n" if i in MATCHES else ""
    return f"x = {i}\n{needle}edition = {edition}\n".encode()


class Indexed(GeneratedClient):
    """An object store's client over ``count`` generated keys, 100 per directory (one
    shard each), listed with versions. Files are made when read; the objects written (the
    index's shards) are kept. ``edition``: the files ``i % 100 == 7`` were rewritten that
    many times by an outside writer."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.edition = 0
        self.stored: dict[str, tuple[bytes, Version]] = {}
        self.listed: list[tuple[str, tuple[bytes, Version]]] = []
        self.keep = True
        """Whether written objects are kept: not while a call is measured (what the store
        holds is not the call's memory)."""
        self.gets = self.puts = 0

    @staticmethod
    def name(i: int) -> str:
        return f"d{i // 100:04d}/s/f{i % 100:03d}.txt"

    def _edition(self, i: int) -> int:
        return self.edition if i % 100 == 7 else 0

    def _version(self, i: int) -> Version:
        return Version(kind="etag", value=f'"{i}-{self._edition(i)}"')

    def list_objects(self, prefix: str, *, delimiter: str | None, token: str | None = None,
                     limit: int | None = None) -> ListPage:
        # The index's folder sorts before the files ("." < "d"): the listing is its objects,
        # then the files, 1,000 a page.
        assert delimiter is None and not prefix
        if not token:  # what the listing's first page saw: its pages are one listing
            self.listed = sorted(self.stored.items())
        shards = self.listed
        total = len(shards) + self.count
        start = int(token or 0)
        end = min(total, start + (limit or 1000))
        objects = [ListedObject(name=k, size=len(v[0]), version=v[1])
                   for k, v in shards[start:end]]
        objects += [ListedObject(name=self.name(i), size=len(body(i, self._edition(i))),
                                 version=self._version(i))
                    for i in range(max(start - len(shards), 0), end - len(shards))]
        return ListPage(objects=objects, next_token=str(end) if end < total else None)

    def get(self, name: str, **_: Any) -> ObjectData:
        self.gets += 1
        if name.startswith(FOLDER + "/"):
            if name not in self.stored:
                raise FileNotFoundError(name)
            data, version = self.stored[name]
            return ObjectData(data=data, version=version, size=len(data))
        d, _, f = name.partition("/s/f")
        i = int(d[1:]) * 100 + int(f[:3])
        data = body(i, self._edition(i))
        return ObjectData(data=data, version=self._version(i), size=len(data))

    def put(self, name: str, data: bytes, *, if_match: Version | None, if_absent: bool,
            write_id: str) -> Version:
        assert name.startswith(FOLDER + "/"), name  # only the index writes
        held = self.stored.get(name)
        assert (held is None) if if_absent else (held is not None and held[1] == if_match)
        self.puts += 1
        version = Version(kind="etag", value=f'"{write_id}"')
        if self.keep:
            self.stored[name] = (data, version)
        return version


def _workspace(count: int) -> tuple[Workspace, Indexed]:
    client = Indexed(count)
    return generated_s3(client, limits=WHOLE, content_index=True), client


def test_an_indexed_grep_holds_the_same_memory_at_8k_and_32k_keys() -> None:
    """The smaller size is past what the walk holds ahead of the search (``AHEAD + 1``
    batches listed and their shards, ``STEPS_AHEAD`` files planned), which every larger
    one holds too."""
    assert (AHEAD + 1) * 1000 + STEPS_AHEAD <= 8_000
    peaks: dict[int, int] = {}
    for n in (8_000, 8_000, 32_000, 32_000):
        ws, client = _workspace(n)
        ctx = ws.context("agent")
        args = {"pattern": "needle", "output_mode": "files_with_matches"}
        cold = ctx.tools.execute("grep", args)  # every file read, every shard stored
        assert cold.ok and cold.value.files_matched == len(MATCHES), cold.text
        assert (client.gets, client.puts) == (n + n // 100, n // 100)
        client.edition += 1  # one file of every directory changed from outside
        client.gets = client.puts = 0
        client.keep = False
        tracemalloc.start()
        try:
            warm = ctx.tools.execute("grep", args)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert warm.ok and warm.value.files_matched == len(MATCHES), warm.text
        assert not warm.value.partial
        # Every shard fetched, the matches and the changed files read, every shard stored.
        assert (client.gets, client.puts) == (n // 100 + len(MATCHES) + n // 100, n // 100)
        keep = max if n == 8_000 else min
        peaks[n] = keep(peak, peaks.get(n, peak))
    assert peaks[32_000] - peaks[8_000] < GROWTH, peaks

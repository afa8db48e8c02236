"""An indexed grep reads as one stream over its whole walk: the reads of the next listing
batch start while the last read of a batch is still in flight (a batch no longer waits for
its slowest read), and the answer is the same, in the same order, as without the index.

A generated store (its listing gives no versions, so every file is read) whose read of the
first batch's last file waits until a read of the second batch has started: a grep that
read batch by batch would wait there for ever (the wait has a timeout and the test then
fails on the answer).
"""

from __future__ import annotations

import threading
from concurrent.futures import Future
from typing import Any

import pytest

import fsseam.seam.finding
from fsseam import Workspace
from fsseam.backends.objectstore.client import ListedObject, ListPage, ObjectData
from fsseam.versions import Version

from .helpers import GeneratedClient, generated_s3

BATCH = 4
NAMES = [f"d{d}/f{i}.txt" for d in range(3) for i in range(4)]
"""Three batches of four files, in listing order."""


class Stalling(GeneratedClient):
    """A store of ``NAMES``, each holding one match; the read of ``NAMES[BATCH - 1]`` waits
    until a read of the next batch has started."""

    def __init__(self) -> None:
        self.next_batch_started = threading.Event()
        self.overlapped = False
        self.threads: set[str] = set()

    def list_objects(self, prefix: str, *, delimiter: str | None, token: str | None = None,
                     limit: int | None = None) -> ListPage:
        assert delimiter is None and not prefix
        return ListPage(objects=[ListedObject(name=n, size=20) for n in NAMES])

    def get(self, name: str, **_: Any) -> ObjectData:
        self.threads.add(threading.current_thread().name.rsplit("_", 1)[0])
        if name in NAMES[BATCH:2 * BATCH]:
            self.next_batch_started.set()
        if name == NAMES[BATCH - 1]:
            self.overlapped = self.next_batch_started.wait(timeout=30)
        return ObjectData(data=f"needle in {name}\n".encode(),
                          version=Version(kind="etag", value=f'"{name}"'), size=20)


class Started(Stalling):
    """``Stalling`` whose client starts its reads (``start_get``), each answered on a thread
    of the store's own, as a store library's event loop answers: the grep's side waits
    on the futures and starts no thread of its own."""

    def __init__(self) -> None:
        super().__init__()
        self.started: list[str] = []

    def start_get(self, name: str) -> Future[ObjectData]:
        self.started.append(name)
        answer: Future[ObjectData] = Future()
        threading.Thread(target=lambda: answer.set_result(self.get(name)),
                         name="store-loop").start()
        return answer


@pytest.mark.parametrize("client_type", [Stalling, Started])
def test_the_next_batch_is_read_while_a_batch_s_last_read_is_in_flight(
        monkeypatch: pytest.MonkeyPatch, client_type: type[Stalling]) -> None:
    monkeypatch.setattr(fsseam.seam.finding, "WALK_BATCH", BATCH)
    client = client_type()
    ws: Workspace = generated_s3(client, content_index=True)
    res = ws.context("agent").tools.execute("grep", {"pattern": "needle",
                                                      "output_mode": "content"})
    assert res.ok and not res.value.partial, res.text
    assert client.overlapped
    assert [f.path for f in res.value.files] == [f"/{n}" for n in NAMES]
    assert [f.hunks[0].lines[0] for f in res.value.files] == [f"needle in {n}" for n in NAMES]
    # Started: every read through start_get, none on a pool thread; else the pool's.
    if isinstance(client, Started):
        assert sorted(client.started) == sorted(NAMES) and client.threads == {"store-loop"}
    else:
        assert client.threads == {"fsseam-read"}
        assert ws.backend.start_read("d0/f0.txt") is None  # no start_get


def test_a_backend_class_that_reads_its_own_way_keeps_every_read(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A subclass that overrides ``read`` (to count, to fault) is never bypassed by reads
    started on the client, even where the client could start them."""
    monkeypatch.setattr(fsseam.seam.finding, "WALK_BATCH", BATCH)
    client = Started()
    generated = type(generated_s3(client).backend)
    seen: list[str] = []

    class OwnReads(generated):  # type: ignore[misc, valid-type]
        def read(self, key: str) -> Any:
            seen.append(key)
            return super().read(key)

    backend = OwnReads()
    ws = Workspace("s3://bucket", backend=backend, load_entry_points=False,
                   content_index=True)
    assert ws.backend.start_read("d0/f0.txt") is None
    res = ws.context("agent").tools.execute("grep", {"pattern": "needle"})
    assert res.ok and [f.path for f in res.value.files] == [f"/{n}" for n in NAMES], res.text
    assert sorted(seen) == sorted(NAMES) and client.started == []
    assert client.overlapped

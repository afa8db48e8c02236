"""A content-index shard is untrusted bytes: whoever can write the bucket can plant one.

A zlib bomb (a few kilobytes of a shard's compressed entries that inflate to far more than
any shard holds) is inflated only up to ``shards.MAX_BODY_BYTES``, then read as a damaged
shard: the grep reads the directory's files, answers what the same grep without an index
answers, and stores a true shard over the bomb. The bound is lowered for the test (1 MiB)
so that a bomb of 64 MiB shows the difference in memory without costing a gigabyte.
"""

from __future__ import annotations

import logging
import tracemalloc
import zlib
from typing import Any

import pytest

from fsseam import Limits, Workspace
from fsseam.backends.objectstore.client import ListedObject, ListPage, ObjectData
from fsseam.index import FOLDER, shards
from fsseam.index.shards import FORMAT, Kind, ShardHeader, decode, object_name
from fsseam.versions import Version

from .helpers import GeneratedClient, generated_s3

MiB = 1 << 20
BOUND = 1 * MiB
BOMB = 64 * MiB
"""What the planted shard inflates to: far past the bound, and past what a grep of this
tree holds otherwise (a few MiB), so a grep that inflates it shows it in its peak."""
PEAK = 8 * MiB
"""A grep's peak with the bomb: over twice ``BOMB`` when the shard is inflated whole;
bounded, 2.4 MiB in memory."""
PEAK_MOTO = BOMB // 2
"""The same on moto, whose server runs in this process (tracemalloc counts it): 23 MiB
bounded."""
NEEDLE = "frobnicate_widget"
WHOLE = Limits(finder_seconds=0)  # tracemalloc slows a call several times


def body(i: int) -> bytes:
    return f"line one of {i}\n{NEEDLE if i % 3 == 0 else 'nothing'} = {i}\n".encode()


FILES = {f"d{i % 2}/f{i:02d}.txt": body(i) for i in range(12)}


def bomb(prefix: str) -> bytes:
    """A shard of ``prefix`` whose header is well formed and whose entries inflate to
    ``BOMB`` bytes (zeros: entries with no name), made in pieces to keep the test light."""
    import base64

    head = ShardHeader(format=FORMAT, prefix=prefix, entries=1).model_dump_json().encode()
    deflater = zlib.compressobj(9)
    zeros = bytes(MiB)
    compressed = b"".join(deflater.compress(zeros) for _ in range(BOMB // MiB))
    compressed += deflater.flush()
    assert len(compressed) < BOMB // 500  # a bomb: a few hundred KiB at most
    return head + b"\n" + base64.b64encode(compressed)


@pytest.fixture
def bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shards, "MAX_BODY_BYTES", BOUND, raising=False)


def grep(ws: Workspace) -> str:
    res = ws.context("a").tools.execute("grep", {"pattern": NEEDLE, "output_mode": "content"})
    assert res.ok, res.text
    assert not res.value.partial, res.text
    return res.text


def peak_of_grep(ws: Workspace) -> tuple[str, int]:
    tracemalloc.start()
    try:
        text = grep(ws)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return text, peak


def rebuilt(data: bytes, prefix: str) -> dict[str, str]:
    """The files a stored shard names, and their kinds: a true shard, read back."""
    shard = decode(data, prefix)
    assert shard is not None
    return {name: Kind(kind).name for name, (_, kind, _) in shard.files.items()}


EXPECTED_D0 = {f"f{i:02d}.txt": "TEXT" for i in range(0, 12, 2)}


# -- the shard's own decoding --------------------------------------------------------------
def test_a_bomb_shard_is_damaged_and_inflated_no_further_than_the_bound(bounded: None) -> None:
    planted = bomb("d0")
    tracemalloc.start()
    try:
        assert decode(planted, "d0") is None
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 3 * BOUND + len(planted), peak


def test_a_shard_at_the_bound_reads_back_and_one_over_it_keeps_the_entries_that_fit(
        monkeypatch: pytest.MonkeyPatch) -> None:
    files = {f"f{i:03d}.bin": (f'etag:"{i}"', Kind.BINARY, None) for i in range(100)}
    whole = shards.encode(shards.IndexShard("p", files))
    entry = 8 + len("f000.bin") + len('etag:"0"')  # the first ten entries' size
    monkeypatch.setattr(shards, "MAX_BODY_BYTES", 10 * entry)
    # Written under the bound: the first ten names, which read back.
    kept = decode(shards.encode(shards.IndexShard("p", files)), "p")
    assert kept is not None and sorted(kept.files) == [f"f{i:03d}.bin" for i in range(10)]
    # Written with no bound in force, read under it: damaged.
    assert decode(whole, "p") is None


# -- a grep over a planted bomb --------------------------------------------------------------
class Bucket(GeneratedClient):
    """An object store held in this process: ``objects`` by name, each with its version;
    writes conditional as S3's are."""

    def __init__(self, objects: dict[str, bytes]) -> None:
        self.objects: dict[str, tuple[bytes, Version]] = {}
        self.writes = 0
        for name, data in objects.items():
            self._store(name, data)

    def _store(self, name: str, data: bytes) -> Version:
        self.writes += 1
        version = Version(kind="etag", value=f'"{self.writes}"')
        self.objects[name] = (data, version)
        return version

    def list_objects(self, prefix: str, *, delimiter: str | None, token: str | None = None,
                     limit: int | None = None) -> ListPage:
        assert delimiter is None and token is None
        return ListPage(objects=[ListedObject(name=k, size=len(d), version=v)
                                 for k, (d, v) in sorted(self.objects.items())
                                 if k.startswith(prefix)])

    def get(self, name: str, **_: Any) -> ObjectData:
        if name not in self.objects:
            raise FileNotFoundError(name)
        data, version = self.objects[name]
        return ObjectData(data=data, version=version, size=len(data))

    def put(self, name: str, data: bytes, *, if_match: Version | None, if_absent: bool,
            write_id: str) -> Version:
        held = self.objects.get(name)
        assert (held is None) if if_absent else (held is not None and held[1] == if_match)
        return self._store(name, data)


def test_a_bomb_shard_in_memory_is_rebuilt_and_grep_answers_as_without_the_index(
        bounded: None, caplog: pytest.LogCaptureFixture) -> None:
    shard_key = f"{FOLDER}/{object_name('d0')}"
    bucket = Bucket({**FILES, shard_key: bomb("d0")})
    plain = grep(generated_s3(Bucket(FILES), content_index=False, policy=False))
    assert plain.count(NEEDLE) == 4
    indexed = generated_s3(bucket, content_index=True, limits=WHOLE)
    with caplog.at_level(logging.WARNING, logger="fsseam.index.keeper"):
        text, peak = peak_of_grep(indexed)
    assert text == plain
    assert peak < PEAK, peak
    assert [r.getMessage() for r in caplog.records] == [
        f"content index shard {shard_key} is damaged, of another format or too large "
        f"inflated ({len(bomb('d0'))} bytes); rebuilt"]
    assert rebuilt(bucket.objects[shard_key][0], "d0") == EXPECTED_D0
    assert grep(indexed) == plain  # and the rebuilt shard serves the next grep


def test_a_bomb_shard_on_s3_is_rebuilt_and_grep_answers_as_without_the_index(
        moto_s3: Any, bounded: None) -> None:
    bucket = moto_s3.create_bucket()
    client = moto_s3.client()
    for key, data in FILES.items():
        client.put_object(Bucket=bucket, Key=f"r/{key}", Body=data)
    shard_key = f"r/{FOLDER}/{object_name('d0')}"
    client.put_object(Bucket=bucket, Key=shard_key, Body=bomb("d0"))
    url, options = f"s3://{bucket}/r", moto_s3.storage_options()
    plain = grep(Workspace(url, storage_options=options, content_index=False, policy=False))
    assert plain.count(NEEDLE) == 4
    indexed = Workspace(url, storage_options=options, limits=WHOLE)
    text, peak = peak_of_grep(indexed)
    assert text == plain
    assert peak < PEAK_MOTO, peak
    stored = client.get_object(Bucket=bucket, Key=shard_key)["Body"].read()
    assert rebuilt(stored, "d0") == EXPECTED_D0
    assert grep(indexed) == plain

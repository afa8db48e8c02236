"""The content index on real stores: S3 (moto, requests counted at the server) and GCS
(fake-gcs-server behind a counting proxy), with Azure's listed versions against Azurite.

An outside writer changes files between two indexed greps, and every grep shows what the
same grep without an index shows; a warm grep costs the listing, the index shards and the
candidates only; the index's folder is hidden from every tool and refused to them; two
workspaces writing one shard at once keep each other's entries; ``content_index=False``
makes no index request; the setting survives pickling.
"""

from __future__ import annotations

import pickle
from collections import Counter
from typing import Any

import pytest

from fsseam import Workspace
from fsseam.backends.base import Backend
from fsseam.errors import ErrorCode, FsError
from fsseam.index import FOLDER, ContentIndex, index_of
from fsseam.messages import Reason

NEEDLE = "frobnicate_widget"


def body(i: int, needle: bool) -> bytes:
    return f"line one of {i}\n{NEEDLE if needle else 'nothing here'} = {i}\nend\n".encode()


def grep(ws: Workspace, mode: str = "content") -> str:
    res = ws.context("a").tools.execute("grep", {"pattern": NEEDLE, "output_mode": mode})
    assert res.ok, res.text
    return res.text


def s3_counts(moto: Any, bucket: str) -> Counter[str]:
    """Requests by kind: LIST, INDEX (GET of a shard), GET (of a file), PUT."""
    kinds: Counter[str] = Counter()
    for method, path in moto.log.to_bucket(bucket):
        if method == "GET" and path.rstrip("/") == f"/{bucket}":
            kinds["LIST"] += 1
        elif FOLDER in path:
            kinds["INDEX" if method == "GET" else f"INDEX_{method}"] += 1
        else:
            kinds[method] += 1
    return kinds


@pytest.fixture
def s3_tree(moto_s3: Any) -> tuple[Any, str, Any]:
    bucket = moto_s3.create_bucket()
    client = moto_s3.client()
    for i in range(20):  # four directories (four shards), a match in every fifth file
        client.put_object(Bucket=bucket, Key=f"r/d{i % 4}/f{i:02d}.txt",
                          Body=body(i, i % 5 == 0))
    return moto_s3, bucket, client


def test_an_outside_writer_between_two_indexed_greps_is_seen_on_s3(
        s3_tree: tuple[Any, str, Any]) -> None:
    moto, bucket, client = s3_tree
    url, options = f"s3://{bucket}/r", moto.storage_options()
    indexed = Workspace(url, storage_options=options)
    plain = Workspace(url, storage_options=options, content_index=False, policy=False)
    first = grep(indexed)
    assert first == grep(plain) and first.count(NEEDLE) == 4
    # The outside writer: a match added, a match removed, a match changed, a new file.
    client.put_object(Bucket=bucket, Key="r/d1/f01.txt", Body=body(1, True))
    client.put_object(Bucket=bucket, Key="r/d3/f15.txt", Body=body(15, False))
    client.put_object(Bucket=bucket, Key="r/d2/f10.txt", Body=f"new {NEEDLE} line\n".encode())
    client.put_object(Bucket=bucket, Key="r/d5/new.txt", Body=body(99, True))
    client.delete_object(Bucket=bucket, Key="r/d0/f00.txt")
    second = grep(indexed)
    assert second == grep(plain)
    assert "/d1/f01.txt" in second and "/d5/new.txt" in second
    assert "f15.txt" not in second and "f00.txt" not in second
    assert f"new {NEEDLE} line" in second and f"{NEEDLE} = 10" not in second  # no stale line
    assert grep(indexed, "count") == grep(plain, "count")


def test_a_warm_grep_reads_the_listing_the_shards_and_the_candidates_only(
        s3_tree: tuple[Any, str, Any]) -> None:
    moto, bucket, client = s3_tree
    ws = Workspace(f"s3://{bucket}/r", storage_options=moto.storage_options())
    moto.log.clear()
    grep(ws)  # cold: every file read once, each shard written once
    assert s3_counts(moto, bucket) == {"LIST": 1, "INDEX": 4, "GET": 20, "INDEX_PUT": 4}
    # Two files of one directory changed from outside, one of them now a match.
    client.put_object(Bucket=bucket, Key="r/d1/f01.txt", Body=body(1, True))
    client.put_object(Bucket=bucket, Key="r/d1/f09.txt", Body=b"still no match\n")
    moto.log.clear()
    text = grep(ws)
    assert "/d1/f01.txt" in text
    # The 4 matches and the 2 changed files are read; only their shard is written.
    assert s3_counts(moto, bucket) == {"LIST": 1, "INDEX": 4, "GET": 6, "INDEX_PUT": 1}
    moto.log.clear()
    grep(ws)
    assert s3_counts(moto, bucket) == {"LIST": 1, "INDEX": 4, "GET": 5}
    # fsseam's own write is indexed from its text: the next grep reads it only if it may
    # match (this one does not), and never writes a file it did not read.
    ctx = ws.context("a")
    assert ctx.tools.execute("write", {"file_path": "/d3/own.txt", "content": "mine\n"}).ok
    moto.log.clear()
    grep(ws)
    assert s3_counts(moto, bucket) == {"LIST": 1, "INDEX": 4, "GET": 5, "INDEX_PUT": 1}


def test_a_grep_of_one_file_costs_what_it_costs_without_the_index(
        s3_tree: tuple[Any, str, Any]) -> None:
    """A file as ``path``: the index's walk learns it is not a directory, and the plain path
    reads the file without listing it again."""
    moto, bucket, _ = s3_tree
    url, options = f"s3://{bucket}/r", moto.storage_options()
    texts, requests = [], []
    for setting in (True, False):
        ctx = Workspace(url, storage_options=options, content_index=setting).context("a")
        moto.log.clear()
        res = ctx.tools.execute("grep", {"pattern": NEEDLE, "path": "/d0/f00.txt",
                                         "output_mode": "content"})
        assert res.ok, res.text
        texts.append(res.text)
        requests.append(moto.log.to_bucket(bucket))
    assert texts[0] == texts[1] and f"{NEEDLE} = 0" in texts[0]
    # The walk (a listing, then a HEAD that finds a file), the stat, the read: no more.
    assert requests[0] == requests[1]
    assert [m for m, _ in requests[0]] == ["GET", "HEAD", "HEAD", "GET"]
    assert requests[0][-1] == ("GET", f"/{bucket}/r/d0/f00.txt")


def test_the_index_is_hidden_from_every_tool_and_refused_to_them(
        s3_tree: tuple[Any, str, Any]) -> None:
    moto, bucket, client = s3_tree
    ws = Workspace(f"s3://{bucket}/r", storage_options=moto.storage_options())
    grep(ws)
    shards = client.list_objects_v2(Bucket=bucket, Prefix=f"r/{FOLDER}/")["Contents"]
    assert len(shards) == 4
    name = shards[0]["Key"].removeprefix("r/")
    before = client.get_object(Bucket=bucket, Key=shards[0]["Key"])["Body"].read()
    tools = ws.context("a").tools
    assert FOLDER not in tools.execute("ls", {"path": "/"}).text
    assert FOLDER not in tools.execute("glob", {"pattern": "**/*"}).text
    found = tools.execute("grep", {"pattern": "fsseam-index", "output_mode": "files_with_matches"})
    assert FOLDER not in found.text
    for tool, args in (("read", {"file_path": f"/{name}"}),
                       ("write", {"file_path": f"/{name}", "content": "x"}),
                       ("write", {"file_path": f"/{FOLDER}/new.idx", "content": "x"}),
                       ("delete", {"file_path": f"/{name}"})):
        res = tools.execute(tool, args)
        assert not res.ok and res.error is not None, (tool, res.text)
        assert res.error.code == "FS_PERMISSION_DENIED", (tool, res.text)
    assert client.get_object(Bucket=bucket, Key=shards[0]["Key"])["Body"].read() == before


def test_two_workspaces_writing_one_shard_keep_each_others_entries(
        s3_tree: tuple[Any, str, Any]) -> None:
    moto, bucket, _client = s3_tree
    url, options = f"s3://{bucket}/r", moto.storage_options()
    first, second = (Workspace(url, storage_options=options) for _ in range(2))
    index = index_of(first.gate)
    assert index is not None
    real_save = index.save

    def save_after_the_other(shards: Any) -> None:
        # Ordered by the call itself: the second workspace writes a file and stores every
        # shard between the first one's reads of the shards and its own writes of them.
        ctx = second.context("b")
        assert ctx.tools.execute("write", {"file_path": "/d0/theirs.txt",
                                           "content": f"{NEEDLE} theirs\n"}).ok
        assert f"{NEEDLE} theirs" in grep(second)
        real_save(shards)

    index.save = save_after_the_other  # type: ignore[method-assign]
    assert grep(first).count(NEEDLE) == 4  # listed before the other's write
    index.save = real_save  # type: ignore[method-assign]
    # A third workspace finds both grep's entries: only the 5 matches are read.
    moto.log.clear()
    third = Workspace(url, storage_options=options)
    assert grep(third).count(NEEDLE) == 5
    assert s3_counts(moto, bucket) == {"LIST": 1, "INDEX": 4, "GET": 5}


def test_content_index_false_makes_no_index_request_and_pickles(
        s3_tree: tuple[Any, str, Any]) -> None:
    moto, bucket, _ = s3_tree
    url, options = f"s3://{bucket}/r", moto.storage_options()
    off = Workspace(url, storage_options=options, content_index=False,
                    observations=f"s3://{bucket}/obs")
    assert index_of(off.gate) is None
    moto.log.clear()
    assert grep(off).count(NEEDLE) == 4
    assert not [p for _, p in moto.log.to_bucket(bucket) if FOLDER in p]
    again = pickle.loads(pickle.dumps(off))
    assert again.spec().content_index is False and index_of(again.gate) is None
    on = Workspace(url, storage_options=options, observations=f"s3://{bucket}/obs")
    assert isinstance(index_of(pickle.loads(pickle.dumps(on)).gate), ContentIndex)
    # None decides per store: off where reading is the cheap part; True there is refused.
    assert index_of(Workspace("memory://content-index-off").gate) is None
    with pytest.raises(FsError) as refused:
        Workspace("memory://content-index-on", content_index=True)
    assert refused.value.code is ErrorCode.FS_INVALID_ARGUMENT
    assert refused.value.reason == Reason.content_index_unsupported


def _listed_equals_read(backend: Backend, keys: list[str]) -> None:
    walk = backend.walk_versioned("")
    assert walk is not None
    listed = {e.key: v for e, v in walk}
    for key in keys:
        assert listed[key] is not None and listed[key] == backend.read(key).version, key
        assert str(listed[key]) == str(backend.read(key).version)


def test_s3_lists_the_version_a_read_returns_multipart_too(
        moto_s3: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # The server runs in this process: parts of 1 KiB, not S3's 5 MiB, make a multipart
    # ETag all the same.
    monkeypatch.setattr("moto.s3.models.S3_UPLOAD_PART_MIN_SIZE", 256)
    bucket = moto_s3.create_bucket()
    client = moto_s3.client()
    client.put_object(Bucket=bucket, Key="plain.txt", Body=b"plain")
    upload = client.create_multipart_upload(Bucket=bucket, Key="multi.bin")["UploadId"]
    parts = []
    for number, data in ((1, b"a" * 1024), (2, b"tail")):
        etag = client.upload_part(Bucket=bucket, Key="multi.bin", PartNumber=number,
                                  UploadId=upload, Body=data)["ETag"]
        parts.append({"PartNumber": number, "ETag": etag})
    client.complete_multipart_upload(Bucket=bucket, Key="multi.bin", UploadId=upload,
                                     MultipartUpload={"Parts": parts})
    ws = Workspace(f"s3://{bucket}", storage_options=moto_s3.storage_options())
    assert ws.backend.read("multi.bin").version.value.endswith('-2"')
    _listed_equals_read(ws.backend, ["plain.txt", "multi.bin"])


def test_gcs_lists_the_generation_not_the_metageneration(fake_gcs: Any) -> None:
    endpoint, proxy = fake_gcs
    bucket = endpoint.create_bucket()
    admin = endpoint.filesystem()
    admin.pipe(f"{bucket}/a/x.txt", body(1, True))
    admin.pipe(f"{bucket}/a/y.txt", body(2, False))
    admin.setxattrs(f"{bucket}/a/x.txt", note="metadata only")  # a new metageneration
    ws = Workspace(f"gs://{bucket}", storage_options=proxy_options(endpoint, proxy))
    _listed_equals_read(ws.backend, ["a/x.txt", "a/y.txt"])


def proxy_options(endpoint: Any, proxy: Any) -> dict[str, Any]:
    return {**endpoint.storage_options(), "endpoint_url": proxy.url}


def test_an_outside_writer_between_two_indexed_greps_is_seen_on_gcs(fake_gcs: Any) -> None:
    endpoint, proxy = fake_gcs
    bucket = endpoint.create_bucket()
    admin = endpoint.filesystem()
    admin.pipe({f"{bucket}/r/d{i % 3}/f{i:02d}.txt": body(i, i % 5 == 0) for i in range(15)})
    url, options = f"gs://{bucket}/r", proxy_options(endpoint, proxy)
    indexed = Workspace(url, storage_options=options)
    plain = Workspace(url, storage_options=options, content_index=False, policy=False)
    assert grep(indexed) == grep(plain)
    admin.pipe(f"{bucket}/r/d1/f01.txt", body(1, True))
    admin.pipe(f"{bucket}/r/d0/f00.txt", f"new {NEEDLE} line\n".encode())
    admin.pipe(f"{bucket}/r/d2/f05.txt", body(5, False))
    proxy.take()
    second = grep(indexed)
    files_read = [p for m, p in proxy.take() if m == "GET" and "/o/r%2Fd" in p]
    assert len(files_read) == 4  # the match left unchanged (f10), the 3 changed files
    assert second == grep(plain)
    assert "/d1/f01.txt" in second and "/d2/f05.txt" not in second
    assert f"new {NEEDLE} line" in second and f"{NEEDLE} = 0" not in second


def test_azure_lists_the_etag_a_read_returns(azurite: Any) -> None:
    container = azurite.create_container()
    ws = Workspace(f"az://{container}", storage_options=azurite.storage_options())
    ctx = ws.context("a")
    assert ctx.tools.execute("write", {"file_path": "/d/a.txt", "content": "x\n"}).ok
    assert index_of(ws.gate) is not None
    _listed_equals_read(ws.backend, ["d/a.txt"])

"""A long walk listed as several name ranges at once (the indexed grep's walk), on S3
(the moto server, and moto's in-process ``mock_aws`` under a hypothesis property) and GCS
(fake-gcs-server): exactly the names, sizes and versions of the walk followed page by
page, in its order, whatever the tree; a walk of one page costs one request; a range
whose listing fails raises after every name before it; a walk closed early leaves no
listing behind.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fsseam import Workspace
from fsseam.backends.objectstore import ranges
from fsseam.errors import ErrorCode, FsError

TREE = [
    "a.txt", "b", "b-/z.txt", "b.c/y.txt", "b/0/deep/f.txt", "b/x.txt",
    "c/d/e.txt", "é/x.txt", "z.txt",
    *(f"src/pkg/m{m}/f{f}.py" for m in range(6) for f in range(3)),
    "src/pkg/z.py", "src/readme.md",
]
"""Names that sort around a directory's own (``b``, ``b-``, ``b.c`` and ``b/``), a deep
file, a non-ASCII name, and one top directory holding most of the files."""
MARKER = "c/"
"""A directory marker some tools create: an object the walk does not show."""

Walked = list[tuple[str, int | None, Any]]


def walked(ws: Workspace, key: str, *, split: bool) -> Walked:
    return [(e.key, e.size, v)
            for e, v in ws.backend.walk_versioned(key, split=split)]  # type: ignore[attr-defined]


def spy_ranges(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Where each ranged listing started (the real call is made)."""
    client = ws.backend._client  # type: ignore[attr-defined]
    real = client.list_objects_after
    afters: list[str] = []

    def spy(prefix: str, **kw: Any) -> Any:
        afters.append(kw["after"])
        return real(prefix, **kw)

    monkeypatch.setattr(client, "list_objects_after", spy)
    return afters


@pytest.fixture(params=["s3", "gcs"])
def store(request: pytest.FixtureRequest) -> Callable[[dict[str, bytes]], Workspace]:
    """Write a tree below ``r/`` of a fresh bucket; a workspace over ``r`` listing three
    names a page."""
    if request.param == "s3":
        moto = request.getfixturevalue("moto_s3")
        bucket = moto.create_bucket()
        client = moto.client()

        def put(objects: dict[str, bytes]) -> Workspace:
            for name, data in objects.items():
                client.put_object(Bucket=bucket, Key=f"r/{name}", Body=data)
            return Workspace(f"s3://{bucket}/r",
                             storage_options={**moto.storage_options(), "list_page_size": 3})
        return put
    endpoint, _ = request.getfixturevalue("fake_gcs")
    bucket = endpoint.create_bucket()
    admin = endpoint.filesystem()

    def put_gcs(objects: dict[str, bytes]) -> Workspace:
        admin.pipe({f"{bucket}/r/{name}": data for name, data in objects.items()})
        return Workspace(f"gs://{bucket}/r",
                         storage_options={**endpoint.storage_options(), "list_page_size": 3})
    return put_gcs


def test_a_split_walk_is_the_walk_page_by_page(
        store: Callable[[dict[str, bytes]], Workspace], monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = store({**{name: name.encode() * (i + 1) for i, name in enumerate(TREE)},
                MARKER: b""})
    afters = spy_ranges(ws, monkeypatch)
    for key, below in (("", TREE), ("src", [n for n in TREE if n.startswith("src/")])):
        plain = walked(ws, key, split=False)
        assert [k for k, _, _ in plain] == sorted(below)  # the marker is no file
        assert all(v is not None for _, _, v in plain)
        afters.clear()
        assert walked(ws, key, split=True) == plain
        # The rest was listed as ranges: the first from the first page's last name, the
        # others from the directories found (``src/pkg``'s modules for ``src``).
        assert len(afters) >= 3 and len(set(afters)) >= 3


def test_a_walk_of_one_page_is_one_request(
        store: Callable[[dict[str, bytes]], Workspace], monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = store({"d/a.txt": b"a", "d/b.txt": b"b"})
    afters = spy_ranges(ws, monkeypatch)
    client = ws.backend._client  # type: ignore[attr-defined]
    pages: list[str] = []
    real = client.list_objects
    monkeypatch.setattr(client, "list_objects",
                        lambda prefix, **kw: pages.append(prefix) or real(prefix, **kw))
    assert [k for k, _, _ in walked(ws, "d", split=True)] == ["d/a.txt", "d/b.txt"]
    assert len(pages) == 1 and afters == []


def test_a_range_that_fails_raises_after_every_name_before_it(
        store: Callable[[dict[str, bytes]], Workspace], monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = store({name: b"x" for name in TREE})
    plain = [k for k, _, _ in walked(ws, "", split=False)]
    client = ws.backend._client  # type: ignore[attr-defined]
    real = client.list_objects_after
    cut = "src/pkg/m3/"  # (the store's names are below the workspace's prefix, ``r/``)

    def failing(prefix: str, **kw: Any) -> Any:
        if kw["after"] >= f"r/{cut}"[:-1]:
            raise PermissionError("listing refused")  # what the store's library raises
        return real(prefix, **kw)

    monkeypatch.setattr(client, "list_objects_after", failing)
    monkeypatch.setattr(ranges, "boundaries", lambda *a: [f"r/{cut}"])
    got: list[str] = []
    with pytest.raises(FsError) as failed:
        got.extend(e.key for e, _ in ws.backend.walk_versioned("", split=True))  # type: ignore[attr-defined]
    assert failed.value.code is ErrorCode.FS_PERMISSION_DENIED
    assert got == [k for k in plain if k < cut]


def test_a_walk_closed_early_leaves_no_listing_behind(
        store: Callable[[dict[str, bytes]], Workspace]) -> None:
    ws = store({name: b"x" for name in TREE})
    walk = ws.backend.walk_versioned("", split=True)  # type: ignore[attr-defined]
    taken = [next(walk)[0].key for _ in range(5)]  # into the ranges (three names a page)
    assert taken == sorted(TREE)[:5]
    walk.close()
    for thread in threading.enumerate():
        if thread.name.startswith("fsseam-list"):
            thread.join(timeout=30)  # each ends at its next page, or at once if it waits
            assert not thread.is_alive()


NAMES = st.lists(st.sampled_from(["a", "a.b", "a-", "b", "é", "0"]), min_size=1,
                 max_size=4).map("/".join)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(names=st.sets(NAMES, min_size=1, max_size=30), page=st.integers(1, 4),
       key=st.sampled_from(["", "a", "a/a"]))
def test_any_tree_splits_into_the_same_walk_under_mock_aws(
        names: set[str], page: int, key: str) -> None:
    moto = pytest.importorskip("moto", reason="moto is not installed (backends/s3[test])")
    boto3 = pytest.importorskip("boto3", reason="boto3 is not installed")
    with moto.mock_aws():
        s3 = boto3.client("s3", region_name="us-east-1")
        s3.create_bucket(Bucket="walks")
        for name in names:
            s3.put_object(Bucket="walks", Key=f"p/{name}", Body=name.encode())
        ws = Workspace("s3://walks/p", storage_options={"list_page_size": page})
        try:
            plain = walked(ws, key, split=False)
        except FsError:
            return  # ``key`` is no directory of this tree: nothing to split
        assert walked(ws, key, split=True) == plain


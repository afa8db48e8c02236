"""Branches on every store: agents guarded on a branch, reads over main, merges that publish
exactly or write nothing, rewind, discard, collect, and the requests each costs.

Every store: memory (isolated), local files, S3 (moto server), GCS (fake-gcs-server behind
a counting proxy), Azure (Azurite behind a counting proxy); a fresh bucket or container per
test. Assertions are on exact bytes read from the store itself and on exact codes.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from fsseam import ErrorCode, FsError, Workspace
from fsseam.backends.base import Backend
from fsseam.branches import PREFIX

STORES = ["memory", "local", "s3", "gcs", "azure"]
COUNTED = ["s3", "gcs", "azure"]

Take = Callable[[], list[tuple[str, str]]]


@dataclass
class Rig:
    """A fresh workspace on one store, and (on an emulator) the requests it received since
    the last ``take``."""

    kind: str
    ws: Workspace
    url: str
    options: dict[str, Any] | None
    take: Take | None = None


def _counted(take_all: Take, where: str) -> Take:
    def take() -> list[tuple[str, str]]:
        return [(m, p) for m, p in take_all() if f"/{where}/" in p or p.endswith(f"/{where}")]

    return take


def make_rig(request: pytest.FixtureRequest, kind: str, tmp_path: Path) -> Rig:
    if kind == "memory":
        url = f"memory://branches-{uuid.uuid4().hex}"
        options: dict[str, Any] | None = {"global_store": False}
        return Rig(kind, Workspace(url, options, load_entry_points=False), url, options)
    if kind == "local":
        root = tmp_path / "root"
        root.mkdir()
        return Rig(kind, Workspace(str(root)), str(root), None)
    if kind == "s3":
        moto = request.getfixturevalue("moto_s3")
        bucket = moto.create_bucket()
        url, options = f"s3://{bucket}/r", moto.storage_options()
        log = moto.log
        seen = [len(log.to_bucket(bucket))]

        def take_s3() -> list[tuple[str, str]]:
            got = log.to_bucket(bucket)
            new, seen[0] = got[seen[0]:], len(got)
            return new

        return Rig(kind, Workspace(url, storage_options=options), url, options, take_s3)
    if kind == "gcs":
        endpoint, proxy = request.getfixturevalue("fake_gcs")
        bucket = endpoint.create_bucket()
        url = f"gs://{bucket}/r"
        options = {**endpoint.storage_options(), "endpoint_url": proxy.url}
        proxy.take()
        return Rig(kind, Workspace(url, storage_options=options), url, options,
                   _counted(proxy.take, bucket))
    az = request.getfixturevalue("azurite")
    container = az.create_container()
    url, options = f"az://{container}/r", az.storage_options()
    az.take()
    return Rig(kind, Workspace(url, storage_options=options), url, options,
               _counted(az.take, container))


@pytest.fixture(params=STORES)
def rig(request: pytest.FixtureRequest, tmp_path: Path) -> Rig:
    return make_rig(request, request.param, tmp_path)


@pytest.fixture(params=COUNTED)
def counted(request: pytest.FixtureRequest, tmp_path: Path) -> Rig:
    return make_rig(request, request.param, tmp_path)


# -- helpers -------------------------------------------------------------------------------


def ok(res: Any) -> Any:
    assert res.ok, res.text
    return res


def code(res: Any) -> ErrorCode | None:
    return res.error.code if res.error is not None else None


def stored(backend: Backend) -> dict[str, bytes]:
    """Every file of main and its bytes, read from the store itself (the reserved folders
    left out)."""
    return {e.key: backend.read(e.key).data for e in backend.walk("")
            if e.kind == "file" and not e.key.startswith(".fsseam")}


def reserved(backend: Backend) -> dict[str, bytes]:
    """Every object of the branches' folder and its bytes."""
    try:
        return {e.key: backend.read(e.key).data for e in backend.walk(PREFIX)
                if e.kind == "file"}
    except FsError as e:
        assert e.code is ErrorCode.FS_NOT_FOUND
        return {}


def seed(ws: Workspace, files: dict[str, str]) -> dict[str, bytes]:
    """Main holds exactly ``files`` (written by a setup owner); returns main's bytes."""
    ctx = ws.context("setup")
    for path, text in files.items():
        ok(ctx.tools.execute("write", {"file_path": path, "content": text}))
    got = stored(ws.backend)
    assert got == {p.lstrip("/"): t.encode() for p, t in files.items()}
    return got


def branch_files(br: Workspace) -> dict[str, bytes]:
    """Every file as the branch reads it."""
    return stored(br.backend)


def show(ctx: Any, path: str) -> str:
    return str(ctx.show(path))


def edit(ctx: Any, path: str, old: str, new: str) -> Any:
    return ctx.tools.execute("edit", {"file_path": path, "old_string": old, "new_string": new})


# -- requests counted at the emulators -----------------------------------------------------


def measure(rig: Rig) -> dict[str, list[tuple[str, str]]]:
    """The requests of each operation, main's and the branch's, on one file each."""
    assert rig.take is not None
    ws = rig.ws
    seed(ws, {"/f0.txt": "zero\nmore\n", "/f1.txt": "one\nmore\n"})
    br = ws.branch("feat")
    a, b = ws.context("a"), br.context("b")
    rig.take()
    got: dict[str, list[tuple[str, str]]] = {}

    def run(label: str, call: Callable[[], Any]) -> None:
        ok(call())
        got[label] = rig.take()  # type: ignore[misc]

    run("main read", lambda: a.tools.execute("read", {"file_path": "/f0.txt"}))
    run("main edit", lambda: edit(a, "/f0.txt", "more", "MORE"))
    run("main write", lambda: a.tools.execute("write", {"file_path": "/f0.txt",
                                                        "content": "zero\n"}))
    run("main write new", lambda: a.tools.execute("write", {"file_path": "/m.txt",
                                                            "content": "new\n"}))
    run("branch read", lambda: b.tools.execute("read", {"file_path": "/f1.txt"}))
    run("branch first edit", lambda: edit(b, "/f1.txt", "more", "MORE"))
    run("branch read changed", lambda: b.tools.execute("read", {"file_path": "/f1.txt"}))
    run("branch edit changed", lambda: edit(b, "/f1.txt", "MORE", "more2"))
    run("branch write changed", lambda: b.tools.execute("write", {"file_path": "/f1.txt",
                                                                  "content": "one\n"}))
    run("branch write new", lambda: b.tools.execute("write", {"file_path": "/n.txt",
                                                              "content": "new\n"}))
    show(b, "/f0.txt")
    rig.take()
    run("branch delete", lambda: b.tools.execute("delete", {"file_path": "/f0.txt"}))
    return got


def target(path: str) -> str:
    """What a request addressed: the branch's ref, a manifest, a blob, a main file (its
    key), a listing or, for a GCS upload (the name travels in its body), ``upload``."""
    from urllib.parse import unquote

    path = unquote(path)
    if path.startswith("/upload/"):
        return "upload"
    for part in ("refs", "manifests", "blobs", "journals"):
        if f"/{PREFIX}/{part}/" in path:
            return part.removesuffix("s")
    if "/r/" not in path:
        return "list"  # the bucket's (container's) listing, with the key as its prefix
    return path.rpartition("/r/")[2]


def verbs(requests: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [("read" if m in ("GET", "HEAD") else "write", target(p)) for m, p in requests]


# What each operation costs, in order: ``main`` is a file of main's, ``base`` the base
# bytes kept for a file's first change on the branch.
COSTS: dict[str, list[tuple[str, str]]] = {
    "main read": [("read", "f0.txt")],
    "main edit": [("read", "f0.txt"), ("write", "f0.txt")],
    "main write": [("write", "f0.txt")],
    # main's read plus the ref (the manifest is immutable, cached by id)
    "branch read": [("read", "ref"), ("read", "f1.txt")],
    # the edit's read through the branch, then manifest, base blob, new blob, ref: the
    # base's bytes come from that read, not from main again
    "branch first edit": [("read", "ref"), ("read", "f1.txt"), ("write", "manifest"),
                          ("write", "blob"), ("write", "blob"), ("write", "ref")],
    "branch read changed": [("read", "ref"), ("read", "blob")],
    "branch edit changed": [("read", "ref"), ("read", "blob"), ("write", "manifest"),
                            ("write", "blob"), ("write", "ref")],
    # a write of a file already changed, on the head this process last saw: three writes
    "branch write changed": [("write", "manifest"), ("write", "blob"), ("write", "ref")],
    # a new file: main's own check that no directory is there (a listing) ...
    "main write new": [("read", "list"), ("write", "m.txt")],
    # ... and on a branch, main asked whether it has the file (create-only), the same
    # check, then the three writes
    "branch write new": [("read", "n.txt"), ("read", "list"), ("write", "manifest"),
                         ("write", "blob"), ("write", "ref")],
    # a deletion of a file main's version of was read: no bytes, no main request
    "branch delete": [("write", "manifest"), ("write", "ref")],
}


def test_requests_per_operation_on_a_branch_and_on_main(counted: Rig) -> None:
    got = {label: verbs(reqs) for label, reqs in measure(counted).items()}
    expected = COSTS
    if counted.kind == "gcs":
        expected = {label: [(v, "upload" if v == "write" else t) for v, t in reqs]
                    for label, reqs in COSTS.items()}
    assert got == expected
    # the aims: a branch read of a file it did not change is main's read plus one small
    # request; a branch write of a file it changed is three writes
    assert len(got["branch read"]) == len(got["main read"]) + 1
    assert len(got["branch write changed"]) == 3
    assert len(got["branch edit changed"]) == len(got["main edit"]) + 3

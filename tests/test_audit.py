"""The audit trail records every change, whatever made it: one entry each, with the
version before and after as the store names them and the sha256 of the exact bytes.

On memory, local disk (both with fsseam's kept history) and moto S3 (a versioned bucket):
the file tools, the guarded fsspec filesystem, undo, restore, the memory tool, a branch's
changes, a merge into main and a rewind. Also: the spec carries ``audit=`` to another
process's Workspace, a trail at a URL or an fsspec instance, and the cost in requests (one
more per change, counted by moto).
"""

from __future__ import annotations

import hashlib
import json
import pickle
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import fsspec
import pytest

from fsseam import AuditEntry, AuditTrail, Context, History, Version, Workspace
from fsseam.audit import FOLDER

STORES = ["memory", "local", "s3"]


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def make(kind: str, request: pytest.FixtureRequest, tmp_path: Path,
         **kw: Any) -> Workspace:
    """A workspace on ``kind`` with a trail in its own store; versions kept everywhere."""
    if kind == "memory":
        return Workspace(f"memory://audit-{uuid.uuid4().hex}", {"global_store": False},
                         load_entry_points=False, history=History(), **kw)
    if kind == "local":
        root = tmp_path / "root"
        root.mkdir(exist_ok=True)
        return Workspace(str(root), history=History(path=str(tmp_path / "kept")),
                         load_entry_points=False, **kw)
    moto = request.getfixturevalue("moto_s3")
    bucket = moto.create_bucket(versioned=True)
    return Workspace(f"s3://{bucket}/r", storage_options=moto.storage_options(),
                     load_entry_points=False, **kw)


@pytest.fixture(params=STORES)
def ws(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Workspace]:
    yield make(request.param, request, tmp_path, audit=True)


def run(ctx: Context, tool: str, call_id: str, **args: Any) -> str:
    res = ctx.tools.execute(tool, args, call_id=call_id)
    assert res.ok, res.text
    return res.text


def entries(ws: Workspace) -> list[AuditEntry]:
    assert ws.audit is not None
    return ws.audit.entries()


def now(ws: Workspace, path: str) -> Version:
    return ws.backend.read(path.lstrip("/")).version


def check(e: AuditEntry, ws: Workspace, *, tool: str, call_id: str | None, path: str,
          action: str, before: Version | str | None, data: bytes | None,
          owner: str | None = "alice", branch: str | None = None) -> None:
    """``e`` names this change exactly: the version after is the store's own now (unless
    deleted), the version before is the precondition's (``"overwrite"``/``"create"``: none),
    the sha256 is of ``data``."""
    assert (e.tool, e.call_id, e.path, e.action, e.owner, e.branch) == (
        tool, call_id, path, action, owner, branch)
    if before == "create":
        assert (e.precondition, e.version_before) == ("create_only", None)
    elif before == "overwrite":
        assert (e.precondition, e.version_before) == ("overwrite", None)
    else:
        assert isinstance(before, Version)
        assert e.precondition == "if_match"
        assert Version.model_validate(e.version_before) == before
    if data is None:
        assert (e.version_after, e.sha256) == (None, None)
    else:
        assert e.sha256 == sha(data)
        if branch is None:
            assert Version.model_validate(e.version_after) == now(ws, path)


def test_every_tool_change_appends_one_entry(ws: Workspace) -> None:
    ctx = ws.context("alice")
    run(ctx, "write", "c1", file_path="/a.txt", content="one\n")
    [e0] = entries(ws)
    check(e0, ws, tool="write", call_id="c1", path="/a.txt", action="create",
          before="create", data=b"one\n")
    assert (e0.seq, e0.prev) == (0, None)
    v1 = now(ws, "/a.txt")

    run(ctx, "edit", "c2", file_path="/a.txt", old_string="one", new_string="two")
    e1 = entries(ws)[-1]
    check(e1, ws, tool="edit", call_id="c2", path="/a.txt", action="write", before=v1,
          data=b"two\n")
    assert (e1.seq, e1.prev) == (1, e0.hash)
    v2 = now(ws, "/a.txt")

    run(ctx, "move", "c3", source_path="/a.txt", destination_path="/b.txt")
    copy, gone = entries(ws)[2:]
    check(copy, ws, tool="move", call_id="c3", path="/b.txt", action="copy",
          before="create", data=b"two\n")
    assert copy.source == "/a.txt"
    check(gone, ws, tool="move", call_id="c3", path="/a.txt", action="delete", before=v2,
          data=None)

    v3 = now(ws, "/b.txt")
    run(ctx, "delete", "c4", file_path="/b.txt")
    check(entries(ws)[-1], ws, tool="delete", call_id="c4", path="/b.txt",
          action="delete", before=v3, data=None)
    assert [e.seq for e in entries(ws)] == [0, 1, 2, 3, 4]
    assert ws.audit is not None and ws.audit.verify(ws.backend).ok


def test_undo_restore_memory_and_the_filesystem_are_recorded(ws: Workspace) -> None:
    ctx = ws.context("alice")
    run(ctx, "str_replace_editor", "e1", command="create", path="/c.txt", file_text="v0\n")
    run(ctx, "str_replace_editor", "e2", command="str_replace", path="/c.txt",
        old_str="v0", new_str="v1")
    v1 = now(ws, "/c.txt")
    run(ctx, "str_replace_editor", "e3", command="undo_edit", path="/c.txt")
    check(entries(ws)[-1], ws, tool="str_replace_editor", call_id="e3", path="/c.txt",
          action="write", before=v1, data=b"v0\n")

    listed = ctx.tools.execute("history", {"file_path": "/c.txt"}).value.entries
    v0 = now(ws, "/c.txt")
    run(ctx, "restore", "r1", file_path="/c.txt", version=listed[1].id)
    check(entries(ws)[-1], ws, tool="restore", call_id="r1", path="/c.txt",
          action="write", before=v0, data=b"v1\n")

    run(ctx, "memory", "m1", command="create", path="/memories/n.md", file_text="note\n")
    check(entries(ws)[-1], ws, tool="memory", call_id="m1", path="/memories/n.md",
          action="create", before="create", data=b"note\n")

    fs = ctx.filesystem()
    count = len(entries(ws))
    fs.pipe_file("/d.bin", b"\x00\x01raw")
    [e] = entries(ws)[count:]
    assert e.tool in ("create", "write_bytes")  # the backend's operation, or ctx.fs's call
    check(e, ws, tool=e.tool, call_id=None, path="/d.bin", action="create", before="create",
          data=b"\x00\x01raw")
    assert ws.audit is not None and ws.audit.verify(ws.backend).ok


def test_ctx_fs_outside_a_tool_names_the_operation(ws: Workspace) -> None:
    ctx = ws.context("bob")
    ctx.fs.write("/x.txt", "x\n")
    [e] = entries(ws)
    assert (e.owner, e.call_id, e.path, e.action) == ("bob", None, "/x.txt", "create")
    assert e.tool in ("write", "create")  # the seam's scope, or the backend's operation
    assert e.sha256 == sha(b"x\n")


def test_nothing_is_recorded_for_a_refused_change(ws: Workspace) -> None:
    ctx = ws.context("alice")
    run(ctx, "write", "c1", file_path="/a.txt", content="one\n")
    other = ws.context("eve")
    res = other.tools.execute("write", {"file_path": "/a.txt", "content": "x\n"},
                              call_id="c2")
    assert not res.ok
    assert [e.call_id for e in entries(ws)] == ["c1"]


def test_the_trail_is_hidden_and_refused(ws: Workspace) -> None:
    ctx = ws.context("alice")
    run(ctx, "write", "c1", file_path="/a.txt", content="one\n")
    assert FOLDER not in run(ctx, "ls", "l1", path="/")
    res = ctx.tools.execute("write", {"file_path": f"/{FOLDER}/entries/000000000001.json",
                                      "content": "{}"})
    assert not res.ok
    assert [e.seq for e in entries(ws)] == [0]


@pytest.mark.parametrize("kind", ["memory", "local"])
def test_branch_changes_merge_and_rewind(kind: str, request: pytest.FixtureRequest,
                                         tmp_path: Path) -> None:
    ws = make(kind, request, tmp_path, audit=True)
    main = ws.context("alice")
    run(main, "write", "c1", file_path="/a.txt", content="base\n")
    bot = ws.branch("f").context("bot")
    run(bot, "read", "b0", file_path="/a.txt")
    run(bot, "edit", "b1", file_path="/a.txt", old_string="base", new_string="bot")
    e = entries(ws)[-1]
    check(e, ws, tool="edit", call_id="b1", path="/a.txt", action="write",
          before=now(ws, "/a.txt"), data=b"bot\n", owner="bot", branch="f")
    head = ws.branches()[0].head

    v_main = now(ws, "/a.txt")
    ws.merge("f", owner="carol")
    merged = entries(ws)[-1]
    check(merged, ws, tool="merge", call_id=None, path="/a.txt", action="write",
          before=v_main, data=b"bot\n", owner="carol")

    run(bot, "read", "b2", file_path="/a.txt")
    run(bot, "edit", "b3", file_path="/a.txt", old_string="bot", new_string="again")
    later = ws.branches()[0].head
    ws.rewind("f", head)
    rewound = entries(ws)[-1]
    assert (rewound.tool, rewound.path, rewound.action, rewound.branch) == (
        "rewind", "branch:f", "rewind", None)
    assert rewound.version_before == {"kind": "branch-head", "value": later, "detail": None}
    assert rewound.version_after == {"kind": "branch-head", "value": head, "detail": None}

    run(main, "read", "c2", file_path="/a.txt")
    run(main, "edit", "c3", file_path="/a.txt", old_string="bot", new_string="main")
    run(bot, "read", "b4", file_path="/a.txt")
    run(bot, "edit", "b5", file_path="/a.txt", old_string="bot", new_string="branch")
    before = ws.branches()[0].head
    rebased = ws.rebase("f", owner="dave")
    e = entries(ws)[-1]
    assert (e.tool, e.path, e.action, e.owner) == ("rebase", "branch:f", "rebase", "dave")
    assert e.version_before == {"kind": "branch-head", "value": before, "detail": None}
    assert e.version_after == {"kind": "branch-head", "value": rebased.head, "detail": None}

    ws.discard("f")
    e = entries(ws)[-1]
    assert (e.tool, e.path, e.action, e.version_after) == ("discard", "branch:f", "discard",
                                                            None)
    assert e.version_before == {"kind": "branch-head", "value": rebased.head, "detail": None}
    assert [(e.call_id, e.tool, e.branch) for e in entries(ws)] == [
        ("c1", "write", None), ("b1", "edit", "f"), (None, "merge", None),
        ("b3", "edit", "f"), (None, "rewind", None), ("c3", "edit", None),
        ("b5", "edit", "f"), (None, "rebase", None), (None, "discard", None)]
    assert [e.seq for e in entries(ws)] == list(range(9))
    assert ws.audit is not None and ws.audit.verify(ws.backend).ok


def test_the_spec_carries_the_trail(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    trail = tmp_path / "trail"
    trail.mkdir()
    ws = Workspace(str(root), audit=str(trail), load_entry_points=False,
                   observations=str(tmp_path / "seen.json"))
    again = pickle.loads(pickle.dumps(ws.context("alice")))
    run(again, "write", "c1", file_path="/a.txt", content="one\n")
    [e] = AuditTrail.open(str(trail)).entries()
    assert (e.path, e.owner, e.sha256) == ("/a.txt", "alice", sha(b"one\n"))
    assert not (root / FOLDER).exists()  # kept where audit= points, not in the workspace
    assert sorted(p.name for p in (trail / "entries").iterdir()) == ["000000000000.json"]


def test_a_trail_on_an_fsspec_instance(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    target = fsspec.filesystem("dir", path=f"/audit-{uuid.uuid4().hex}",
                               fs=fsspec.filesystem("memory"))
    ws = Workspace(str(root), audit=target, load_entry_points=False)
    run(ws.context("alice"), "write", "c1", file_path="/a.txt", content="one\n")
    assert ws.audit is not None
    [e] = ws.audit.entries()
    assert e.path == "/a.txt"
    assert target.cat_file("/entries/000000000000.json") == e.to_bytes()


def test_filters(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    ws = Workspace(str(root), audit=True, load_entry_points=False)
    run(ws.context("alice"), "write", "c1", file_path="/d/a.txt", content="a\n")
    run(ws.context("bob"), "write", "c2", file_path="/b.txt", content="b\n")
    trail = AuditTrail.of_workspace(str(root))
    assert [e.call_id for e in trail.entries(owner="bob")] == ["c2"]
    assert [e.call_id for e in trail.entries(path="/d/")] == ["c1"]
    assert [e.call_id for e in trail.entries(path="b.txt")] == ["c2"]


def test_one_change_costs_exactly_one_more_request(moto_s3: Any) -> None:
    """Measured at moto: the same edit with and without audit differs by one PUT (the
    entry, create-only), once the process knows the trail's next number."""
    costs = {}
    for audit in (False, True):
        bucket = moto_s3.create_bucket()
        ws = Workspace(f"s3://{bucket}/r", storage_options=moto_s3.storage_options(),
                       load_entry_points=False, content_index=False, audit=audit)
        ctx = ws.context("alice")
        run(ctx, "write", "w0", file_path="/warm.txt", content="warm\n")  # first use: listing
        run(ctx, "write", "w1", file_path="/a.txt", content="one\n")
        run(ctx, "read", "r1", file_path="/a.txt")
        moto_s3.log.clear()
        run(ctx, "edit", "e1", file_path="/a.txt", old_string="one", new_string="two")
        costs[audit] = list(moto_s3.log.to_bucket(bucket))
    plain, audited = costs[False], costs[True]
    assert len(audited) == len(plain) + 1, (plain, audited)
    assert [m for m, p in audited if f"/{FOLDER}/" not in p] == [m for m, _ in plain]
    [(method, path)] = [(m, p) for m, p in audited if f"/{FOLDER}/" in p]
    assert method == "PUT" and path.endswith(f"/{FOLDER}/entries/000000000002.json")


@pytest.mark.parametrize("kind", ["memory", "local"])
def test_a_branch_workspace_audits_main_once(kind: str, request: pytest.FixtureRequest,
                                             tmp_path: Path) -> None:
    """A branch over storage the workspace holds (memory, private) is opened over main's
    audited backend as it is: main's changes from it (a merge it finishes) are recorded
    once, its own once, naming the branch."""
    from fsseam.audit import AuditedBackend

    ws = make(kind, request, tmp_path, audit=True)
    layers = []
    backend: Any = ws.branch("f").backend
    while backend is not None:
        if isinstance(backend, AuditedBackend):
            layers.append(backend.branch)
        backend = getattr(backend, "inner", None)
    assert layers == ["f", None]


def test_the_cli_reads_a_trail_kept_elsewhere(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    from fsseam.cli import main

    root, kept = tmp_path / "root", tmp_path / "kept"
    root.mkdir()
    kept.mkdir()
    ws = Workspace(str(root), audit=str(kept), load_entry_points=False)
    run(ws.context("alice"), "write", "c1", file_path="/a.txt", content="one\n")
    assert main(["audit", str(root), "--trail", str(kept), "--json"]) == 0
    [e] = json.loads(capsys.readouterr().out)
    assert (e["path"], e["call_id"], e["sha256"]) == ("/a.txt", "c1", sha(b"one\n"))
    assert main(["audit", str(root), "--trail", str(kept), "--verify"]) == 0
    assert "ok: the chain is whole" in capsys.readouterr().out
    assert main(["audit", str(root)]) == 0  # the workspace's own folder: no trail there
    assert capsys.readouterr().out.strip() == "no entries"
    assert main(["audit", str(tmp_path / "absent")]) == 2
    assert "cannot open the audit trail" in capsys.readouterr().err


def test_workspaces_of_one_process_share_the_next_number(moto_s3: Any) -> None:
    """One listing per process: a second workspace over the same trail appends with one
    request from its first change on, while the first is open."""
    bucket = moto_s3.create_bucket()
    url, options = f"s3://{bucket}/r", moto_s3.storage_options()
    first = Workspace(url, storage_options=options, load_entry_points=False,
                      content_index=False, audit=True)
    run(first.context("alice"), "write", "w0", file_path="/a.txt", content="a\n")
    second = Workspace(url, storage_options=options, load_entry_points=False,
                       content_index=False, audit=True)
    assert second.audit is first.audit
    moto_s3.log.clear()
    run(second.context("bob"), "write", "w1", file_path="/b.txt", content="b\n")
    trail = [(m, p) for m, p in moto_s3.log.to_bucket(bucket) if f"/{FOLDER}/" in p]
    assert trail == [("PUT", f"/{bucket}/r/{FOLDER}/entries/000000000001.json")]


def test_a_patch_of_several_files_is_an_entry_per_change(ws: Workspace) -> None:
    ctx = ws.context("alice")
    run(ctx, "write", "c1", file_path="/old.txt", content="x\n")
    v_old = now(ws, "/old.txt")
    patch = ("*** Begin Patch\n*** Add File: new.txt\n+fresh\n"
             "*** Delete File: old.txt\n*** End Patch")
    run(ctx, "apply_patch", "p1", patch=patch)
    made = {e.path: e for e in entries(ws)[1:]}
    assert set(made) == {"/new.txt", "/old.txt"}
    check(made["/new.txt"], ws, tool="apply_patch", call_id="p1", path="/new.txt",
          action="create", before="create", data=b"fresh\n")
    check(made["/old.txt"], ws, tool="apply_patch", call_id="p1", path="/old.txt",
          action="delete", before=v_old, data=None)

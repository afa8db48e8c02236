"""Requests of a branch's reads, changes, review and merge: counted at the S3 server and,
on local disk, as the files opened and published; docs/branches.md's table is checked
against them."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fsseam import Workspace

ROOT = Path(__file__).resolve().parent.parent
REF = ".fsseam-branches/refs/feat.json"
N = 10
"""Files of the diff and the merge measured (the table states them per N)."""


def _requests(moto: Any, bucket: str) -> list[tuple[str, str]]:
    """(method, key or folder) of the requests to the workspace since the last clear."""
    prefix = f"/{bucket}/w/"
    out = []
    for method, path in moto.log.to_bucket(bucket):
        key = path.removeprefix(prefix)
        for folder in ("manifests", "blobs"):
            if key.startswith(f".fsseam-branches/{folder}/"):
                key = f".fsseam-branches/{folder}/"
        out.append((method, key))
    return out


def test_a_first_change_after_a_read_reads_main_once(moto_s3: Any) -> None:
    """The agent's read of main's file through the branch keeps its bytes as the base of
    the file's first change: the edit's own read is main's only GET of the file."""
    bucket = moto_s3.create_bucket()
    ws = Workspace(f"s3://{bucket}/w", storage_options=moto_s3.storage_options())
    original = b"one\ntwo\nthree\n"
    assert ws.context("main").tools.execute(
        "write", {"file_path": "/a.txt", "content": original.decode()}).ok
    agent = ws.branch("feat").context("agent")

    moto_s3.log.clear()
    assert agent.tools.execute("read", {"file_path": "/a.txt"}).ok
    assert _requests(moto_s3, bucket) == [("GET", REF), ("GET", "a.txt")]

    moto_s3.log.clear()
    edit = {"file_path": "/a.txt", "old_string": "one", "new_string": "ONE"}
    assert agent.tools.execute("edit", edit).ok
    assert _requests(moto_s3, bucket) == [
        ("GET", REF), ("GET", "a.txt"),  # the edit reads the file as it is now
        ("PUT", ".fsseam-branches/manifests/"),
        ("PUT", ".fsseam-branches/blobs/"), ("PUT", ".fsseam-branches/blobs/"),
        ("PUT", REF),
    ]
    base = hashlib.sha256(original).hexdigest()
    kept = ws.backend.read(f".fsseam-branches/blobs/{base[:2]}/{base}").data
    assert kept == original
    assert ws.backend.read("a.txt").data == original
    assert ws.branch("feat").backend.read("a.txt").data == b"ONE\ntwo\nthree\n"


# -- the docs' table ---------------------------------------------------------------------------
Counts = Callable[[], Counter[str]]


def scenario(ws: Workspace, clear: Callable[[], None], counts: Counts,
             n: int) -> dict[str, dict[str, int]]:
    """Each row of docs/branches.md's table, as measured: its label -> counts by kind."""
    rows: dict[str, dict[str, int]] = {}

    def step(label: str, call: Callable[[], Any]) -> Any:
        clear()
        result = call()
        rows[label] = dict(counts())
        assert getattr(result, "ok", True), (label, result)
        return result

    def tool(ctx: Any, name: str, **args: str) -> Any:
        return ctx.tools.execute(name, args)

    setup, person = ws.context("setup"), ws.context("person")
    for i in range(n):
        tool(setup, "write", file_path=f"/d/f{i}.txt", content=f"line {i}\nsecond\nthird\n")
    tool(setup, "write", file_path="/a.txt", content="one\ntwo\nthree\n")
    step("main: read", lambda: tool(person, "read", file_path="/a.txt"))
    step("main: write", lambda: tool(person, "write", file_path="/a.txt",
                                     content="one\ntwo\nthree\nfour\n"))
    step("main: edit", lambda: tool(person, "edit", file_path="/a.txt",
                                    old_string="four", new_string="4"))
    b = ws.branch("feat").context("agent")
    step("branch: read of a file the branch did not change",
         lambda: tool(b, "read", file_path="/a.txt"))
    step("branch: first change of a file (an edit)",
         lambda: tool(b, "edit", file_path="/a.txt", old_string="one", new_string="ONE"))
    step("branch: read of a file the branch changed",
         lambda: tool(b, "read", file_path="/a.txt"))
    step("branch: edit of a file the branch changed",
         lambda: tool(b, "edit", file_path="/a.txt", old_string="two", new_string="TWO"))
    step("branch: write of a file the branch changed",
         lambda: tool(b, "write", file_path="/a.txt", content="ONE\nTWO\n3\n"))
    step("branch: write of a new file", lambda: tool(b, "write", file_path="/b.txt",
                                                     content="b\n"))
    ws.discard("feat")
    many = ws.branch("many").context("agent")
    for i in range(n):
        tool(many, "read", file_path=f"/d/f{i}.txt")
        tool(many, "edit", file_path=f"/d/f{i}.txt", old_string="second", new_string="2nd")
    review = step("diff of N files", lambda: ws.diff("many"))
    step("merge of N files", lambda: ws.merge("many", owner="r", expect=review.token))
    three = ws.branch("three").context("agent")
    tool(three, "read", file_path="/a.txt")
    tool(three, "edit", file_path="/a.txt", old_string="one", new_string="ONE")
    tool(person, "read", file_path="/a.txt")
    tool(person, "edit", file_path="/a.txt", old_string="three", new_string="THREE")
    merged = step("merge of 1 file main changed too (three ways)",
                  lambda: ws.merge("three", owner="r"))
    assert merged.merged == ["/a.txt"]
    assert ws.backend.read("a.txt").data == b"ONE\ntwo\nTHREE\n4\n"
    moved = ws.branch("moved").context("agent")
    tool(moved, "read", file_path="/a.txt")
    tool(moved, "edit", file_path="/a.txt", old_string="ONE", new_string="1")
    tool(person, "read", file_path="/a.txt")
    tool(person, "edit", file_path="/a.txt", old_string="THREE", new_string="3")
    rebased = step("rebase of 1 file main changed too",
                   lambda: ws.rebase("moved", owner="r"))
    assert rebased.rebased == ["/a.txt"]
    assert ws.branch("moved").backend.read("a.txt").data == b"1\ntwo\n3\n4\n"
    return rows


class FileOperations:
    """Local disk's operations as a Python audit hook sees them: files opened to read and
    files published (renamed or linked into place). Left out: directories opened on the
    way, the once-per-directory sweep of temp files left by killed writers, and reads
    outside the workspace."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.counts: Counter[str] = Counter()
        self.on = False
        sys.addaudithook(self.hook)  # for the life of the process: run it in its own

    def hook(self, event: str, args: tuple[Any, ...]) -> None:
        if not self.on:
            return
        if event == "open":
            path, mode, flags = args
            if mode is not None or not isinstance(flags, int) or flags & os.O_DIRECTORY:
                return  # Python's open() (the backend uses os.open), or a directory
            name = os.fsdecode(path) if isinstance(path, (str, bytes)) else ""
            if ".fsseam-" in name and name.endswith(".tmp"):
                return  # the sweep of temp files
            if not flags & (os.O_WRONLY | os.O_RDWR):
                self.counts["read"] += 1
        elif event in ("os.rename", "os.replace", "os.link"):
            self.counts["published"] += 1

    def clear(self) -> None:
        self.counts = Counter()
        self.on = True

    def taken(self) -> Counter[str]:
        self.on = False
        return Counter({"read": self.counts["read"], "published": self.counts["published"]})


def local_rows(n: int) -> dict[str, dict[str, int]]:
    with tempfile.TemporaryDirectory() as root:
        ops = FileOperations(root)
        return scenario(Workspace(root), ops.clear, ops.taken, n)


def table() -> dict[str, tuple[str, str]]:
    """The table of docs/branches.md: operation -> (S3 cell, local cell)."""
    text = (ROOT / "docs" / "branches.md").read_text(encoding="utf-8")
    section = text.split("## Requests per operation", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0] not in ("operation", "---"):
            rows[cells[0]] = (cells[1], cells[2])
    return rows


def number(cell: str, n: int) -> int:
    """The count a cell states, for N = n: ``5 (...)``, ``3N + 2 (...)`` or ``N + 3``."""
    found = re.match(r"(\d*)N \+ (\d+)|(\d+)", cell)
    assert found, cell
    if found[3] is not None:
        return int(found[3])
    return int(found[1] or 1) * n + int(found[2])


def test_the_s3_column_is_what_the_server_counts(moto_s3: Any) -> None:
    bucket = moto_s3.create_bucket()
    ws = Workspace(f"s3://{bucket}/w", storage_options=moto_s3.storage_options())
    rows = scenario(ws, moto_s3.log.clear, lambda: moto_s3.log.counts(bucket), N)
    stated = table()
    assert sorted(stated) == sorted(rows)
    assert {k: sum(v.values()) for k, v in rows.items()} == {
        k: number(s3, N) for k, (s3, _) in stated.items()}


def test_the_local_column_is_what_the_disk_sees() -> None:
    """In a process of its own: an audit hook cannot be removed."""
    code = ("import json, sys; from tests.test_branch_requests import local_rows; "
            f"print(json.dumps(local_rows({N})))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, check=True)
    rows = json.loads(done.stdout.strip().splitlines()[-1])
    stated = {k: tuple(number(part, N) for part in local.split(" / "))
              for k, (_, local) in table().items()}
    assert {k: (v["read"], v["published"]) for k, v in rows.items()} == stated

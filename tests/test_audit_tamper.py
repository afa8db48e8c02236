"""Every kind of tampering with a trail is found by verify and named: the first entry
changed, removed, reordered, forged (a version or sha256 the store contradicts, with the
chain recomputed so the hashes alone look whole), and a cut tail, without an anchor (where
the store shows a file at a version no entry names) and with one.

On moto S3 (a versioned bucket: every entry is checked against the version it names) and
local disk without kept history (only the entries whose file is still at their version
can be checked by their bytes). Through the Python API and the CLI (exit codes, --json).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from fsseam import AuditEntry, AuditTrail, Overwrite, Workspace
from fsseam.audit import open_target
from fsseam.cli import main


@dataclass
class Rig:
    ws: Workspace
    url: str
    options: dict[str, Any]
    anchors: str
    """Where anchors go (another bucket, another directory)."""

    @property
    def trail(self) -> AuditTrail:
        assert self.ws.audit is not None
        return self.ws.audit

    def cli(self, *args: str) -> list[str]:
        opts = [f"-o{k}={json.dumps(v) if not isinstance(v, str) else v}"
                for k, v in self.options.items()]
        return [self.url, *args, *opts]


@pytest.fixture(params=["local", "s3"])
def rig(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Rig]:
    if request.param == "local":
        root = tmp_path / "root"
        root.mkdir()
        (tmp_path / "anchors").mkdir()
        ws = Workspace(str(root), audit=True, load_entry_points=False)
        rig = Rig(ws, str(root), {}, str(tmp_path / "anchors"))
    else:
        moto = request.getfixturevalue("moto_s3")
        bucket = moto.create_bucket(versioned=True)
        url, options = f"s3://{bucket}/r", moto.storage_options()
        ws = Workspace(url, storage_options=options, audit=True, load_entry_points=False,
                       content_index=False)
        rig = Rig(ws, url, options, f"s3://{moto.create_bucket()}")
    ctx = rig.ws.context("alice")
    for call, tool, args in [
        ("c0", "write", {"file_path": "/a.txt", "content": "a0\n"}),        # 0
        ("c1", "edit", {"file_path": "/a.txt", "old_string": "a0", "new_string": "a1"}),
        ("c2", "write", {"file_path": "/b.txt", "content": "b0\n"}),        # 2
        ("c3", "edit", {"file_path": "/a.txt", "old_string": "a1", "new_string": "a2"}),
        ("c4", "write", {"file_path": "/c.txt", "content": "c0\n"}),        # 4
        ("c5", "write", {"file_path": "/d.txt", "content": "d0\n"}),        # 5
    ]:
        assert ctx.tools.execute(tool, args, call_id=call).ok
    yield rig


def put(rig: Rig, seq: int, data: bytes) -> None:
    rig.trail.backend.write(rig.trail.entry_key(seq), data, Overwrite())


def rewrite(rig: Rig, seq: int, **changes: Any) -> None:
    """Entry ``seq`` changed, and the chain after it recomputed (hashes and prev links):
    what a tamperer who knows the format does."""
    entries = rig.trail.entries()
    prev = entries[seq - 1].hash if seq else None
    for e in entries[seq:]:
        fixed = e.model_copy(update={**(changes if e.seq == seq else {}), "prev": prev})
        sealed = fixed.sealed()
        put(rig, e.seq, sealed.to_bytes())
        prev = sealed.hash


def first(rig: Rig, anchors: bool = False) -> tuple[str, int]:
    target = open_target(rig.anchors, rig.options if rig.url.startswith("s3") else None)
    report = rig.trail.verify(rig.ws.backend, target if anchors else None)
    assert not report.ok
    assert report.first is not None
    assert report.first.text  # renders from the catalogue
    return report.first.kind, report.first.seq


def test_an_untouched_trail_verifies(rig: Rig, capsys: pytest.CaptureFixture[str]) -> None:
    report = rig.trail.verify(rig.ws.backend)
    assert report.ok and report.entries == 6
    if rig.url.startswith("s3"):
        assert (report.checked, report.not_checkable) == (6, 0)  # every version kept
    else:
        assert (report.checked, report.not_checkable) == (4, 2)  # a.txt's older two
    assert main(["audit", *rig.cli("--verify", "--json")]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["ok"], out["entries"], out["problems"]) == (True, 6, [])
    assert "could have been cut" in out["tail"]


def test_a_changed_entry(rig: Rig, capsys: pytest.CaptureFixture[str]) -> None:
    raw = json.loads(rig.trail.backend.read(rig.trail.entry_key(2)).data)
    raw["owner"] = "mallory"
    put(rig, 2, json.dumps(raw).encode())
    assert first(rig) == ("changed", 2)
    assert main(["audit", *rig.cli("--verify")]) == 1
    assert "FIRST PROBLEM at entry 2 (changed)" in capsys.readouterr().out


def test_a_removed_entry(rig: Rig) -> None:
    rig.trail.backend.delete(rig.trail.entry_key(3))
    assert first(rig) == ("removed", 3)


def test_reordered_entries(rig: Rig) -> None:
    two, three = (rig.trail.backend.read(rig.trail.entry_key(n)).data for n in (2, 3))
    put(rig, 2, three)
    put(rig, 3, two)
    assert first(rig) == ("reordered", 2)


def test_reordered_and_renumbered(rig: Rig) -> None:
    """Swapped, with each entry's number and hash made to fit its new place: the prev
    links still name the old order."""
    entries = rig.trail.entries()
    for seq, e in ((2, entries[3]), (3, entries[2])):
        put(rig, seq, e.model_copy(update={"seq": seq}).sealed().to_bytes())
    assert first(rig) == ("reordered", 2)


def test_a_forged_version_after(rig: Rig) -> None:
    """Entry 1 (a.txt's first edit) names another version, the chain recomputed."""
    e1 = rig.trail.entries()[1]
    assert e1.version_after is not None
    forged = dict(e1.version_after, value="0" * 64 if rig.url[0] == "/" else '"0f0f"')
    rewrite(rig, 1, version_after=forged)
    assert first(rig) == ("contradicted", 1)


def test_a_forged_sha256(rig: Rig) -> None:
    """Entry 3 (a.txt's last edit, the file still at its version): other bytes named."""
    rewrite(rig, 3, sha256="ab" * 32)
    assert first(rig) == ("contradicted", 3)


def test_a_cut_tail_that_changed_a_file_shows_without_an_anchor(rig: Rig) -> None:
    """Entries 3 to 5 cut: a.txt is at a version (entry 3's) no entry names."""
    for seq in (5, 4, 3):
        rig.trail.backend.delete(rig.trail.entry_key(seq))
    assert first(rig) == ("missing", 1)


def test_a_cut_tail_of_new_files_shows_only_with_an_anchor(
        rig: Rig, capsys: pytest.CaptureFixture[str]) -> None:
    """Entries 4 and 5 created c.txt and d.txt: cut, the chain is whole and no file of an
    entry moved on. Only the anchor written before shows it."""
    assert main(["audit", *rig.cli("--anchor", rig.anchors)]) == 0
    assert "anchored entry 5" in capsys.readouterr().out
    for seq in (5, 4):
        rig.trail.backend.delete(rig.trail.entry_key(seq))
    alone = rig.trail.verify(rig.ws.backend)
    assert alone.ok and "could have been cut" in alone.tail  # said, never proven
    assert first(rig, anchors=True) == ("cut", 4)
    assert main(["audit", *rig.cli("--verify", "--anchors", rig.anchors, "--json")]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] is False
    assert out["problems"][0]["kind"] == "cut"
    assert "was cut" in out["problems"][0]["text"]


def test_an_anchored_head_says_so(rig: Rig, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", *rig.cli("--anchor", rig.anchors, "--verify", "--anchors",
                                   rig.anchors)]) == 0
    assert "no tail could have been cut unseen" in capsys.readouterr().out


def test_the_listing(rig: Rig, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", *rig.cli("--path", "/a.txt", "--json")]) == 0
    listed = [AuditEntry.model_validate(e) for e in json.loads(capsys.readouterr().out)]
    assert [e.call_id for e in listed] == ["c0", "c1", "c3"]
    assert main(["audit", *rig.cli("--owner", "nobody")]) == 0
    assert capsys.readouterr().out.strip() == "no entries"
    assert main(["audit", *rig.cli()]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 6 and "alice  edit  write /a.txt" in lines[1]


def test_a_change_made_where_nothing_audited_it(rig: Rig) -> None:
    """b.txt changed behind the trail's back (the backend under the audit), then edited
    through fsseam: the edit replaced a version no entry made."""
    from fsseam.audit import AuditedBackend

    audited = rig.ws.backend
    assert isinstance(audited, AuditedBackend)
    behind = audited.inner
    behind.write("b.txt", b"sneaky\n", Overwrite())
    ctx = rig.ws.context("alice")
    assert ctx.tools.execute("read", {"file_path": "/b.txt"}).ok
    assert ctx.tools.execute("edit", {"file_path": "/b.txt", "old_string": "sneaky",
                                      "new_string": "b1"}, call_id="c6").ok
    assert first(rig) == ("missing", 6)


def test_a_field_added_or_retyped_is_a_change(rig: Rig) -> None:
    raw = json.loads(rig.trail.backend.read(rig.trail.entry_key(4)).data)
    put(rig, 4, json.dumps(dict(raw, note="approved by the CEO")).encode())
    assert first(rig) == ("changed", 4)
    put(rig, 4, json.dumps(dict(raw, seq="4")).encode())
    assert first(rig) == ("changed", 4)

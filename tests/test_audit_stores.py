"""The trail on GCS (fake-gcs-server) and Azure (Azurite): entries name the versions as
those stores do (generations, etags), a copy's sha256 is of the bytes moved, the chain
verifies against the store, and an entry's object is create-only there too."""

from __future__ import annotations

import hashlib

import pytest

from fsseam import Conflict, CreateOnly, Version, Workspace


@pytest.mark.parametrize("kind", ["gcs", "azure"])
def test_a_trail_on_the_other_object_stores(kind: str, request: pytest.FixtureRequest) -> None:
    if kind == "gcs":
        endpoint, _ = request.getfixturevalue("fake_gcs")
        url, options = f"gs://{endpoint.create_bucket()}/r", endpoint.storage_options()
        named = "generation"
    else:
        azurite = request.getfixturevalue("azurite")
        url, options = f"az://{azurite.create_container()}/r", azurite.storage_options()
        named = "etag"
    ws = Workspace(url, storage_options=options, audit=True, load_entry_points=False)
    ctx = ws.context("alice")
    for call, tool, args in [
        ("c1", "write", {"file_path": "/a.txt", "content": "one\n"}),
        ("c2", "edit", {"file_path": "/a.txt", "old_string": "one", "new_string": "two"}),
        ("c3", "move", {"source_path": "/a.txt", "destination_path": "/b.txt"}),
    ]:
        assert ctx.tools.execute(tool, args, call_id=call).ok
    assert ws.audit is not None
    made = ws.audit.entries()
    assert [(e.seq, e.call_id, e.action, e.path) for e in made] == [
        (0, "c1", "create", "/a.txt"), (1, "c2", "write", "/a.txt"),
        (2, "c3", "copy", "/b.txt"), (3, "c3", "delete", "/a.txt")]
    assert made[1].version_before == made[0].version_after
    assert made[2].version_after is not None and made[2].version_after["kind"] == named
    assert made[2].sha256 == hashlib.sha256(b"two\n").hexdigest()
    assert Version.model_validate(made[2].version_after) == ws.backend.read("b.txt").version
    report = ws.audit.verify(ws.backend)
    assert report.ok, [p.text for p in report.problems]
    with pytest.raises(Conflict):
        ws.audit.backend.put_plain(ws.audit.entry_key(0), b"{}", CreateOnly())

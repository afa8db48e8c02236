"""The ``fsseam`` protocol, chained (``fsseam::memory://...``, ``fsseam::s3://...``), found
by fsspec through the package's ``fsspec.specs`` entry point (no registration here), in
this process and from a fresh one."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path
from typing import Any

import fsspec
import pytest

from fsseam import ErrorCode, GuardRefused, Workspace


def _name() -> str:
    return f"chain-{uuid.uuid4().hex[:10]}"


def test_the_protocol_comes_from_the_entry_point() -> None:
    from fsseam.filesystem.chain import FsseamFileSystem

    assert fsspec.get_filesystem_class("fsseam") is FsseamFileSystem


def test_a_chained_url_opens_a_guarded_workspace_at_the_first_name() -> None:
    proj = _name()
    url = f"fsseam::memory://{proj}/d/data.csv"
    with fsspec.open(url, "wb", fsseam={"owner": "person"}) as f:
        f.write(b"a\n1\n")
    fs, path = fsspec.core.url_to_fs(url, fsseam={"owner": "person"})
    assert path == f"/{proj}/d/data.csv"
    assert fs.find(f"/{proj}") == [f"/{proj}/d/data.csv"]
    # The workspace is memory://<proj>: an agent there sees the file at /d/data.csv.
    agent = Workspace(f"memory://{proj}").context("agent")
    assert agent.fs.read("/d/data.csv").lines == ["a", "1"]
    agent.fs.replace("/d/data.csv", "1", "2")
    with pytest.raises(GuardRefused) as caught, fsspec.open(
        url, "wb", fsseam={"owner": "person"}
    ) as f:
        f.write(b"a\n1\n3\n")
    assert caught.value.code is ErrorCode.FS_STALE
    assert caught.value.path == f"/{proj}/d/data.csv"
    assert fsspec.filesystem("memory").cat_file(f"/{proj}/d/data.csv") == b"a\n2\n"
    # One workspace per URL and options: every file of a notebook shares it.
    other, _ = fsspec.core.url_to_fs(f"fsseam::memory://{proj}/e.csv", fsseam={"owner": "x"})
    assert other.context.workspace is fs.context.workspace


def test_root_names_the_workspace_and_outside_it_is_refused() -> None:
    proj = _name()
    opts = {"owner": "me", "root": f"memory://{proj}/sub"}
    with fsspec.open(f"fsseam::memory://{proj}/sub/x.csv", "wb", fsseam=opts) as f:
        f.write(b"x")
    fs, _ = fsspec.core.url_to_fs(f"fsseam::memory://{proj}/sub/x.csv", fsseam=opts)
    assert fs.context.workspace.url == f"memory://{proj}/sub"
    with pytest.raises(GuardRefused) as caught:
        fs.pipe_file(f"/{proj}/elsewhere.csv", b"y")
    assert caught.value.code is ErrorCode.FS_OUTSIDE_ROOT
    assert not fsspec.filesystem("memory").exists(f"/{proj}/elsewhere.csv")


def test_the_owner_is_required_and_named() -> None:
    with pytest.raises(ValueError, match="owner"):
        fsspec.open(f"fsseam::memory://{_name()}/x.csv", "rb").open()


def test_a_chained_url_on_s3(moto_s3: Any) -> None:
    bucket = _name()
    moto_s3.client().create_bucket(Bucket=bucket)
    opts = moto_s3.storage_options()
    url = f"fsseam::s3://{bucket}/d/x.csv"
    with fsspec.open(url, "wb", fsseam={"owner": "person"}, s3=opts) as f:
        f.write(b"a\n1\n")
    agent = Workspace(f"s3://{bucket}", opts).context("agent")
    agent.fs.read("/d/x.csv")
    agent.fs.replace("/d/x.csv", "1", "2")
    with pytest.raises(GuardRefused) as caught, fsspec.open(
        url, "wb", fsseam={"owner": "person"}, s3=opts
    ) as f:
        f.write(b"a\n1\n3\n")
    assert caught.value.code is ErrorCode.FS_STALE and "+2" in (caught.value.diff or "")
    body = moto_s3.client().get_object(Bucket=bucket, Key="d/x.csv")["Body"].read()
    assert body == b"a\n2\n"
    with fsspec.open(url, "rb", fsseam={"owner": "person"}, s3=opts) as f:
        assert f.read() == b"a\n2\n"


# One fresh interpreter runs every scenario (the entry point as an installed package
# offers it, nothing imported or registered beforehand), and prints what it saw.
FRESH = textwrap.dedent(
    """
    import json, sys
    import fsspec, pandas

    local = sys.argv[1]
    seen = {}
    so = {"fsseam": {"owner": "person"}}
    url = "fsseam::memory://fresh/data.csv"
    pandas.DataFrame({"a": [1, 2]}).to_csv(url, index=False, storage_options=so)
    seen["read"] = pandas.read_csv(url, storage_options=so)["a"].tolist()
    try:
        pandas.DataFrame({"a": [9]}).to_csv(
            url, index=False, storage_options={"fsseam": {"owner": "other"}})
    except PermissionError as e:
        seen["refused"] = [type(e).__name__, str(e.code)]
    seen["kept"] = fsspec.filesystem("memory").cat_file("/fresh/data.csv").decode()
    opts = {"owner": "person", "root": local}
    with fsspec.open("fsseam::file://" + local + "/x.txt", "wb", fsseam=opts) as f:
        f.write(b"local")
    seen["local"] = open(local + "/x.txt").read()
    print(json.dumps(seen))
    """
)


def test_the_chained_url_from_a_fresh_process(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-c", FRESH, str(tmp_path)], capture_output=True,
                         text=True, timeout=60, check=False)
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen == {"read": [1, 2], "refused": ["GuardRefused", "FS_NOT_OBSERVED"],
                    "kept": "a\n1\n2\n", "local": "local"}

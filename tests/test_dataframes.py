"""Real libraries through the guarded filesystem: pandas and polars read and write through
``ctx.filesystem()`` and the chained ``fsseam::`` URL, on memory:// and S3 (the moto server,
and moto's in-process ``mock_aws`` as a user's own test runs it).

The notebook race is here too: a person reads a CSV with pandas, an agent edits a cell, and
the person's write of the old frame is refused with the agent's change shown and kept; after
a re-read the person's write lands, and the agent's next edit is stale like after any other
writer's. Every step runs in order in one thread: the interleaving is the test's sequence of
calls, not timing.

polars reads and writes fsspec URLs through its own object-store code, never through fsspec
(a ``memory://`` or ``fsseam::`` URL is a local path to it), so polars goes through file
objects: ``fs.open(path)`` and ``fsspec.open(chained_url)``.
"""

from __future__ import annotations

import gzip
import importlib.metadata
import io
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import fsspec
import pytest

from fsseam import ErrorCode, Workspace
from fsseam import GuardRefused as Refused

from .helpers import s3_reader

pd = pytest.importorskip("pandas", reason="pandas is not installed (pip install -e '.[test]')")
pl = pytest.importorskip("polars", reason="polars is not installed (pip install -e '.[test]')")

CSV = b"city,temp_c\nOslo,3\nLima,19\n"

# The chained URL finds the protocol by the entry point the README's editable install
# registers; an environment installed before it existed says so instead of failing.
INSTALLED = bool(importlib.metadata.entry_points(group="fsspec.specs", name="fsseam"))
chained = pytest.mark.skipif(
    not INSTALLED, reason="the fsspec entry point of fsseam is not installed: pip install -e ."
)


@dataclass
class Store:
    """One workspace's storage: its URL and options, and raw access behind fsseam's back
    (to arrange a file and to check the exact bytes stored)."""

    url: str
    options: dict[str, Any]
    raw: Callable[[str], bytes | None]
    put: Callable[[str, bytes], None]

    @property
    def protocol(self) -> str:
        return self.url.split("://", 1)[0]

    def workspace(self) -> Workspace:
        return Workspace(self.url, storage_options=self.options)

    def chained(self, path: str) -> str:
        return f"fsseam::{self.url}{path}"

    def storage_options(self, owner: str) -> dict[str, Any]:
        """pandas' ``storage_options`` for the chained URL: one dict per layer."""
        return {"fsseam": {"owner": owner}, self.protocol: dict(self.options)}


def _memory_store() -> Store:
    mem = fsspec.filesystem("memory")
    name = f"df-{uuid.uuid4().hex[:12]}"

    def raw(path: str) -> bytes | None:
        key = f"/{name}{path}"
        return bytes(mem.cat_file(key)) if mem.exists(key) else None

    return Store(f"memory://{name}", {}, raw, lambda p, b: mem.pipe_file(f"/{name}{p}", b))


def _s3_store(moto_s3: Any) -> Store:
    s3 = moto_s3.client()
    bucket = moto_s3.create_bucket(client=s3)

    raw = s3_reader(s3, bucket)

    def put(path: str, data: bytes) -> None:
        s3.put_object(Bucket=bucket, Key=path.lstrip("/"), Body=data)

    return Store(f"s3://{bucket}", moto_s3.storage_options(), raw, put)


@pytest.fixture(params=["memory", "s3"])
def store(request: pytest.FixtureRequest) -> Store:
    if request.param == "memory":
        return _memory_store()
    return _s3_store(request.getfixturevalue("moto_s3"))


# -- pandas and polars, reading and writing -----------------------------------------------


def test_pandas_csv_through_the_filesystem(store: Store) -> None:
    fs = store.workspace().context("person").filesystem()
    frame = pd.DataFrame({"city": ["Oslo", "Lima"], "temp_c": [3, 19]})
    with fs.open("/data.csv", "wb") as f:
        frame.to_csv(f, index=False)
    assert store.raw("/data.csv") == CSV

    with fs.open("/data.csv", "rb") as f:
        back = pd.read_csv(f)
    assert back.to_dict("list") == {"city": ["Oslo", "Lima"], "temp_c": [3, 19]}
    back.loc[1, "temp_c"] = 20
    with fs.open("/data.csv", "wb") as f:  # its own write and read: observed, so it lands
        back.to_csv(f, index=False)
    assert store.raw("/data.csv") == b"city,temp_c\nOslo,3\nLima,20\n"


@chained
def test_pandas_csv_through_the_chained_url(store: Store) -> None:
    url, options = store.chained("/data.csv"), store.storage_options("person")
    pd.DataFrame({"city": ["Oslo", "Lima"], "temp_c": [3, 19]}).to_csv(
        url, index=False, storage_options=options
    )
    assert store.raw("/data.csv") == CSV

    frame = pd.read_csv(url, storage_options=options)
    frame.loc[0, "temp_c"] = 4
    frame.to_csv(url, index=False, storage_options=options)
    assert store.raw("/data.csv") == b"city,temp_c\nOslo,4\nLima,19\n"

    # Another owner that read nothing cannot overwrite it: refused, and nothing written.
    frame.loc[1, "temp_c"] = 21
    with pytest.raises(Refused) as refused:
        frame.to_csv(url, index=False, storage_options=store.storage_options("stranger"))
    assert refused.value.code is ErrorCode.FS_NOT_OBSERVED
    assert store.raw("/data.csv") == b"city,temp_c\nOslo,4\nLima,19\n"


@chained
def test_pandas_gzip_through_the_chained_url() -> None:
    """pandas compresses on its side of the file: the guarded file stores the gzip bytes.
    (pandas infers no compression from a chained URL's suffix, as with ``simplecache::``:
    say ``compression=``.)"""
    store = _memory_store()
    url, options = store.chained("/data.csv.gz"), store.storage_options("person")
    frame = pd.DataFrame({"city": ["Oslo", "Lima"], "temp_c": [3, 19]})
    frame.to_csv(url, index=False, compression="gzip", storage_options=options)
    stored = store.raw("/data.csv.gz")
    assert stored is not None and gzip.decompress(stored) == CSV
    back = pd.read_csv(url, compression="gzip", storage_options=options)
    assert back.to_dict("list") == frame.to_dict("list")


@chained
def test_polars_csv_and_parquet_through_file_objects(store: Store) -> None:
    fs = store.workspace().context("person").filesystem()
    frame = pl.DataFrame({"city": ["Oslo", "Lima"], "temp_c": [3, 19]})
    with fs.open("/data.csv", "wb") as f:
        frame.write_csv(f)
        assert store.raw("/data.csv") is None  # buffered: nothing stored before close
    assert store.raw("/data.csv") == CSV
    with fsspec.open(store.chained("/data.csv"), "rb", **store.storage_options("p2")) as f:
        assert pl.read_csv(f).equals(frame)

    expected = io.BytesIO()
    frame.write_parquet(expected)
    with fs.open("/data.parquet", "wb") as f:
        frame.write_parquet(f)
    assert store.raw("/data.parquet") == expected.getvalue()
    with fs.open("/data.parquet", "rb") as f:
        assert pl.read_parquet(f).equals(frame)


@chained
def test_an_exception_inside_the_with_block_writes_nothing() -> None:
    store = _memory_store()
    fs = store.workspace().context("person").filesystem()
    frame = pl.DataFrame({"city": ["Oslo"], "temp_c": [3]})
    with pytest.raises(ZeroDivisionError), fs.open("/new.csv", "wb") as f:
        frame.write_csv(f)
        _ = 1 / 0
    assert store.raw("/new.csv") is None
    assert not fs.exists("/new.csv")

    store.put("/data.csv", CSV)
    with fs.open("/data.csv", "rb") as f:
        pl.read_csv(f)
    with pytest.raises(ZeroDivisionError), fs.open("/data.csv", "wb") as f:
        frame.write_csv(f)
        _ = 1 / 0
    assert store.raw("/data.csv") == CSV
    # Text mode wraps the buffered file: the exception still reaches it.
    with pytest.raises(ZeroDivisionError), fs.open("/data.csv", "w") as f:
        pd.DataFrame({"city": ["Oslo"], "temp_c": [3]}).to_csv(f, index=False)
        _ = 1 / 0
    opened = fsspec.open(store.chained("/data.csv"), "wb", **store.storage_options("person"))
    with pytest.raises(ZeroDivisionError), opened as f:
        frame.write_csv(f)
        _ = 1 / 0
    assert store.raw("/data.csv") == CSV
    with fs.open("/data.csv", "wb") as f:  # the aborted writes left the read's observation
        frame.write_csv(f)
    assert store.raw("/data.csv") == b"city,temp_c\nOslo,3\n"


@chained
def test_pandas_under_mock_aws_in_process() -> None:
    moto = pytest.importorskip("moto", reason="moto is not installed (backends/s3[test])")
    boto3 = pytest.importorskip("boto3", reason="boto3 is not installed")
    with moto.mock_aws():
        s3 = boto3.client("s3", region_name="us-east-1")
        s3.create_bucket(Bucket="frames")
        url, options = "fsseam::s3://frames/data.csv", {"fsseam": {"owner": "person"}}
        pd.DataFrame({"city": ["Oslo", "Lima"], "temp_c": [3, 19]}).to_csv(
            url, index=False, storage_options=options)
        assert s3.get_object(Bucket="frames", Key="data.csv")["Body"].read() == CSV

        fs = Workspace("s3://frames").context("person").filesystem()
        with fs.open("/data.csv", "rb") as f:
            frame = pd.read_csv(f)
        agent = Workspace("s3://frames").context("agent")
        assert agent.tools.execute("read", {"file_path": "/data.csv"}).ok
        assert agent.tools.execute(
            "edit", {"file_path": "/data.csv", "old_string": "Oslo,3", "new_string": "Oslo,4"}
        ).ok
        with pytest.raises(Refused) as refused, fs.open("/data.csv", "wb") as f:
            frame.to_csv(f, index=False)
        assert refused.value.code is ErrorCode.FS_STALE
        assert s3.get_object(Bucket="frames", Key="data.csv")["Body"].read() == (
            b"city,temp_c\nOslo,4\nLima,19\n")


# -- the notebook race ----------------------------------------------------------------------


def test_the_notebook_race(store: Store) -> None:
    store.put("/data.csv", CSV)
    ws = store.workspace()
    fs = ws.context("person").filesystem()
    agent = ws.context("agent")

    # 1. The person loads the frame through the guarded filesystem.
    with fs.open("/data.csv", "rb") as f:
        frame = pd.read_csv(f)
    # 2. The agent reads and changes a cell.
    assert agent.tools.execute("read", {"file_path": "/data.csv"}).ok
    edit = agent.tools.execute(
        "edit", {"file_path": "/data.csv", "old_string": "Lima,19", "new_string": "Lima,20"})
    assert edit.ok, edit.text
    agents = b"city,temp_c\nOslo,3\nLima,20\n"
    # 3. The person writes the frame read before the agent's edit: refused, nothing written.
    frame.loc[0, "temp_c"] = 4
    with pytest.raises(Refused) as refused, fs.open("/data.csv", "wb") as f:
        frame.to_csv(f, index=False)
    error = refused.value
    assert isinstance(error, OSError)
    assert error.code is ErrorCode.FS_STALE
    assert error.path == "/data.csv"
    assert "-Lima,19\n+Lima,20" in error.diff
    assert store.raw("/data.csv") == agents
    # 4. The person reads again, makes the change on the agent's version, writes: it lands.
    with fs.open("/data.csv", "rb") as f:
        frame = pd.read_csv(f)
    frame.loc[0, "temp_c"] = 4
    with fs.open("/data.csv", "wb") as f:
        frame.to_csv(f, index=False)
    persons = b"city,temp_c\nOslo,4\nLima,20\n"
    assert store.raw("/data.csv") == persons
    # 5. The agent's guard sees the person's write as any other writer's.
    stale = agent.tools.execute(
        "edit", {"file_path": "/data.csv", "old_string": "Lima,20", "new_string": "Lima,21"})
    assert stale.error is not None and stale.error.code is ErrorCode.FS_STALE, stale.text
    assert "-Oslo,3\n+Oslo,4" in stale.error.message
    assert store.raw("/data.csv") == persons


@chained
def test_the_notebook_race_through_the_chained_url() -> None:
    """The person's side spelled as a notebook spells it: URLs only."""
    store = _memory_store()
    store.put("/data.csv", CSV)
    url, options = store.chained("/data.csv"), store.storage_options("person")
    agent = store.workspace().context("agent")

    frame = pd.read_csv(url, storage_options=options)
    assert agent.tools.execute("read", {"file_path": "/data.csv"}).ok
    assert agent.tools.execute(
        "edit", {"file_path": "/data.csv", "old_string": "Lima,19", "new_string": "Lima,20"}
    ).ok
    with pytest.raises(Refused) as refused:
        frame.to_csv(url, index=False, storage_options=options)
    assert refused.value.code is ErrorCode.FS_STALE
    assert "+Lima,20" in refused.value.diff
    assert store.raw("/data.csv") == b"city,temp_c\nOslo,3\nLima,20\n"

    frame = pd.read_csv(url, storage_options=options)
    frame.loc[0, "temp_c"] = 4
    frame.to_csv(url, index=False, storage_options=options)
    assert store.raw("/data.csv") == b"city,temp_c\nOslo,4\nLima,20\n"
    stale = agent.tools.execute(
        "edit", {"file_path": "/data.csv", "old_string": "Lima,20", "new_string": "Lima,21"})
    assert stale.error is not None and stale.error.code is ErrorCode.FS_STALE


# -- the chained URL from a fresh process ----------------------------------------------------
# One interpreter for the whole module, several scenarios inside it: it imports pandas and
# fsspec, never fsseam, so the protocol can only come from the installed entry point.

FRESH = r'''
import json, sys
import fsspec, pandas as pd

s3_url, s3_options = sys.argv[1], json.loads(sys.argv[2])
out = {"known": "fsseam" in fsspec.available_protocols(),
       "imported_before_use": "fsseam" in sys.modules}
mem = fsspec.filesystem("memory")

def opts(owner, inner="memory", inner_options=None):
    return {"fsseam": {"owner": owner}, inner: inner_options or {}}

url = "fsseam::memory://fresh/data.csv"
pd.DataFrame({"city": ["Oslo", "Lima"], "temp_c": [3, 19]}).to_csv(
    url, index=False, storage_options=opts("person"))
out["created"] = mem.cat_file("/fresh/data.csv").decode()
frame = pd.read_csv(url, storage_options=opts("person"))
out["class"] = type(fsspec.core.url_to_fs(url, **opts("person"))[0]).__module__

theirs = pd.read_csv(url, storage_options=opts("agent"))
theirs.loc[1, "temp_c"] = 20
theirs.to_csv(url, index=False, storage_options=opts("agent"))
frame.loc[0, "temp_c"] = 4
try:
    frame.to_csv(url, index=False, storage_options=opts("person"))
    out["refused"] = None
except OSError as e:
    out["refused"] = [type(e).__name__, str(e.code.value), e.path, e.diff]
out["kept"] = mem.cat_file("/fresh/data.csv").decode()
frame = pd.read_csv(url, storage_options=opts("person"))
frame.loc[0, "temp_c"] = 4
frame.to_csv(url, index=False, storage_options=opts("person"))
out["written"] = mem.cat_file("/fresh/data.csv").decode()

s3 = "fsseam::" + s3_url + "/data.csv"
pd.DataFrame({"city": ["Oslo"], "temp_c": [3]}).to_csv(
    s3, index=False, storage_options=opts("person", "s3", s3_options))
out["s3_read"] = pd.read_csv(s3, storage_options=opts("person", "s3", s3_options)).to_dict("list")
print(json.dumps(out))
'''


@pytest.fixture(scope="module")
def fresh(moto_s3: Any) -> dict[str, Any]:
    import json
    import subprocess
    import sys

    if not INSTALLED:
        pytest.skip("the fsspec entry point of fsseam is not installed: pip install -e .")
    store = _s3_store(moto_s3)
    done = subprocess.run(
        [sys.executable, "-c", FRESH, store.url, json.dumps(store.options)],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    result["s3_raw"] = store.raw("/data.csv")
    return result


def test_a_fresh_process_finds_the_protocol_by_its_entry_point(fresh: dict[str, Any]) -> None:
    assert fresh["known"] is True
    assert fresh["imported_before_use"] is False
    assert fresh["class"].startswith("fsseam.")
    assert fresh["created"] == CSV.decode()


def test_a_fresh_process_races_through_urls_only(fresh: dict[str, Any]) -> None:
    name, code, path, diff = fresh["refused"]
    # The path as fsspec names it for the chained URL: the inner storage's path.
    assert (name, code, path) == (Refused.__name__, "FS_STALE", "/fresh/data.csv")
    assert "-Lima,19\n+Lima,20" in diff
    assert fresh["kept"] == "city,temp_c\nOslo,3\nLima,20\n"
    assert fresh["written"] == "city,temp_c\nOslo,4\nLima,20\n"


def test_a_fresh_process_writes_to_s3_through_the_chained_url(fresh: dict[str, Any]) -> None:
    assert fresh["s3_raw"] == b"city,temp_c\nOslo,3\n"
    assert fresh["s3_read"] == {"city": ["Oslo"], "temp_c": [3]}

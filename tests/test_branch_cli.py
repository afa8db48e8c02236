"""``fsseam branch list|diff|merge|rebase|rewind|discard|collect`` and ``call --branch``: an
agent works on a branch, a person reviews and merges from the command line. Most runs are
``fsseam.cli.main`` in this process (a memory store is then shared with the test); the
entry point as a process runs on local files and on a moto S3 server."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from fsseam import Workspace
from fsseam.cli import main

ORIGINAL = b"one\ntwo\nthree\n"


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def process(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fsseam.cli", *args], capture_output=True,
                          text=True, encoding="utf-8", timeout=120)


@pytest.fixture
def url() -> str:
    """A memory workspace of the shared store (the one the CLI's Workspace opens too),
    holding x.txt, with branch feat where agent b changed its first line and added
    new/y.txt."""
    url = f"memory://branch-cli-{uuid.uuid4().hex[:12]}"
    ws = Workspace(url)
    assert ws.context("seed").tools.execute(
        "write", {"file_path": "/x.txt", "content": ORIGINAL.decode()}).ok
    b = ws.branch("feat").context("b")
    assert b.tools.execute("read", {"file_path": "/x.txt"}).ok
    assert b.tools.execute("edit", {"file_path": "/x.txt", "old_string": "one",
                                    "new_string": "ONE"}).ok
    assert b.tools.execute("write", {"file_path": "/new/y.txt", "content": "yy\n"}).ok
    return url


def main_files(url: str) -> dict[str, bytes]:
    backend = Workspace(url).backend
    return {e.key: backend.read(e.key).data for e in backend.walk("")
            if e.kind == "file" and not e.key.startswith(".fsseam")}


def test_branch_without_a_verb_prints_its_help(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = cli(capsys, "branch")
    assert (status, out) == (2, "")
    assert err.startswith("usage: fsseam branch")
    for verb in ("list", "diff", "merge", "rebase", "rewind", "discard", "collect"):
        assert f"    {verb} " in err
    with pytest.raises(SystemExit) as exited:
        main(["branch", "merge", "--help"])
    assert exited.value.code == 0
    shown = capsys.readouterr().out
    for flag in ("--owner", "--expect", "--path", "--json", "-o KEY=VALUE"):
        assert flag in shown
    with pytest.raises(SystemExit) as exited:  # argparse: --owner is required
        main(["branch", "merge", "memory://x", "feat"])
    assert exited.value.code == 2


def test_list_shows_each_branch_with_its_owners_and_log(
        url: str, capsys: pytest.CaptureFixture[str]) -> None:
    info = Workspace(url).branches()[0]
    status, out, err = cli(capsys, "branch", "list", url)
    assert (status, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].startswith(f"feat  head {info.head[:12]}  2 file(s) changed  owners: b  "
                               "created ")
    assert [line.split("UTC  ")[1] for line in lines[1:]] == [
        "write /new/y.txt by b", "write /x.txt by b", "create"]
    assert [line.split()[0] for line in lines[1:]] == [h.head[:12] for h in info.log]
    status, out, _ = cli(capsys, "branch", "list", url, "--json")
    assert status == 0
    assert json.loads(out) == [info.model_dump(mode="json")]


def test_diff_prints_the_review_and_its_token(url: str,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    review = Workspace(url).diff("feat")
    status, out, err = cli(capsys, "branch", "diff", url, "feat")
    assert (status, out, err) == (0, review.text, "")  # no color: stdout is no terminal
    assert out.splitlines()[1:] == [
        "added /new/y.txt", "--- a/new/y.txt", "+++ b/new/y.txt", "@@ -0,0 +1 @@", "+yy",
        "changed /x.txt", "--- a/x.txt", "+++ b/x.txt", "@@ -1,3 +1,3 @@", "-one", "+ONE",
        " two", " three"]
    status, out, _ = cli(capsys, "branch", "diff", url, "feat", "--color", "always")
    assert status == 0
    assert "\033[31m-one\033[0m\n\033[32m+ONE\033[0m\n two\n" in out
    assert "\033[1;33mchanged /x.txt\033[0m\n" in out
    status, out, _ = cli(capsys, "branch", "diff", url, "feat", "--json")
    assert status == 0
    assert json.loads(out) == review.model_dump(mode="json")
    assert main_files(url) == {"x.txt": ORIGINAL}


def test_merge_refuses_a_stale_token_then_publishes_the_reviewed_one(
        url: str, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = cli(capsys, "branch", "diff", url, "feat", "--json")
    token = json.loads(out)["token"]
    # The agent changes the branch after the review: the approval no longer holds.
    b = Workspace(url).branch("feat").context("b")
    assert b.tools.execute("write", {"file_path": "/late.txt", "content": "late\n"}).ok
    status, out, err = cli(capsys, "branch", "merge", url, "feat", "--owner", "rev",
                           "--expect", token)
    assert status == 1
    assert out.startswith("merge of feat refused (FS_STALE): ")
    assert err == "fsseam branch merge: not merged (FS_STALE)\n"
    assert main_files(url) == {"x.txt": ORIGINAL}
    _, out, _ = cli(capsys, "branch", "diff", url, "feat", "--json")
    status, out, err = cli(capsys, "branch", "merge", url, "feat", "--owner", "rev",
                           "--expect", json.loads(out)["token"])
    assert (status, err) == (0, "")
    assert out == ("merged feat: 3 file(s) published\n  published /late.txt\n"
                   "  published /new/y.txt\n  published /x.txt\n")
    assert main_files(url) == {"x.txt": b"ONE\ntwo\nthree\n", "new/y.txt": b"yy\n",
                               "late.txt": b"late\n"}


def test_a_conflict_is_refused_with_both_changes_and_nothing_written(
        url: str, capsys: pytest.CaptureFixture[str]) -> None:
    a = Workspace(url).context("a")
    assert a.tools.execute("read", {"file_path": "/x.txt"}).ok
    assert a.tools.execute("edit", {"file_path": "/x.txt", "old_string": "one\ntwo",
                                    "new_string": "uno\ntwo"}).ok
    status, out, err = cli(capsys, "branch", "merge", url, "feat", "--owner", "rev",
                           "--json")
    assert status == 1 and err == "fsseam branch merge: not merged (FS_STALE)\n"
    report = json.loads(out)
    assert (report["ok"], report["code"], report["published"]) == (False, "FS_STALE", [])
    (conflict,) = report["conflicts"]
    assert (conflict["path"], conflict["kind"]) == ("/x.txt", "both_changed")
    assert "+ONE" in conflict["branch_diff"] and "+uno" in conflict["main_diff"]
    _, text, _ = cli(capsys, "branch", "merge", url, "feat", "--owner", "rev")
    assert "  conflict /x.txt (both_changed)\n    branch's change:\n" in text
    assert main_files(url) == {"x.txt": b"uno\ntwo\nthree\n"}


def test_merge_of_chosen_paths_leaves_the_rest_on_the_branch(
        url: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = cli(capsys, "branch", "merge", url, "feat", "--owner", "rev",
                         "--path", "/new/y.txt")
    assert (status, out) == (0, "merged feat: 1 file(s) published\n  published /new/y.txt\n")
    assert main_files(url) == {"x.txt": ORIGINAL, "new/y.txt": b"yy\n"}
    assert [f.path for f in Workspace(url).diff("feat").files] == ["/x.txt"]
    status, out, err = cli(capsys, "branch", "merge", url, "feat", "--owner", "rev",
                           "--path", "/nothing.txt")
    assert status == 1 and out.startswith("merge of feat refused (FS_INVALID_ARGUMENT): ")
    assert err == "fsseam branch merge: not merged (FS_INVALID_ARGUMENT)\n"
    assert main_files(url) == {"x.txt": ORIGINAL, "new/y.txt": b"yy\n"}


def test_rebase_puts_main_s_change_in_with_markers_then_the_resolution_merges(
        url: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Main changes the line the branch changed: ``branch rebase`` leaves git's markers on
    the branch (exit 1: a merge now would publish them), main untouched; resolved on the
    branch, the merge publishes the resolution as is."""
    a = Workspace(url).context("a")
    assert a.tools.execute("read", {"file_path": "/x.txt"}).ok
    assert a.tools.execute("edit", {"file_path": "/x.txt", "old_string": "one",
                                    "new_string": "uno"}).ok
    status, out, err = cli(capsys, "branch", "rebase", url, "feat", "--owner", "rev",
                           "--path", "/nothing.txt")
    assert (status, out) == (1, "")
    assert err.startswith("fsseam branch rebase: Error [FS_INVALID_ARGUMENT]: ")
    status, out, err = cli(capsys, "branch", "rebase", url, "feat", "--owner", "rev")
    assert (status, out) == (1, "rebased feat onto main: 0 file(s) combined, 1 with "
                                "conflicts to resolve on the branch\n  conflict /x.txt\n")
    assert err == "fsseam branch rebase: 1 file(s) to resolve on the branch before a merge\n"
    marked = b"<<<<<<< main\nuno\n=======\nONE\n>>>>>>> branch feat\ntwo\nthree\n"
    branch = Workspace(url).branch("feat")
    assert branch.backend.read("x.txt").data == marked
    assert main_files(url) == {"x.txt": b"uno\ntwo\nthree\n"}
    assert Workspace(url).branches()[0].log[0].operation == "rebase"

    b = branch.context("b")
    assert b.tools.execute("read", {"file_path": "/x.txt"}).ok
    markers = "<<<<<<< main\nuno\n=======\nONE\n>>>>>>> branch feat\n"
    assert b.tools.execute("edit", {"file_path": "/x.txt", "old_string": markers,
                                    "new_string": "UNO\n"}).ok
    # Nothing left that main changed since: a second rebase is a no-op, exit 0.
    status, out, _ = cli(capsys, "branch", "rebase", url, "feat", "--owner", "rev",
                         "--json")
    report = json.loads(out)
    assert status == 0 and (report["rebased"], report["conflicted"]) == ([], [])
    _, out, _ = cli(capsys, "branch", "diff", url, "feat", "--json")
    status, out, err = cli(capsys, "branch", "merge", url, "feat", "--owner", "rev",
                           "--expect", json.loads(out)["token"])
    assert (status, err) == (0, ""), out
    assert main_files(url) == {"x.txt": b"UNO\ntwo\nthree\n", "new/y.txt": b"yy\n"}


def test_a_clean_rebase_exits_0(url: str, capsys: pytest.CaptureFixture[str]) -> None:
    a = Workspace(url).context("a")
    assert a.tools.execute("read", {"file_path": "/x.txt"}).ok
    assert a.tools.execute("edit", {"file_path": "/x.txt", "old_string": "three",
                                    "new_string": "THREE"}).ok
    status, out, err = cli(capsys, "branch", "rebase", url, "feat", "--owner", "rev")
    assert (status, err) == (0, "")
    assert out == ("rebased feat onto main: 1 file(s) combined, 0 with conflicts to resolve "
                   "on the branch\n  rebased /x.txt\n")
    assert Workspace(url).branch("feat").backend.read("x.txt").data == b"ONE\ntwo\nTHREE\n"
    assert main_files(url) == {"x.txt": b"one\ntwo\nTHREE\n"}


def test_rewind_undoes_the_last_turn_and_discard_removes_the_branch(
        url: str, capsys: pytest.CaptureFixture[str]) -> None:
    log = Workspace(url).branches()[0].log
    status, out, err = cli(capsys, "branch", "rewind", url, "feat", "--to", log[1].head[:12])
    assert (status, err) == (0, "")
    assert out == f"rewound feat to {log[1].head[:12]} (1 file(s) changed)\n"
    branch = Workspace(url).branch("feat").context("c")
    assert not branch.tools.execute("read", {"file_path": "/new/y.txt"}).ok
    assert branch.fs.backend.read("x.txt").data == b"ONE\ntwo\nthree\n"
    status, out, err = cli(capsys, "branch", "rewind", url, "feat", "--to", "0123456789ab")
    assert (status, out) == (1, "")
    assert err.startswith("fsseam branch rewind: Error [FS_INVALID_ARGUMENT]: ")

    status, out, _ = cli(capsys, "branch", "discard", url, "feat")
    assert status == 0 and out.startswith("discarded feat")
    assert cli(capsys, "branch", "list", url) == (0, "no branches\n", "")
    status, out, err = cli(capsys, "branch", "discard", url, "feat")
    assert (status, out) == (1, "")
    assert err.startswith("fsseam branch discard: Error [FS_NOT_FOUND]: there is no branch "
                          "'feat'")
    status, out, _ = cli(capsys, "branch", "collect", url, "--grace", "0")
    assert (status, out) == (0, "removed 3 blob(s) and 3 manifest(s); kept 0 blob(s) and 0 "
                                "manifest(s)\n")
    assert main_files(url) == {"x.txt": ORIGINAL}


def test_a_missing_branch_is_reported_and_not_made(capsys: pytest.CaptureFixture[str]) -> None:
    url = f"memory://branch-cli-{uuid.uuid4().hex[:12]}"
    for verb in (["diff", url, "nope"], ["merge", url, "nope", "--owner", "o"]):
        status, out, err = cli(capsys, "branch", *verb)
        assert (status, out) == (1, "")
        assert "Error [FS_NOT_FOUND]: there is no branch 'nope'" in err
    assert cli(capsys, "branch", "list", url) == (0, "no branches\n", "")
    status, _, err = cli(capsys, "branch", "diff", url, "no/slash")
    assert status == 1 and "is not a branch name" in err


def test_calls_on_a_branch_across_processes_then_a_merge(
        root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``fsseam call --branch``: each call a process, the ledger carrying the read; main's
    file is untouched until ``fsseam branch merge``."""
    (root / "x.txt").write_bytes(ORIGINAL)
    ledger = str(tmp_path / "ledger.json")
    on = ("--branch", "feat", "--ledger", ledger)
    read = process("call", str(root), "read", '{"file_path": "/x.txt"}', *on)
    assert read.returncode == 0, read.stderr
    edit = process("call", str(root), "edit", json.dumps(
        {"file_path": "/x.txt", "old_string": "two", "new_string": "TWO"}), *on)
    assert edit.returncode == 0, edit.stdout + edit.stderr
    assert (root / "x.txt").read_bytes() == ORIGINAL
    assert cli(capsys, "call", str(root), "read", '{"file_path": "/x.txt"}', "--branch",
               "feat") == (0, "     1\tone\n     2\tTWO\n     3\tthree\n", "")
    assert cli(capsys, "call", str(root), "ls", '{"path": "/"}') == (
        0, "/x.txt  (14 bytes)\n", "")

    diff = process("branch", "diff", str(root), "feat")
    assert diff.returncode == 0 and "-two\n+TWO\n" in diff.stdout
    assert "\033[" not in diff.stdout
    token = diff.stdout.split("review token ")[1].split()[0]
    status, out, err = cli(capsys, "branch", "merge", str(root), "feat", "--owner", "rev",
                           "--expect", token)
    assert (status, err) == (0, ""), out
    assert (root / "x.txt").read_bytes() == b"one\nTWO\nthree\n"


def test_diff_then_merge_with_the_token_on_s3(moto_s3: Any,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """On a moto S3 server, the endpoint given as -o options (the diff and the merge each
    a process of its own): a change on main after the review makes its token refused; the
    next review's token publishes."""
    bucket = moto_s3.create_bucket()
    url = f"s3://{bucket}/proj"
    options = moto_s3.storage_options()
    flags = [a for k, v in options.items() for a in ("-o", f"{k}={v}")]
    ws = Workspace(url, storage_options=options)
    a = ws.context("a")
    assert a.tools.execute("write", {"file_path": "/x.txt", "content": "one\nmid\ntwo\n"}).ok
    assert a.tools.execute("write", {"file_path": "/z.txt", "content": "z\n"}).ok
    b = ws.branch("feat").context("b")
    assert b.tools.execute("read", {"file_path": "/x.txt"}).ok
    assert b.tools.execute("edit", {"file_path": "/x.txt", "old_string": "one",
                                    "new_string": "ONE"}).ok

    diff = process("branch", "diff", url, "feat", "--json", *flags)
    assert diff.returncode == 0, diff.stderr
    token = json.loads(diff.stdout)["token"]
    assert ws.backend.read("x.txt").data == b"one\nmid\ntwo\n"
    # Main moves on a file of the review after it: the approval is refused.
    assert a.tools.execute("read", {"file_path": "/x.txt"}).ok
    assert a.tools.execute("edit", {"file_path": "/x.txt", "old_string": "two",
                                    "new_string": "TWO"}).ok
    status, out, _ = cli(capsys, "branch", "merge", url, "feat", "--owner", "rev",
                         "--expect", token, *flags)
    assert status == 1
    assert out.startswith("merge of feat refused (FS_STALE): ")
    assert ws.backend.read("x.txt").data == b"one\nmid\nTWO\n"

    status, again, _ = cli(capsys, "branch", "diff", url, "feat", *flags)
    assert "[main changed it since: the merge combines both changes]" in again
    token = again.split("review token ")[1].split()[0]
    merged = process("branch", "merge", url, "feat", "--owner", "rev", "--expect", token,
                     *flags)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert merged.stdout == "merged feat: 1 file(s) published, 1 three ways\n  published /x.txt\n"
    assert ws.backend.read("x.txt").data == b"ONE\nmid\nTWO\n"
    assert ws.backend.read("z.txt").data == b"z\n"

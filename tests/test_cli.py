"""The ``fsseam`` command line, run as subprocesses (``python -m fsseam.cli``)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from fsseam import Ledger, Workspace
from fsseam.mcp import ToolServer
from fsseam.observations.texts import (
    MAX_TEXT_BYTES,
    MAX_TOTAL_BYTES,
    KeptText,
    load_texts,
    save_texts,
    texts_path,
)
from fsseam.versions import Version

COMMANDS = ["demo", "mcp", "call", "schema"]


def fsseam(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fsseam.cli", *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        input=stdin,
        timeout=120,
    )


def call(root: Path, tool: str, args: dict[str, object], *extra: str) -> (
    subprocess.CompletedProcess[str]
):
    return fsseam("call", str(root), tool, json.dumps(args), *extra)


# -- call and the ledger -------------------------------------------------------------------


def test_a_read_in_one_call_authorizes_a_write_in_the_next(root: Path, tmp_path: Path) -> None:
    (root / "notes.md").write_bytes(b"old\n")
    ledger = tmp_path / "ledger.json"

    read = call(root, "read", {"file_path": "/notes.md"}, "--ledger", str(ledger))
    assert read.returncode == 0, read.stderr
    assert read.stdout == "     1\told\n"

    write = call(
        root, "write", {"file_path": "/notes.md", "content": "new\n"}, "--ledger", str(ledger)
    )
    assert write.returncode == 0, write.stdout + write.stderr
    assert (root / "notes.md").read_bytes() == b"new\n"

    data = json.loads(ledger.read_text(encoding="utf-8"))
    assert data["format"] == Ledger().format
    stored = Ledger.model_validate(data)
    assert set(stored.owners) == {"agent"}
    assert list(stored.owners["agent"]) == ["notes.md"]
    # (.ledger.json.texts beside it is the text of what was read, kept on purpose)
    assert not list(tmp_path.glob(".ledger.json.*.tmp")), "the temp file was left behind"


def test_a_write_without_a_read_is_refused(root: Path, tmp_path: Path) -> None:
    (root / "notes.md").write_bytes(b"keep me\r\n")
    ledger = tmp_path / "ledger.json"

    res = call(
        root, "write", {"file_path": "/notes.md", "content": "lost\n"}, "--ledger", str(ledger)
    )
    assert res.returncode == 1
    assert res.stdout.startswith("Error [FS_NOT_OBSERVED]: ")
    assert (root / "notes.md").read_bytes() == b"keep me\r\n"
    assert Ledger.model_validate_json(ledger.read_text(encoding="utf-8")).format == 1


def test_owners_have_separate_observations(root: Path, tmp_path: Path) -> None:
    (root / "notes.md").write_bytes(b"x\n")
    ledger = str(tmp_path / "ledger.json")
    assert call(root, "read", {"file_path": "/notes.md"}, "--ledger", ledger).returncode == 0
    other = call(
        root, "edit", {"file_path": "/notes.md", "old_string": "x", "new_string": "y"},
        "--ledger", ledger, "--owner", "someone-else",
    )
    assert other.returncode == 1
    assert other.stdout.startswith("Error [FS_NOT_OBSERVED]: ")


@pytest.mark.parametrize(
    "content",
    [
        b"{not json",
        b"",
        b"[]",
        b'{"owners": {}}',
        b'{"format": 99, "owners": {}}',
        b'{"format": true, "owners": {}}',
        b'{"format": 1, "owners": {"agent": {"notes.md": 3}}}',
    ],
)
def test_an_unusable_ledger_is_a_usage_error_and_left_alone(
    root: Path, tmp_path: Path, content: bytes
) -> None:
    (root / "notes.md").write_bytes(b"data\n")
    ledger = tmp_path / "ledger.json"
    ledger.write_bytes(content)

    res = call(root, "read", {"file_path": "/notes.md"}, "--ledger", str(ledger))
    assert res.returncode == 2
    assert res.stdout == ""
    assert "ledger" in res.stderr
    assert ledger.read_bytes() == content
    assert (root / "notes.md").read_bytes() == b"data\n"


def test_call_without_a_ledger_and_from_stdin(root: Path) -> None:
    res = fsseam(
        "call", str(root), "write", "-", stdin='{"file_path": "/a.txt", "content": "hi"}'
    )
    assert res.returncode == 0, res.stderr
    assert (root / "a.txt").read_bytes() == b"hi"


def test_call_usage_errors(root: Path) -> None:
    unknown = fsseam("call", str(root), "no_such_tool", "{}")
    assert unknown.returncode == 2
    assert "no_such_tool" in unknown.stderr

    missing_root = fsseam("call", str(root / "missing"), "read", '{"file_path": "/a"}')
    assert missing_root.returncode == 2
    assert missing_root.stdout == ""

    bad_option = fsseam("call", str(root), "read", "{}", "-o", "no-equals-sign")
    assert bad_option.returncode == 2

    not_json = fsseam("call", str(root), "read", "{oops")
    assert not_json.returncode == 2
    assert not_json.stdout == ""
    # The catalogue's sentence (a model calling a tool gets the same), and what was given.
    assert not_json.stderr.startswith("fsseam call: error: arguments are not valid JSON (")
    assert not_json.stderr.endswith(" The argument was '{oops'.\n")

    not_object = fsseam("call", str(root), "read", '["/a.md"]')
    assert not_object.returncode == 2
    assert not_object.stdout == ""
    assert not_object.stderr == (
        "fsseam call: error: arguments must be a JSON object, not an array.\n"
    )


def test_unknown_tool_in_call_is_a_usage_error_listing_the_tools(root: Path) -> None:
    res = fsseam("call", str(root), "remove_file", '{"file_path": "/a.md"}')
    assert res.returncode == 2
    assert res.stdout == ""
    assert res.stderr == (
        "fsseam call: error: there is no tool named 'remove_file'. The tools are: read, "
        "write, edit, str_replace_editor, ls, glob, grep, delete, move, multi_edit, "
        "apply_patch, memory, history, restore. Call one of them.\n"
    )


@pytest.mark.parametrize("command", [["schema"], ["demo"], ["call", "ROOT", "read", "BIG"]])
def test_a_closed_stdout_ends_quietly(root: Path, command: list[str]) -> None:
    """`fsseam schema | head`: the reader goes away; no traceback, exit 128 + SIGPIPE."""
    (root / "big.txt").write_text("x" * 100 + "\n" * 1, encoding="utf-8")
    args = [
        str(root) if a == "ROOT" else '{"file_path": "/big.txt"}' if a == "BIG" else a
        for a in command
    ]
    proc = subprocess.Popen(
        [sys.executable, "-m", "fsseam.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # before the child has written anything: its first write fails
    err = proc.stderr.read()
    proc.stderr.close()
    assert proc.wait(timeout=120) == 141
    assert err == b""


def test_read_only_call_refuses_writes(root: Path) -> None:
    res = fsseam(
        "call", str(root), "write", '{"file_path": "/a.txt", "content": "x"}', "--read-only"
    )
    assert res.returncode == 1
    assert res.stdout.startswith("Error [FS_READ_ONLY]: ")
    assert not (root / "a.txt").exists()


# -- demo, schema, help --------------------------------------------------------------------


def test_demo_on_memory() -> None:
    res = fsseam("demo")
    assert res.returncode == 0, res.stderr
    assert "Error [FS_STALE]" in res.stdout
    lines = res.stdout.splitlines()
    assert any(line.startswith("@@ ") for line in lines)
    assert any(line.startswith("+- tag the release (v1.0)") for line in lines)


def test_demo_on_a_local_directory(root: Path) -> None:
    res = fsseam("demo", str(root))
    assert res.returncode == 0, res.stderr
    assert (root / "notes.md").read_text(encoding="utf-8").splitlines() == [
        "# Launch checklist",
        "",
        "- write the release notes (done)",
        "- tag the release (v1.0)",
        "- announce it on the blog",
    ]
    again = fsseam("demo", str(root))
    assert again.returncode == 2
    assert "already has /notes.md" in again.stderr


@pytest.mark.skipif(
    not all(importlib.util.find_spec(m) for m in ("fsseam_s3", "moto")),
    reason="fsseam-s3 and moto are not installed (pip install -e 'backends/s3[test]')",
)
def test_demo_on_s3_against_moto() -> None:
    res = fsseam("demo", "--backend", "s3")
    assert res.returncode == 0, res.stderr
    assert "versions are etag" in res.stdout
    assert res.stdout.count("Error [FS_STALE]") == 2
    assert any(line.startswith("@@ ") for line in res.stdout.splitlines())
    assert "moto S3 server stopped" in res.stderr


@pytest.mark.parametrize("dialect", ["openai", "anthropic", "json"])
def test_schema_prints_the_library_schemas(dialect: str) -> None:
    res = fsseam("schema", "--dialect", dialect)
    assert res.returncode == 0, res.stderr
    expected = Workspace("memory://test-cli-schema").context("x").tools.schemas(dialect)  # type: ignore[arg-type]
    assert json.loads(res.stdout) == expected


@pytest.mark.parametrize("command", [[], *[[c] for c in COMMANDS]])
def test_help(command: list[str]) -> None:
    res = fsseam(*command, "--help")
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("usage: fsseam")
    for flag in {"call": ["--ledger", "--owner", "-o"],
                 "mcp": ["--owner", "--read-only", "--tools"],
                 "schema": ["--dialect", "--tools"], "demo": ["--backend"]}.get(
                     "".join(command), []):
        assert flag in res.stdout


def test_no_command_is_a_usage_error() -> None:
    res = fsseam()
    assert res.returncode == 2
    assert "usage: fsseam" in res.stderr


def test_mcp_without_the_sdk_names_the_install_command(root: Path) -> None:
    code = (
        "import sys; sys.modules['mcp'] = None\n"
        "import fsseam, fsseam.mcp, fsseam.cli\n"
        f"sys.exit(fsseam.cli.main(['mcp', {str(root)!r}]))\n"
    )
    res = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert res.returncode == 2
    assert "pip install 'fsseam[mcp]'" in res.stderr
    assert res.stdout == ""


def test_undo_across_calls_with_a_ledger_and_a_history_directory(
    root: Path, tmp_path: Path
) -> None:
    """Each call is its own process: the ledger remembers the agent's changes, the history
    directory keeps the versions they replaced."""
    ledger, kept = tmp_path / "agent.ledger", tmp_path / "kept"
    opts = ("--ledger", str(ledger), "--history-dir", str(kept))
    (root / "n.md").write_text("one\n")
    assert call(root, "read", {"file_path": "/n.md"}, *opts).returncode == 0
    res = call(root, "edit", {"file_path": "/n.md", "old_string": "one", "new_string": "1"},
               *opts)
    assert res.returncode == 0, res.stdout + res.stderr
    assert (root / "n.md").read_text() == "1\n"
    res = call(root, "str_replace_editor", {"command": "undo_edit", "path": "/n.md"}, *opts)
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout.startswith("Last edit to /n.md undone successfully.")
    assert (root / "n.md").read_text() == "one\n"
    res = call(root, "history", {"file_path": "/n.md"}, *opts)
    assert res.stdout.splitlines()[0] == "/n.md: 3 versions kept, newest first."
    # Without the history directory the same undo says how to get one.
    (root / "n.md").write_text("two\n")
    assert call(root, "read", {"file_path": "/n.md"}, "--ledger", str(ledger)).returncode == 0
    res = call(root, "write", {"file_path": "/n.md", "content": "three\n"}, "--ledger",
               str(ledger))
    assert res.returncode == 0, res.stdout
    res = call(root, "str_replace_editor", {"command": "undo_edit", "path": "/n.md"},
               "--ledger", str(ledger))
    assert res.returncode == 1
    assert "Error [FS_UNSUPPORTED]" in res.stdout and "history=History()" in res.stdout


# -- a conflict across calls shows what changed ----------------------------------------------


def _conflict_in_one_process(root: Path) -> str:
    """The refusal an MCP session (one process) answers after an outside change."""
    (root / "f.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    session = ToolServer(Workspace(str(root))).open_session()
    assert session.execute("read", {"file_path": "/f.txt"}).ok
    (root / "f.txt").write_bytes(b"one\r\ntwo\r\nTHREE\r\n")
    result = ToolServer.result_dict(session.execute(
        "edit", {"file_path": "/f.txt", "old_string": "one", "new_string": "1"}))
    assert result["isError"]
    text: str = result["content"][0]["text"]
    return text


def test_a_conflict_across_calls_shows_the_diff_one_process_shows(tmp_path: Path) -> None:
    served, cli = tmp_path / "served", tmp_path / "cli"
    served.mkdir()
    cli.mkdir()
    expected = _conflict_in_one_process(served)
    assert "\n-three\n+THREE\n" in expected

    ledger = tmp_path / "agent.ledger"
    (cli / "f.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    assert call(cli, "read", {"file_path": "/f.txt"}, "--ledger", str(ledger)).returncode == 0
    (cli / "f.txt").write_bytes(b"one\r\ntwo\r\nTHREE\r\n")  # outside fsseam, between calls
    edit = {"file_path": "/f.txt", "old_string": "one", "new_string": "1"}
    refused = call(cli, "edit", edit, "--ledger", str(ledger))
    assert refused.returncode == 1
    assert refused.stdout == expected + "\n"
    assert (cli / "f.txt").read_bytes() == b"one\r\ntwo\r\nTHREE\r\n"
    assert texts_path(ledger) == tmp_path / ".agent.ledger.texts"
    assert not list(tmp_path.glob(".agent.ledger.*.tmp")), "a temp file was left behind"


def _text(n: int, size: int) -> KeptText:
    return KeptText(key=f"f{n}.txt", version=Version(kind="sha256", value=str(n)), bom=False,
                    newline="\n", data=b"x" * size)


def test_the_texts_kept_between_calls_are_bounded(tmp_path: Path) -> None:
    path = tmp_path / ".l.json.texts"
    small = MAX_TOTAL_BYTES // 8
    save_texts(path, [_text(n, small) for n in range(12)])
    kept = load_texts(path)
    assert [t.key for t in kept] == [f"f{n}.txt" for n in range(4, 12)]  # the newest 8
    assert sum(len(t.data) for t in kept) == MAX_TOTAL_BYTES
    assert kept[-1].data == b"x" * small
    save_texts(path, [_text(99, MAX_TEXT_BYTES + 1), _text(4, small)])  # f4 used again
    # f4 is the newest now, and f99 (too large) is not kept: f5 to f11 stay.
    assert [t.key for t in load_texts(path)] == [*(f"f{n}.txt" for n in range(5, 12)),
                                                 "f4.txt"]
    path.write_bytes(b"{not json")
    assert load_texts(path) == []  # a cache that cannot be read is started over

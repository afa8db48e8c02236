"""deepagents on fsseam: the real framework (create_deep_agent, its filesystem middleware and
tool node) driven by LangChain's fake chat model, on memory, local, S3 (moto) and GCS
(fake-gcs-server); the bytes in the store are asserted after every run."""

from __future__ import annotations

import asyncio
import re
import runpy
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from itertools import count
from pathlib import Path
from typing import Any
from uuid import uuid4

import pytest

pytest.importorskip(
    "deepagents", reason="deepagents is not installed: pip install -e '.[deepagents]'"
)

from deepagents import create_deep_agent
from deepagents.backends import FilesystemBackend
from deepagents.backends.protocol import (
    BackendProtocol,
    DeleteResult,
    EditResult,
    FileDownloadResponse,
    FileUploadResponse,
    GlobResult,
    GrepResult,
    LsResult,
    ReadResult,
    WriteResult,
)
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from fsseam import Workspace
from fsseam.integrations.deepagents import FsseamBackend

from .helpers import (
    DOCS,
    NOT_OBSERVED,
    EditsMeet,
    make_workspace,
    retries,
    seed,
    stale,
    stored,
    waiting,
)

CALLS = count(1)


class ScriptedModel(GenericFakeChatModel):
    """LangChain's fake chat model, answering each turn with the next scripted message."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedModel:
        return self


def call(tool: str, **args: Any) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": tool, "args": args,
                                              "id": f"call-{next(CALLS)}"}])


def script(*turns: Any) -> Any:
    for turn in turns:
        if callable(turn):
            turn()
        else:
            yield turn


def agent_on(backend: BackendProtocol, *turns: Any) -> Any:
    return create_deep_agent(model=ScriptedModel(messages=script(*turns)), backend=backend)


def tool_messages(result: dict[str, Any]) -> list[ToolMessage]:
    messages: list[BaseMessage] = result["messages"]
    return [m for m in messages if isinstance(m, ToolMessage)]


def run(agent: Any, task: str = "Set the retries.") -> list[ToolMessage]:
    return tool_messages(agent.invoke({"messages": [{"role": "user", "content": task}]}))


READ = call("read_file", file_path="/config.toml")


def edit(old: str, new: str) -> AIMessage:
    return call("edit_file", file_path="/config.toml", old_string=old, new_string=new)


EDITED = "Successfully replaced 1 instance(s) of the string in '/config.toml'"


# -- the docs page ---------------------------------------------------------------------------


def test_every_example_of_the_docs_page_runs_as_a_script(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each python block of the page, verbatim, as ``python FILE.py`` runs it (in this
    process: its temporary directories under tmp_path)."""
    blocks = re.findall(r"```python\n(.*?)```", (DOCS / "deepagents.md").read_text(), re.S)
    assert len(blocks) == 2
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    for i, block in enumerate(blocks):
        script = tmp_path / f"example_{i}.py"
        script.write_text(block)
        runpy.run_path(str(script), run_name="__main__")


# -- agents end to end -----------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["memory", "local", "s3", "gcs"])
def test_a_deep_agent_reads_and_edits_on_every_store(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    ws = make_workspace(kind, request, tmp_path)
    seed(ws)
    agent = agent_on(FsseamBackend(ws, owner="agent"), READ, edit("retries = 1", "retries = 3"),
                     "Done.")
    read, edited = run(agent)
    assert (read.status, read.content) == ("success", "@@ lines 1-1 of 1 @@\nretries = 1")
    assert (edited.status, edited.content) == ("success", EDITED)
    assert stored(ws) == b"retries = 3\n"


def test_an_edit_of_a_file_never_read_is_refused(fsseam_s3_workspace: Workspace) -> None:
    ws = fsseam_s3_workspace
    seed(ws)
    (edited,) = run(agent_on(FsseamBackend(ws), edit("retries = 1", "retries = 3"), "Done."))
    assert (edited.status, edited.content) == ("error", NOT_OBSERVED)
    assert stored(ws) == b"retries = 1\n"


def test_a_whole_file_write_over_another_writers_change_is_refused(
    fsseam_s3_workspace: Workspace,
) -> None:
    ws = fsseam_s3_workspace
    seed(ws)
    changed = threading.Event()

    def someone_edits() -> None:
        person = ws.context("person")
        person.tools.execute("read", {"file_path": "/config.toml"})
        assert person.tools.execute("edit", {"file_path": "/config.toml", "old_string": "1",
                                             "new_string": "2"}).ok
        changed.set()

    agent = agent_on(FsseamBackend(ws), READ, someone_edits,
                     call("write_file", file_path="/config.toml", content="retries = 5\n"),
                     "Done.")
    _, written = run(agent)
    assert written.status == "error"
    assert written.content == stale(retries(1, 2), "write", None)
    assert changed.is_set() and stored(ws) == b"retries = 2\n"


def test_another_agents_same_edit_is_refused_not_successfully_replaced(
    fsseam_s3_workspace: Workspace,
) -> None:
    """A change someone else made is not yours: a person makes exactly the agent's edit
    after the agent's read; the model is told so (deepagents' own FilesystemBackend says
    "String not found"), never "Successfully replaced"."""
    ws = fsseam_s3_workspace
    seed(ws)

    def someone_edits() -> None:
        person = ws.context("person")
        person.tools.execute("read", {"file_path": "/config.toml"})
        assert person.tools.execute("edit", {"file_path": "/config.toml",
                                             "old_string": "retries = 1",
                                             "new_string": "retries = 3"}).ok

    agent = agent_on(FsseamBackend(ws), READ, someone_edits, edit("retries = 1", "retries = 3"),
                     "Done.")
    _, edited = run(agent)
    assert edited.status == "error", edited.content
    assert edited.content.startswith(
        "Error [FS_STALE]: /config.toml already holds exactly your change, made by another "
        "writer since your read; nothing was written: if your change should apply once, it "
        "is there; if it builds on the old value, apply it again."), edited.content
    assert stored(ws) == b"retries = 3\n"


def test_two_edits_of_one_file_in_one_response(fsseam_s3_workspace: Workspace) -> None:
    """deepagents refuses the second mutation of a path in one response itself."""
    ws = fsseam_s3_workspace
    seed(ws)
    both = AIMessage(content="", tool_calls=[
        edit("retries = 1", "retries = 2").tool_calls[0],
        edit("retries = 1", "retries = 3").tool_calls[0],
    ])
    _, first, second = run(agent_on(FsseamBackend(ws), READ, both, "Done."))
    assert (first.status, first.content) == ("success", EDITED)
    assert (second.status, second.content) == (
        "error", "Error: parallel file mutations to the same path are not allowed.")
    assert stored(ws) == b"retries = 2\n"


def test_two_agents_editing_at_the_same_time_and_the_storage_decides(
    fsseam_s3_bucket: Any,
) -> None:
    """Both agents read, then both edits run at once (each held after its read until the
    other has read too): S3's If-Match lets exactly one write through."""
    ws = fsseam_s3_bucket.workspace(plugins=[EditsMeet()])
    seed(ws)
    agents = [
        agent_on(FsseamBackend(ws, owner=f"agent-{n}"), READ,
                 edit("retries = 1", f"retries = {n}"), "Done.")
        for n in (2, 3)
    ]
    with ThreadPoolExecutor(2) as pool:
        edits = [m for _, m in pool.map(run, agents, timeout=120)]
    landed = [m for m in edits if m.status == "success"]
    refused = [m for m in edits if m.status == "error"]
    assert len(landed) == 1 and len(refused) == 1
    assert landed[0].content == EDITED
    winner = 2 if edits[0] is landed[0] else 3
    assert refused[0].content == stale(retries(1, winner))
    assert stored(ws) == f"retries = {winner}\n".encode()


def test_an_async_run_goes_through_the_async_forms(fsseam_s3_workspace: Workspace) -> None:
    ws = fsseam_s3_workspace
    seed(ws)
    agent = agent_on(FsseamBackend(ws), READ, edit("retries = 1", "retries = 4"), "Done.")
    result = asyncio.run(agent.ainvoke({"messages": [{"role": "user", "content": "go"}]}))
    _, edited = tool_messages(result)
    assert (edited.status, edited.content) == ("success", EDITED)
    assert stored(ws) == b"retries = 4\n"


def test_a_route_of_a_composite_backend(tmp_path: Path) -> None:
    """deepagents' CompositeBackend hands a route's paths to fsseam without its prefix."""
    from deepagents.backends import CompositeBackend, StateBackend

    ws = Workspace(str(tmp_path))
    seed(ws)
    backend = CompositeBackend(default=StateBackend(),
                               routes={"/project/": FsseamBackend(ws, owner="agent")})
    messages = run(agent_on(
        backend,
        call("ls", path="/project"),
        call("read_file", file_path="/project/config.toml"),
        call("edit_file", file_path="/project/config.toml", old_string="retries = 1",
             new_string="retries = 2"),
        call("grep", pattern="retries", path="/project"),
        call("write_file", file_path="/scratch.md", content="in the agent's state\n"),
        "Done.",
    ))
    assert [(m.status, m.content) for m in messages] == [
        ("success", "['/project/config.toml']"),
        ("success", "@@ lines 1-1 of 1 @@\nretries = 1"),
        ("success", "Successfully replaced 1 instance(s) of the string in "
                    "'/project/config.toml'"),
        ("success", "/project/config.toml"),
        ("success", "Updated file /scratch.md"),
    ]
    assert stored(ws) == b"retries = 2\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.toml"]


def _lost_update(backend_a: BackendProtocol, backend_b: BackendProtocol) -> ToolMessage:
    """a edits a line; b, which read the file before that, writes the whole file.

    Ordered by events, not by timing: a edits only once b's read has been answered (b's model
    is asked for its next turn), and b writes only once a's edit has been answered."""
    b_read, a_edited = threading.Event(), threading.Event()
    agent_a = agent_on(backend_a, READ, waiting(b_read), edit("retries = 1", "retries = 2"),
                       a_edited.set, "Done.")
    agent_b = agent_on(backend_b, READ, b_read.set, waiting(a_edited),
                       call("write_file", file_path="/config.toml",
                            content="retries = 1\ntimeout = 5\n"), "Done.")
    with ThreadPoolExecutor(2) as pool:
        runs = [pool.submit(run, agent) for agent in (agent_a, agent_b)]
        _, written = (r.result(timeout=120) for r in runs)
    return written[1]


def test_deepagents_own_backend_loses_the_update_fsseam_keeps(tmp_path: Path) -> None:
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "config.toml").write_text("retries = 1\n")
    written = _lost_update(FilesystemBackend(root_dir=theirs, virtual_mode=True),
                           FilesystemBackend(root_dir=theirs, virtual_mode=True))
    assert written.status == "success"
    assert (theirs / "config.toml").read_bytes() == b"retries = 1\ntimeout = 5\n"  # 2 is lost

    ours = tmp_path / "ours"
    ours.mkdir()
    ws = Workspace(str(ours))
    seed(ws)
    written = _lost_update(FsseamBackend(ws, owner="a"), FsseamBackend(ws, owner="b"))
    assert written.status == "error"
    assert written.content == stale(retries(1, 2), "write", None)
    assert (ours / "config.toml").read_bytes() == b"retries = 2\n"


# -- the protocol, call by call (memory) -----------------------------------------------------


@pytest.fixture
def ws() -> Workspace:
    return Workspace("memory://deepagents", storage_options={"global_store": False})


def test_read_windows(ws: Workspace) -> None:
    seed(ws, "/five.txt", "l1\r\nl2\r\nl3\r\nl4\r\nl5\r\n")
    seed(ws, "/empty.txt", "")
    b = FsseamBackend(ws)
    assert b.read("/five.txt", 1, 2) == ReadResult(
        file_data={"content": "l2\nl3\n", "encoding": "utf-8"},
        total_lines=5, start_line=2, end_line=3, next_offset=3,
    )
    assert b.read("/five.txt", 3) == ReadResult(
        file_data={"content": "l4\nl5\n", "encoding": "utf-8"},
        total_lines=5, start_line=4, end_line=5,
    )
    assert b.read("/five.txt", -3, 1).start_line == 1
    assert b.read("/five.txt", 0, 0) == ReadResult(
        file_data={"content": "", "encoding": "utf-8"}, no_lines_requested=True)
    assert b.read("/empty.txt") == ReadResult(file_data={"content": "", "encoding": "utf-8"})
    assert b.read("/five.txt", 9) == ReadResult(error=(
        "[FS_INVALID_ARGUMENT] Line offset 9 exceeds file length (5 lines) of /five.txt. Use "
        "offset=0 to read from the start."
    ))
    assert b.read("/nope.txt") == ReadResult(error=(
        "[FS_NOT_FOUND] /nope.txt does not exist. Check the path (list the parent directory), "
        "or create the file."
    ))


def test_write_and_edit(ws: Workspace) -> None:
    seed(ws)
    b = FsseamBackend(ws)
    assert b.write("new/file.md", "hi\n") == WriteResult(path="/new/file.md")
    assert b.write("/config.toml", "x\n") == WriteResult(error=(
        "Error [FS_NOT_OBSERVED]: /config.toml already exists and you have not read it. Read it "
        "first, then retry."
    ))
    assert b.edit("/config.toml", "1", "2") == EditResult(error=NOT_OBSERVED)
    b.read("/config.toml")
    seed(ws, "/twice.txt", "a a\n")
    b.read("/twice.txt")
    assert b.edit("/twice.txt", "a", "b") == EditResult(error=(
        "Error [FS_MULTIPLE_MATCHES]: old_string occurs 2 times in /twice.txt, at line 1. "
        "Include more surrounding lines in old_string to make it unique, or set replace_all "
        "to replace every occurrence."
    ))
    assert b.edit("/twice.txt", "a", "b", replace_all=True) == EditResult(
        path="/twice.txt", occurrences=2)
    assert b.edit("/config.toml", "retries = 1", "retries = 2") == EditResult(
        path="/config.toml", occurrences=1)
    assert b.write("/config.toml", "retries = 9\n") == WriteResult(path="/config.toml")
    assert stored(ws) == b"retries = 9\n" and stored(ws, "/twice.txt") == b"b b\n"


def test_ls(ws: Workspace) -> None:
    seed(ws, "/a.txt", "a")
    seed(ws, "/.env", "x")
    seed(ws, "/src/m.py", "pass\n")
    b = FsseamBackend(ws)
    assert b.ls("/") == LsResult(entries=[
        {"path": "/.env", "is_dir": False, "size": 1},
        {"path": "/a.txt", "is_dir": False, "size": 1},
        {"path": "/src/", "is_dir": True},
    ])
    assert b.ls("/a.txt") == LsResult(error=(
        "[FS_INVALID_ARGUMENT] not_a_directory: /a.txt is a file, not a directory. Read it "
        "instead."
    ))
    assert b.ls("/nope").error == (
        "[FS_NOT_FOUND] /nope does not exist. Check the path, or list the parent directory."
    )


def test_glob_follows_deepagents_matcher(ws: Workspace) -> None:
    for path in ("/top.py", "/src/app/main.py", "/.github/ci.py", "/src/notes.md"):
        seed(ws, path, "x\n")
    b = FsseamBackend(ws)

    def paths(result: GlobResult) -> list[str]:
        assert result.error is None, result.error
        return [m["path"] for m in result.matches or []]

    assert paths(b.glob("*.py")) == ["/.github/ci.py", "/src/app/main.py", "/top.py"]
    assert paths(b.glob("**/*.py")) == ["/src/app/main.py", "/top.py"]
    assert paths(b.glob("/*.py")) == ["/top.py"]
    assert paths(b.glob("src/**/*.{py,md}")) == ["/src/app/main.py", "/src/notes.md"]
    assert paths(b.glob("*.py", "/src")) == ["/src/app/main.py"]
    assert paths(b.glob("*.py", "/top.py")) == ["/top.py"]
    assert paths(b.glob("*.py", "/missing")) == []
    assert b.glob("../*.py") == GlobResult(
        error="Path traversal not allowed in glob pattern '../*.py'")


def test_grep_is_literal_and_counts_as_a_read(ws: Workspace) -> None:
    seed(ws, "/a.py", "x = f(1)\ny = f(2)\nf(\n")
    seed(ws, "/b.md", "f(1) in prose\n")
    b = FsseamBackend(ws)
    assert b.grep("f(1)") == GrepResult(matches=[
        {"path": "/a.py", "line": 1, "text": "x = f(1)"},
        {"path": "/b.md", "line": 1, "text": "f(1) in prose"},
    ])
    assert b.grep("f(", "/", "*.py", max_count=2) == GrepResult(matches=[
        {"path": "/a.py", "line": 1, "text": "x = f(1)"},
        {"path": "/a.py", "line": 2, "text": "y = f(2)"},
    ], truncated=True)
    assert b.grep("f(", "/missing") == GrepResult(matches=[])
    assert b.grep("") == GrepResult(
        error="[FS_INVALID_ARGUMENT] the pattern is empty; give the text to search for.")
    # A pattern over the workspace's cap is refused before it is escaped and compiled.
    huge = "f(" * 5_000_000
    refused = b.grep(huge)
    assert refused.error is not None and refused.error.startswith("[FS_INVALID_ARGUMENT]")
    assert "10000000 characters long, over the cap of 1000" in refused.error
    assert huge[:2000] not in refused.error
    # The lines it showed were read: an edit may follow.
    assert b.edit("/b.md", "prose", "text") == EditResult(path="/b.md", occurrences=1)


def test_delete_files_and_directories(ws: Workspace) -> None:
    for path in ("/keep.txt", "/d/one.txt", "/d/sub/two.txt"):
        seed(ws, path, "x\n")
    b = FsseamBackend(ws)
    assert b.delete("/keep.txt") == DeleteResult(error=(
        "Error [FS_NOT_OBSERVED]: /keep.txt has not been read yet. Read it first (a delete "
        "needs the version you saw), then retry the delete."
    ))
    b.read("/d/one.txt")
    # Every file of a directory at its read version, all or nothing.
    assert b.delete("/d") == DeleteResult(error=(
        "Error [FS_NOT_OBSERVED]: /d/sub/two.txt has not been read yet. Read it first (a "
        "delete needs the version you saw), then retry the delete."
    ))
    assert stored(ws, "/d/one.txt") == b"x\n"
    b.read("/d/sub/two.txt")
    assert b.delete("/d") == DeleteResult(path="/d")
    assert b.ls("/") == LsResult(entries=[{"path": "/keep.txt", "is_dir": False, "size": 2}])
    assert b.delete("/d") == DeleteResult(error=(
        "Error [FS_NOT_FOUND]: /d does not exist. Check the path, or list the parent directory."
    ))


def test_uploads_are_the_owners_guarded_writes_downloads_are_reads(ws: Workspace) -> None:
    seed(ws)
    b = FsseamBackend(ws)
    # An upload over a file this owner never read is refused, as a write_file is.
    (unread,) = b.upload_files([("/config.toml", b"retries = 7\n")])
    assert isinstance(unread.error, str) and unread.error.startswith(
        "Error [FS_NOT_OBSERVED]: /config.toml already exists and you have not read it.")
    assert stored(ws) == b"retries = 1\n"
    b.read("/config.toml")
    assert b.upload_files([("/config.toml", b"retries = 7\n"), ("/img.bin", b"\x00\xff"),
                           ("../out", b"x"), ("/", b"x")]) == [
        FileUploadResponse(path="/config.toml"),
        FileUploadResponse(path="/img.bin"),
        FileUploadResponse(path="../out", error="invalid_path"),
        FileUploadResponse(path="/", error="is_directory"),
    ]
    # The upload is this owner's own write: what it wrote is what it saw.
    assert b.edit("/config.toml", "retries", "tries") == EditResult(path="/config.toml",
                                                                    occurrences=1)
    # Another writer's change since: the next edit is stale, as after any other writer.
    ws.context("seed").fs.read("/config.toml")
    ws.context("seed").fs.write("/config.toml", "retries = 7\n")
    assert b.edit("/config.toml", "tries", "attempts") == EditResult(
        error=stale("@@ -1 +1 @@\n-tries = 7\n+retries = 7",
                    target="still occurs exactly once in it"))
    assert b.download_files(["/config.toml", "/img.bin", "/nope", "/", "../x"]) == [
        FileDownloadResponse(path="/config.toml", content=b"retries = 7\n"),
        FileDownloadResponse(path="/img.bin", content=b"\x00\xff"),
        FileDownloadResponse(path="/nope", error="file_not_found"),
        FileDownloadResponse(path="/", error="is_directory"),
        FileDownloadResponse(path="../x", error="invalid_path"),
    ]
    # What was downloaded was read.
    assert b.edit("/config.toml", "retries", "tries") == EditResult(path="/config.toml",
                                                                    occurrences=1)
    assert b.delete("/img.bin") == DeleteResult(path="/img.bin")
    assert stored(ws) == b"tries = 7\n"
    read_only = FsseamBackend(Workspace(ws.url, storage_options={"global_store": False},
                                        read_only=True))
    assert read_only.upload_files([("/x.txt", b"x")]) == [
        FileUploadResponse(path="/x.txt", error="permission_denied")]


def test_deepagents_history_append_download_then_whole_edit(ws: Workspace) -> None:
    """What deepagents' summarization does with its conversation history: download the
    file, then edit all of it into all of it plus a new section."""
    path = "/conversation_history/thread.md"
    seed(ws, path, "## one\n")  # written by an earlier run's backend
    b = FsseamBackend(ws, owner="run-2")
    (got,) = b.download_files([path])
    assert got.content is not None
    old = got.content.decode()
    assert b.edit(path, old, old + "## two\n") == EditResult(path=path, occurrences=1)
    # Someone else appends between the download and the edit: refused, nothing lost.
    (got,) = b.download_files([path])
    assert got.content is not None
    other = ws.context("other")
    other.tools.execute("read", {"file_path": path})
    assert other.tools.execute("edit", {"file_path": path, "old_string": "## two\n",
                                        "new_string": "## two\n## other\n"}).ok
    old = got.content.decode()
    assert b.edit(path, old, old + "## three\n").error == stale(
        "@@ -1,2 +1,3 @@\n ## one\n ## two\n+## other", target="still occurs exactly once in it",
        path=path)
    assert stored(ws, path) == b"## one\n## two\n## other\n"


def test_the_async_forms(ws: Workspace) -> None:
    seed(ws)
    b = FsseamBackend(ws)

    async def calls() -> list[Any]:
        return [
            await b.als("/"),
            await b.aread("/config.toml"),
            await b.aedit("/config.toml", "1", "2"),
            await b.awrite("/new.txt", "n\n"),
            await b.aglob("*.txt"),
            await b.agrep("retries"),
            await b.adelete("/new.txt"),
            await b.aupload_files([("/u.txt", b"u")]),
            await b.adownload_files(["/u.txt"]),
        ]

    ls, read, edited, written, globbed, grepped, deleted, up, down = asyncio.run(calls())
    assert [e["path"] for e in ls.entries] == ["/config.toml"]
    assert read.file_data == {"content": "retries = 1\n", "encoding": "utf-8"}
    assert edited == EditResult(path="/config.toml", occurrences=1)
    assert written == WriteResult(path="/new.txt")
    assert [m["path"] for m in globbed.matches] == ["/new.txt"]
    assert grepped.matches == [{"path": "/config.toml", "line": 1, "text": "retries = 2"}]
    assert deleted == DeleteResult(path="/new.txt")
    assert up == [FileUploadResponse(path="/u.txt")]
    assert down == [FileDownloadResponse(path="/u.txt", content=b"u")]


def test_sources_and_owners(ws: Workspace) -> None:
    seed(ws)
    ctx = ws.context("shared")
    ctx.tools.execute("read", {"file_path": "/config.toml"})
    shared = FsseamBackend(ctx)  # the context's reads are the backend's
    assert (shared.owner, shared.workspace) == ("shared", ws)
    assert shared.edit("/config.toml", "1", "2") == EditResult(path="/config.toml",
                                                               occurrences=1)
    assert FsseamBackend(ws).owner == "deepagents"
    by_url = FsseamBackend(ws.url, storage_options={"global_store": False}, owner="u")
    assert repr(by_url) == f"FsseamBackend({ws.url!r}, owner='u')"
    with pytest.raises(TypeError, match="storage_options belong to the Workspace"):
        FsseamBackend(ctx, storage_options={})
    with pytest.raises(TypeError, match="expected a fsseam Workspace, Context or URL"):
        FsseamBackend(42)  # type: ignore[arg-type]


class _Ticking:
    """A finders' clock that moves one second at every reading: a call's time runs out
    after a known number of checks, with no sleep."""

    def __init__(self) -> None:
        self.now = -1.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


def test_glob_and_grep_stop_at_the_finders_time_budget(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import fsseam.deadline
    from fsseam import Limits

    ws = Workspace("memory://da-budget-" + uuid4().hex, limits=Limits(finder_seconds=2.5))
    names = [f"/f{i}.py" for i in range(6)]
    for path in names:
        seed(ws, path, "needle\n")
    b = FsseamBackend(ws)
    monkeypatch.setattr(fsseam.deadline, "clock", _Ticking())
    cut = b.glob("*.py")
    assert cut.error is None and cut.truncated and cut.truncation_reason == "budget"
    shown = [m["path"] for m in cut.matches or []]
    assert shown == names[:len(shown)] and 0 < len(shown) < len(names)
    found = b.grep("needle")
    assert found.error is None and found.truncated
    assert 0 < len(found.matches or []) < len(names)
    monkeypatch.setattr(fsseam.deadline, "clock", lambda: 0.0)
    whole = b.glob("*.py")
    assert not whole.truncated and [m["path"] for m in whole.matches or []] == names

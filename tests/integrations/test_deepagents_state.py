"""deepagents: what a thread has read lives in its LangGraph state (fsseam's own channel),
checkpointed by LangGraph's real SQLite checkpointer. Threads read here and are resumed in
ONE new process (tests/integrations/deepagents_process.py) that edits or approves; one
agent's threads never share a read."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "deepagents", reason="deepagents is not installed: pip install -e '.[deepagents]'"
)
pytest.importorskip("langgraph.checkpoint.sqlite", reason="langgraph-checkpoint-sqlite")

from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver

import fsseam
from fsseam import ErrorCode, Workspace
from fsseam.integrations.deepagents import FsseamBackend
from fsseam.integrations.deepagents_state import (
    OBSERVATIONS_KEY,
    RUN_KEY,
    merge_observations,
)
from fsseam.observations import ObservationEntry
from fsseam.observations.sealing import Binding, sealed
from fsseam.paths import reserved
from fsseam.versions import Version

from . import deepagents_process as proc
from .helpers import NOT_OBSERVED, seed, stored

EDITED = "Successfully replaced 1 instance(s) of the string in '{}'"
SCRIPT = Path(proc.__file__)

# scenario (= thread id): the file, what happens in this process, what the new one does
SCENARIOS: dict[str, dict[str, Any]] = {
    "resume": {"path": "/a.toml", "do": "edit", "edit": ["retries = 1", "retries = 3"]},
    "changed": {"path": "/b.toml", "do": "edit", "edit": ["retries = 1", "retries = 3"],
                "outside": True},
    "approve": {"path": "/c.toml", "do": "approve", "edit": ["retries = 1", "retries = 4"]},
    "approve-changed": {"path": "/d.toml", "do": "approve",
                        "edit": ["retries = 1", "retries = 4"], "outside": True},
}


# the same on S3 (the moto server), where versions are ETags
S3_SCENARIOS: dict[str, dict[str, Any]] = {
    "s3-resume": {"path": "/e.toml", "do": "edit", "edit": ["retries = 1", "retries = 3"]},
    "s3-approve-changed": {"path": "/f.toml", "do": "approve",
                           "edit": ["retries = 1", "retries = 4"], "outside": True},
}


def stale_here(path: str) -> str:
    """The refusal in a process that never held the version read (local disk keeps no
    older versions, so there is no diff to show, and it says why)."""
    return (f"Error [FS_STALE]: {path} has changed since you last read it, so your edit was "
            "not applied. What changed since the version you read cannot be shown: this "
            "storage keeps no older versions, and this process no longer holds the text of "
            "that version (it was read before a restart, in another process, or too long "
            "ago). Read the file again, then retry the edit.")


def someone_changes(ws: Workspace, path: str) -> None:
    person = ws.context("person")
    person.tools.execute("read", {"file_path": path})
    assert person.tools.execute("edit", {"file_path": path, "old_string": "retries = 1",
                                         "new_string": "retries = 2"}).ok


def first_process(db: str, scenarios: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Each thread reads its file here (the approvals also reach their edit and stop)."""
    checkpointer = proc.saver(db)
    seen: dict[str, Any] = {}
    for name, s in scenarios.items():
        backend = proc.backend_of(s)
        ws = backend.workspace
        seed(ws, s["path"])
        approve = s["do"] == "approve"
        turns: list[AIMessage | str] = [proc.read(s["path"])]
        if approve:
            turns.append(proc.edit(s["path"], *s["edit"]))
        result = proc.agent(backend, turns, checkpointer, interrupt=approve).invoke(
            {"messages": [{"role": "user", "content": "Read it."}]}, proc.thread(name))
        seen[name] = (proc.tool_results(result["messages"]),
                      "__interrupt__" in result)
        if s.get("outside"):
            someone_changes(ws, s["path"])
    return seen


@pytest.fixture(scope="module")
def resumed(tmp_path_factory: pytest.TempPathFactory,
            request: pytest.FixtureRequest) -> tuple[Path, dict[str, Any], Any]:
    root = tmp_path_factory.mktemp("deepagents-state")
    scenarios = {name: {**s, "url": str(root)} for name, s in SCENARIOS.items()}
    moto = request.getfixturevalue("fsseam_moto_server")
    bucket = moto.create_bucket()
    for name, s in S3_SCENARIOS.items():
        scenarios[name] = {**s, "url": f"s3://{bucket}", "options": moto.storage_options()}
    db = str(root.parent / f"{root.name}.sqlite")
    seen = first_process(db, scenarios)
    src = str(Path(fsseam.__file__).parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [src, os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, str(SCRIPT), db, json.dumps(scenarios)],
                          capture_output=True, text=True, env=env, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    s3 = proc.backend_of(scenarios["s3-resume"]).workspace
    files = {s["path"]: stored(s3, s["path"]) for s in S3_SCENARIOS.values()}
    return root, {**seen, "s3-files": files}, json.loads(done.stdout.strip().splitlines()[-1])


def test_the_first_process_read_and_stopped_at_the_approvals(
    resumed: tuple[Path, dict[str, Any], Any],
) -> None:
    _, seen, _ = resumed
    for name, s in {**SCENARIOS, **S3_SCENARIOS}.items():
        results, interrupted = seen[name]
        assert results == [["success", "@@ lines 1-1 of 1 @@\nretries = 1"]]
        assert interrupted is (s["do"] == "approve")


def test_a_thread_resumed_in_a_new_process_edits_what_it_read(
    resumed: tuple[Path, dict[str, Any], Any],
) -> None:
    root, _, after = resumed
    assert after["resume"] == [["success", EDITED.format("/a.toml")]]
    assert (root / "a.toml").read_bytes() == b"retries = 3\n"


def test_an_outside_change_before_the_resume_is_refused(
    resumed: tuple[Path, dict[str, Any], Any],
) -> None:
    root, _, after = resumed
    assert after["changed"] == [["error", stale_here("/b.toml")]]
    assert (root / "b.toml").read_bytes() == b"retries = 2\n"


def test_an_edit_approved_in_a_new_process_applies(
    resumed: tuple[Path, dict[str, Any], Any],
) -> None:
    root, _, after = resumed
    assert after["approve"] == [["success", EDITED.format("/c.toml")]]
    assert (root / "c.toml").read_bytes() == b"retries = 4\n"


def test_an_approved_edit_of_a_file_changed_meanwhile_is_refused(
    resumed: tuple[Path, dict[str, Any], Any],
) -> None:
    root, _, after = resumed
    assert after["approve-changed"] == [["error", stale_here("/d.toml")]]
    assert (root / "d.toml").read_bytes() == b"retries = 2\n"


def test_the_same_on_s3(resumed: tuple[Path, dict[str, Any], Any]) -> None:
    _, seen, after = resumed
    assert after["s3-resume"] == [["success", EDITED.format("/e.toml")]]
    assert after["s3-approve-changed"] == [["error", stale_here("/f.toml")]]
    assert seen["s3-files"] == {"/e.toml": b"retries = 3\n", "/f.toml": b"retries = 2\n"}


# -- in this process ---------------------------------------------------------------------


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    ws = Workspace(str(tmp_path))
    seed(ws)
    return ws


def go(agent: Any, thread: str | None) -> list[list[str]]:
    config = proc.thread(thread) if thread is not None else None
    result = agent.invoke({"messages": [{"role": "user", "content": "Go."}]}, config)
    return proc.tool_results(result["messages"])


def test_two_threads_of_one_agent_never_share_a_read(ws: Workspace, tmp_path: Path) -> None:
    backend, checkpointer = FsseamBackend(ws), InMemorySaver()
    edit = proc.edit("/config.toml", "retries = 1", "retries = 3")

    assert go(proc.agent(backend, [proc.read("/config.toml")], checkpointer), "A")[-1][0] == (
        "success")
    assert go(proc.agent(backend, [edit], checkpointer), "B") == [["error", NOT_OBSERVED]]
    assert (tmp_path / "config.toml").read_bytes() == b"retries = 1\n"
    assert go(proc.agent(backend, [edit], checkpointer), "A")[-1] == [
        "success", EDITED.format("/config.toml")]
    assert (tmp_path / "config.toml").read_bytes() == b"retries = 3\n"
    # Each thread's state holds its own reads, under the backend's scope, and nothing else.
    a = proc.agent(backend, [], checkpointer).get_state(proc.thread("A")).values
    b = proc.agent(backend, [], checkpointer).get_state(proc.thread("B")).values
    assert list(a[OBSERVATIONS_KEY]) == [backend.threads.scope]
    # (and the answer of its edit, which ran as its tool call: fsseam.seam.calls)
    assert [k for k in a[OBSERVATIONS_KEY][backend.threads.scope] if not reserved(k)] == [
        "config.toml"]
    assert b[OBSERVATIONS_KEY] == {} and RUN_KEY not in b


def test_without_the_middleware_threads_still_never_share_a_read(
    ws: Workspace, tmp_path: Path,
) -> None:
    """deepagents' own create_deep_agent, no middleware: each thread is still an owner of
    its own (its reads kept in the workspace's store)."""
    from deepagents import create_deep_agent

    backend, checkpointer = FsseamBackend(ws), InMemorySaver()

    def plain(turn: AIMessage) -> Any:
        return create_deep_agent(model=proc.ScriptedModel(messages=iter([turn, "Done."])),
                                 backend=backend, checkpointer=checkpointer)

    edit = proc.edit("/config.toml", "retries = 1", "retries = 3")
    assert go(plain(proc.read("/config.toml")), "A")[-1][0] == "success"
    assert go(plain(edit), "B") == [["error", NOT_OBSERVED]]
    assert (tmp_path / "config.toml").read_bytes() == b"retries = 1\n"
    assert go(plain(edit), "A")[-1] == ["success", EDITED.format("/config.toml")]
    assert OBSERVATIONS_KEY not in plain(edit).get_state(proc.thread("A")).values


def test_runs_without_a_thread_id_each_have_an_owner(ws: Workspace, tmp_path: Path) -> None:
    backend = FsseamBackend(ws)
    read = proc.agent(backend, [proc.read("/config.toml")], None)
    assert go(read, None)[-1][0] == "success"
    edit = proc.agent(backend, [proc.edit("/config.toml", "retries = 1", "retries = 3")], None)
    assert go(edit, None) == [["error", NOT_OBSERVED]]
    assert (tmp_path / "config.toml").read_bytes() == b"retries = 1\n"


def test_parallel_reads_of_one_response_all_reach_the_state(
    ws: Workspace, tmp_path: Path,
) -> None:
    seed(ws, "/b.toml")
    backend, checkpointer = FsseamBackend(ws), InMemorySaver()
    both = AIMessage(content="", tool_calls=[proc.read("/config.toml").tool_calls[0],
                                             proc.read("/b.toml").tool_calls[0]])
    assert [r[0] for r in go(proc.agent(backend, [both], checkpointer), "P")] == [
        "success", "success"]
    edits = AIMessage(content="", tool_calls=[
        proc.edit("/config.toml", "retries = 1", "retries = 5").tool_calls[0],
        proc.edit("/b.toml", "retries = 1", "retries = 6").tool_calls[0]])
    assert [r[0] for r in go(proc.agent(backend, [edits], checkpointer), "P")[-2:]] == [
        "success", "success"]
    assert (tmp_path / "config.toml").read_bytes() == b"retries = 5\n"
    assert (tmp_path / "b.toml").read_bytes() == b"retries = 6\n"


def test_a_corrupt_observation_channel_is_refused_not_reset(
    ws: Workspace, tmp_path: Path,
) -> None:
    backend, checkpointer = FsseamBackend(ws), InMemorySaver()
    reader = proc.agent(backend, [proc.read("/config.toml")], checkpointer)
    go(reader, "C")
    reader.update_state(proc.thread("C"), {OBSERVATIONS_KEY: {
        backend.threads.scope: {"config.toml": {"version": "not a version", "at": 9e9}}}})
    edit = proc.agent(backend, [proc.edit("/config.toml", "retries = 1", "retries = 3")],
                      checkpointer)
    ((status, text),) = go(edit, "C")[-1:]
    assert status == "error"
    assert text.startswith(f"Error [{ErrorCode.FS_BACKEND.value}]: ")
    assert "fsseam_observations" in text
    assert (tmp_path / "config.toml").read_bytes() == b"retries = 1\n"


def test_fsseams_create_deep_agent_adds_the_middleware_of_each_route(
    ws: Workspace, tmp_path: Path,
) -> None:
    """A route of a CompositeBackend, and the async forms: thread R reads, thread S may
    not edit, R may."""
    from deepagents.backends import CompositeBackend, StateBackend

    from fsseam.integrations.deepagents import create_deep_agent

    backend = FsseamBackend(ws, owner="project")
    composite = CompositeBackend(default=StateBackend(), routes={"/project/": backend})
    checkpointer = InMemorySaver()
    path = "/project/config.toml"

    def turn(message: AIMessage, thread: str) -> list[list[str]]:
        agent = create_deep_agent(model=proc.ScriptedModel(messages=iter([message, "Done."])),
                                  backend=composite, checkpointer=checkpointer)
        assert agent is not None
        result = asyncio.run(agent.ainvoke({"messages": [{"role": "user", "content": "Go."}]},
                                           proc.thread(thread)))
        return proc.tool_results(result["messages"])

    assert turn(proc.read(path), "R")[-1][0] == "success"
    edit = proc.edit(path, "retries = 1", "retries = 7")
    # The refusal names the path the model used, with the route's prefix.
    assert turn(edit, "S") == [["error", NOT_OBSERVED.replace("/config.toml", path)]]
    assert (tmp_path / "config.toml").read_bytes() == b"retries = 1\n"
    assert turn(edit, "R")[-1] == ["success", EDITED.format(path)]
    assert (tmp_path / "config.toml").read_bytes() == b"retries = 7\n"


def test_outside_a_graph_the_backend_is_its_own_owner(ws: Workspace) -> None:
    backend = FsseamBackend(ws, owner="app")
    assert backend.read("/config.toml").error is None
    assert backend.context.owner == "app"
    assert backend.edit("/config.toml", "retries = 1", "retries = 2").error is None


def test_the_merge_keeps_the_later_recording_and_is_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    v1, v2 = Version(kind="sha256", value="1"), Version(kind="sha256", value="2")
    early = ObservationEntry(version=v1, at=1.0).model_dump(mode="json")
    late = ObservationEntry(version=v2, at=2.0).model_dump(mode="json")
    assert merge_observations({"s": {"k": late}}, {"s": {"k": early}}) == {"s": {"k": late}}
    assert merge_observations({"s": {"k": early}}, {"s": {"k": late}}) == {"s": {"k": late}}
    assert merge_observations(None, {"t": {"k": early}}) == {"t": {"k": early}}
    monkeypatch.setattr("fsseam.integrations.deepagents_state.MAX_STATE_OBSERVATIONS", 1)
    assert merge_observations({"s": {"a": early}}, {"s": {"b": late}}) == {"s": {"b": late}}


def test_a_command_result_carries_the_delta_beside_its_own_update() -> None:
    from langchain_core.messages import ToolMessage
    from langgraph.types import Command

    from fsseam.integrations.deepagents_state import with_update

    entry = ObservationEntry(version=Version(kind="sha256", value="1"), at=1.0)
    binding = Binding("deepagents", "memory://x", "t")
    message = ToolMessage(content="ok", tool_call_id="c1")
    own = Command(update={"messages": [message], "files": {"/x": None}})
    out = with_update(own, "s", {"k": entry}, binding)
    assert isinstance(out, Command) and isinstance(out.update, dict)
    assert out.update == {"messages": [message], "files": {"/x": None},
                          OBSERVATIONS_KEY: {"s": {"k": sealed(binding, "k", entry)}}}
    assert with_update(message, "s", {}, binding) is message
    parent = Command(graph=Command.PARENT, update={"messages": [message]})
    assert with_update(parent, "s", {"k": entry}, binding) is parent


def test_a_call_parses_only_the_entries_it_uses(
    ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A thread that has read 5,000 files: an edit reads one entry of the state."""
    backend, checkpointer = FsseamBackend(ws), InMemorySaver()
    go(proc.agent(backend, [proc.read("/config.toml")], checkpointer), "many")
    other = ObservationEntry(version=Version(kind="sha256", value="x"),
                             at=1.0).model_dump(mode="json")
    proc.agent(backend, [], checkpointer).update_state(proc.thread("many"), {OBSERVATIONS_KEY: {
        backend.threads.scope: {f"f{n}.txt": other for n in range(5000)}}})
    parsed: list[Any] = []
    validate = ObservationEntry.model_validate

    def counting(value: Any, *args: Any, **kwargs: Any) -> ObservationEntry:
        parsed.append(value)
        return validate(value, *args, **kwargs)

    monkeypatch.setattr(ObservationEntry, "model_validate", counting)
    edit = proc.edit("/config.toml", "retries = 1", "retries = 9")
    assert go(proc.agent(backend, [edit], checkpointer), "many")[-1][0] == "success"
    assert (tmp_path / "config.toml").read_bytes() == b"retries = 9\n"
    assert 1 <= len(parsed) <= 3


def test_a_call_inside_a_call_of_the_thread_records_into_the_outer_one(ws: Workspace) -> None:
    """A subagent's tool call runs inside its parent's ``task`` call: what it records goes
    to the parent's thread, in the parent's update."""
    backend = FsseamBackend(ws)
    config = proc.thread("T")
    with backend.threads.tool_call({}, config) as outer:
        assert outer is not None and backend.context.owner == "deepagents:T"
        with backend.threads.tool_call({}, config) as inner:
            assert inner is None and backend.context.owner == "deepagents:T"
            assert backend.read("/config.toml").error is None
        assert backend.edit("/config.toml", "retries = 1", "retries = 2").error is None
        assert list(outer.drain()) == ["config.toml"]
    assert backend.context.owner == "deepagents"

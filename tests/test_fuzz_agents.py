"""Stateful fuzzing: 3 agents and an external writer against a reference model.

Every call's outcome code is predicted by a simple model of the observation policy, and
after every step the bytes in storage equal the model's. So: no successful write is lost,
every failed call leaves the bytes unchanged, and every FS_STALE is justified by an
intervening change (the model only predicts FS_STALE when the content differs from what
the agent last saw).

Two rules of issue 17 are in the model: a call whose result is exactly the current bytes
succeeds without a write (whatever the agent saw), and an FS_STALE about a version the
agent had seen shows the whole change (these files are small), so after a refused edit or
insert the agent has then observed the current version. After a refused whole-file write
it has not: the same write sent again would drop the change shown, so it is refused again.
"""

from __future__ import annotations

import shutil
import tempfile
from typing import Any

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from fsseam import ErrorCode, FsError, Overwrite, Workspace

AGENTS = st.sampled_from(["a", "b", "c"])
WORDS = st.sampled_from(["alpha", "beta", "gamma", "x", "y", "\tz", "beta beta"])
TEXTS = st.lists(WORDS, min_size=0, max_size=5).map(lambda ws: "".join(w + "\n" for w in ws))
P = "/f.txt"
UNSEEN = object()


class AgentsVsModel(RuleBasedStateMachine):
    kind = "memory"

    def __init__(self) -> None:
        super().__init__()
        self.tmp: str | None = None
        if self.kind == "local":
            self.tmp = tempfile.mkdtemp(prefix="fsseam-fuzz-")
            self.ws = Workspace(self.tmp)
        else:
            self.ws = Workspace("memory://fuzz", {"global_store": False})
        self.current: bytes | None = None
        self.seen: dict[str, Any] = {}

    def teardown(self) -> None:
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)

    def actual(self) -> bytes | None:
        try:
            return self.ws.backend.read("f.txt").data
        except FsError as e:
            assert e.code is ErrorCode.FS_NOT_FOUND
            return None

    def run(self, agent: str, tool: str, **args: Any) -> ErrorCode | None:
        res = self.ws.context(agent).tools.execute(tool, args)
        return None if res.ok else res.error.code  # type: ignore[union-attr]

    def expect_modify(self, agent: str, on_seen: bytes | None = None) -> ErrorCode | None:
        """The policy's verdict for an edit/insert by ``agent`` (None: allowed);
        ``on_seen``: the edit's result on what the agent saw (None: the edit fails there)."""
        seen = self.seen.get(agent, UNSEEN)
        if self.current is None:
            return ErrorCode.FS_NOT_FOUND
        if seen is UNSEEN:
            return ErrorCode.FS_NOT_OBSERVED
        if seen != self.current:
            # Someone else's change is not this agent's, even when it is exactly the
            # change it asks for (fsseam.versions.same_change).
            return ErrorCode.FS_STALE
        return None

    def stale(self, agent: str) -> None:
        """After FS_STALE about a version the agent saw, it has seen the current one."""
        if isinstance(self.seen.get(agent), bytes) and self.current is not None:
            self.seen[agent] = self.current

    @staticmethod
    def replaced(text: bytes, old: str, new: str, replace_all: bool) -> bytes | None:
        n = text.count(old.encode())
        if n == 0 or (n > 1 and not replace_all):
            return None
        return text.replace(old.encode(), new.encode())

    @staticmethod
    def inserted(text: bytes, line: int, new: str) -> bytes | None:
        lines = text.decode().splitlines(keepends=True)
        if line > len(lines):
            return None
        lines.insert(line, new)
        return "".join(lines).encode()

    @rule(agent=AGENTS)
    def read(self, agent: str) -> None:
        code = self.run(agent, "read", file_path=P)
        if self.current is None:
            assert code is ErrorCode.FS_NOT_FOUND
            self.seen[agent] = None
        else:
            assert code is None
            self.seen[agent] = self.current

    @rule(agent=AGENTS, text=TEXTS)
    def write(self, agent: str, text: str) -> None:
        code = self.run(agent, "write", file_path=P, content=text)
        seen = self.seen.get(agent, UNSEEN)
        if text.encode() == self.current and (seen is UNSEEN or seen == self.current):
            # Already there: nothing is written when nothing changed since the read, or
            # the write rests on no read; else it is another writer's change (FS_STALE).
            expected = None
        elif seen is UNSEEN:
            expected = None if self.current is None else ErrorCode.FS_NOT_OBSERVED
        elif seen is None:
            expected = None if self.current is None else ErrorCode.FS_STALE
        else:
            expected = None if seen == self.current else ErrorCode.FS_STALE
        assert code is expected
        # A refused write's diff is no read: what the agent saw stays as it was.
        if code is None:
            self.current = text.encode()
            self.seen[agent] = self.current

    @rule(agent=AGENTS, old=WORDS, new=WORDS, replace_all=st.booleans())
    def edit(self, agent: str, old: str, new: str, replace_all: bool) -> None:
        code = self.run(agent, "edit", file_path=P, old_string=old, new_string=new,
                        replace_all=replace_all)
        # Arguments are checked before the file is touched.
        seen = self.seen.get(agent)
        on_seen = (self.replaced(seen, old, new, replace_all) if isinstance(seen, bytes)
                   else None)
        expected = (ErrorCode.FS_INVALID_ARGUMENT if old == new
                    else self.expect_modify(agent, on_seen))
        if expected is None and seen == self.current:
            assert self.current is not None
            n = self.current.count(old.encode())
            if n == 0:
                expected = ErrorCode.FS_NO_MATCH
            elif n > 1 and not replace_all:
                expected = ErrorCode.FS_MULTIPLE_MATCHES
        assert code is expected, (code, expected)
        if expected is ErrorCode.FS_NOT_FOUND:
            self.seen[agent] = None
        if code is ErrorCode.FS_STALE:
            self.stale(agent)
        if code is None:
            assert self.current is not None
            if seen == self.current:
                self.current = self.current.replace(old.encode(), new.encode())
            self.seen[agent] = self.current

    @rule(agent=AGENTS, line=st.integers(0, 6), text=WORDS)
    def insert(self, agent: str, line: int, text: str) -> None:
        code = self.run(agent, "str_replace_editor", command="insert", path=P,
                        insert_line=line, new_str=text + "\n")
        seen = self.seen.get(agent)
        on_seen = self.inserted(seen, line, text + "\n") if isinstance(seen, bytes) else None
        expected = self.expect_modify(agent, on_seen)
        if expected is None and seen == self.current:
            assert self.current is not None
            lines = self.current.decode().splitlines(keepends=True)
            if line > len(lines):
                expected = ErrorCode.FS_INVALID_ARGUMENT
        assert code is expected, (code, expected)
        if expected is ErrorCode.FS_NOT_FOUND:
            self.seen[agent] = None
        if code is ErrorCode.FS_STALE:
            self.stale(agent)
        if code is None:
            assert self.current is not None
            if seen == self.current:
                self.current = self.inserted(self.current, line, text + "\n")
            self.seen[agent] = self.current

    @rule(agent=AGENTS, text=TEXTS)
    def create(self, agent: str, text: str) -> None:
        code = self.run(agent, "str_replace_editor", command="create", path=P, file_text=text)
        same = self.current == text.encode()  # already there: success without a write
        assert code is (None if self.current is None or same else ErrorCode.FS_ALREADY_EXISTS)
        if code is None:
            self.current = text.encode()
            self.seen[agent] = self.current

    @rule(text=TEXTS)
    def external_write(self, text: str) -> None:
        self.ws.backend.write("f.txt", text.encode(), Overwrite())
        self.current = text.encode()

    @rule()
    def external_delete(self) -> None:
        if self.current is not None:
            self.ws.backend.delete("f.txt")
            self.current = None

    @invariant()
    def storage_matches_model(self) -> None:
        assert self.actual() == self.current


class LocalAgentsVsModel(AgentsVsModel):
    kind = "local"


TestMemoryAgents = AgentsVsModel.TestCase
TestMemoryAgents.settings = settings(max_examples=60, stateful_step_count=40, deadline=None)
TestLocalAgents = LocalAgentsVsModel.TestCase
TestLocalAgents.settings = settings(max_examples=30, stateful_step_count=40, deadline=None)

"""Stateful fuzzing: 3 agents and an external writer against a reference model.

Every call's outcome code is predicted by a simple model of the observation policy, and
after every step the bytes in storage equal the model's. So: no successful write is lost,
every failed call leaves the bytes unchanged, and every FS_STALE is justified by an
intervening change (the model only predicts FS_STALE when the content differs from what
the agent last saw).
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

    def expect_modify(self, agent: str) -> ErrorCode | None:
        """The policy's verdict for an edit/insert by ``agent`` (None: allowed)."""
        seen = self.seen.get(agent, UNSEEN)
        if self.current is None:
            return ErrorCode.FS_NOT_FOUND
        if seen is UNSEEN:
            return ErrorCode.FS_NOT_OBSERVED
        if seen != self.current:
            return ErrorCode.FS_STALE
        return None

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
        if seen is UNSEEN:
            expected = None if self.current is None else ErrorCode.FS_NOT_OBSERVED
        elif seen is None:
            expected = None if self.current is None else ErrorCode.FS_STALE
        else:
            expected = None if seen == self.current else ErrorCode.FS_STALE
        assert code is expected
        if code is None:
            self.current = text.encode()
            self.seen[agent] = self.current

    @rule(agent=AGENTS, old=WORDS, new=WORDS, replace_all=st.booleans())
    def edit(self, agent: str, old: str, new: str, replace_all: bool) -> None:
        code = self.run(agent, "edit", file_path=P, old_string=old, new_string=new,
                        replace_all=replace_all)
        # Arguments are checked before the file is touched.
        expected = ErrorCode.FS_INVALID_ARGUMENT if old == new else self.expect_modify(agent)
        if expected is None:
            assert self.current is not None
            n = self.current.count(old.encode())
            if n == 0:
                expected = ErrorCode.FS_NO_MATCH
            elif n > 1 and not replace_all:
                expected = ErrorCode.FS_MULTIPLE_MATCHES
        assert code is expected, (code, expected)
        if expected is ErrorCode.FS_NOT_FOUND:
            self.seen[agent] = None
        if code is None:
            assert self.current is not None
            self.current = self.current.replace(old.encode(), new.encode())
            self.seen[agent] = self.current

    @rule(agent=AGENTS, line=st.integers(0, 6), text=WORDS)
    def insert(self, agent: str, line: int, text: str) -> None:
        code = self.run(agent, "str_replace_editor", command="insert", path=P,
                        insert_line=line, new_str=text + "\n")
        expected = self.expect_modify(agent)
        if expected is None:
            assert self.current is not None
            lines = self.current.decode().splitlines(keepends=True)
            if line > len(lines):
                expected = ErrorCode.FS_INVALID_ARGUMENT
        assert code is expected, (code, expected)
        if expected is ErrorCode.FS_NOT_FOUND:
            self.seen[agent] = None
        if code is None:
            assert self.current is not None
            lines = self.current.decode().splitlines(keepends=True)
            lines.insert(line, text + "\n")
            self.current = "".join(lines).encode()
            self.seen[agent] = self.current

    @rule(agent=AGENTS, text=TEXTS)
    def create(self, agent: str, text: str) -> None:
        code = self.run(agent, "str_replace_editor", command="create", path=P, file_text=text)
        assert code is (None if self.current is None else ErrorCode.FS_ALREADY_EXISTS)
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

"""What the per-call cuts (issue 20) must keep: the shortcuts give the same values as the
long way."""

from __future__ import annotations

from fsseam import Workspace
from fsseam.backends.memory import isolated_memory_filesystem
from fsseam.outcomes import ReadOutcome


def test_a_read_outcome_is_what_validation_would_build() -> None:
    ws = Workspace("memory://percall", fs=isolated_memory_filesystem())
    ctx = ws.context("a")
    ctx.fs.write("/f.txt", "a\nb\n" + "x" * 3000 + "\n")
    out = ctx.fs.read("/f.txt", max_chars=100, max_line_chars=10)
    again = ReadOutcome.model_validate(out.model_dump())
    assert again == out
    assert out.model_dump()["cut"] == {3: 3000}
    assert out.model_dump_json() == again.model_dump_json()

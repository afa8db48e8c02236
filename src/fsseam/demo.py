"""``fsseam demo``: a scripted two-agent session showing reads, edits, a stale conflict,
its recovery, and a conditional write the storage itself refuses.

    fsseam demo                  # memory://demo
    fsseam demo /tmp/scratch     # any URL whose root has no notes.md yet
    fsseam demo --backend s3     # against a moto S3 server started for the demo

Each step prints the tool call, the text the model sees, the version the storage minted
and the unified diff of each change. Nothing here is hidden from the library's users: it
is the public API (``Workspace``, ``ctx.tools.execute``) plus one write straight through
the backend standing in for someone outside fsseam.
"""

from __future__ import annotations

import importlib
import json
import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from .conflicts import stale_story
from .errors import ErrorCode, FsError
from .tools.base import ToolResult
from .versions import Overwrite
from .workspace import Context, Workspace

__all__ = [
    "DEFAULT_URL",
    "DEMO_DESCRIPTION",
    "S3_INSTALL_HINT",
    "DemoError",
    "moto_s3",
    "run_demo",
    "run_s3_demo",
]

DEFAULT_URL = "memory://demo"
S3_INSTALL_HINT = (
    "install fsseam-s3 with its test extra in one pip command (so pip picks a boto3 that "
    "fits the botocore s3fs pins): pip install 'fsseam-s3[test]' from an index that has it, "
    "or from a clone of fsseam: pip install './backends/s3[test]'"
)
DEMO_DESCRIPTION = (
    "Run a scripted two-agent session: agent-a and agent-b read and edit one file; agent-a's "
    "edit from its old view is refused with FS_STALE, shown what changed, and retried as it "
    "is (its old_string still occurs exactly once), landing on top of agent-b's change; a "
    "write from an outdated view is refused by the storage's compare-and-swap. Prints each "
    "tool call, the text the model sees and the diff of each change. " + stale_story()
)
"""``fsseam demo --help``: the session, and what to do after FS_STALE in the words the
refusals use (the catalogue's, so help and errors cannot drift apart)."""
PATH = "/notes.md"
KEY = "notes.md"

NOTES = """# Launch checklist

- write the release notes
- tag the release
- announce it
"""

DONE = ("- write the release notes", "- write the release notes (done)")


class DemoError(RuntimeError):
    """The demo cannot run here (the location is not empty, a package is missing)."""


class _Script:
    def __init__(self, ws: Workspace, out: TextIO) -> None:
        self.ws = ws
        self.out = out
        self.n = 0
        self.results: list[ToolResult] = []

    def say(self, text: str = "") -> None:
        self.out.write(text + "\n")

    def step(self, ctx: Context, tool: str, args: dict[str, Any], why: str) -> ToolResult:
        self.n += 1
        self.say(f"[{self.n}] {ctx.owner}: {why}")
        self.say(f"    call  {tool} {json.dumps(args, ensure_ascii=False)}")
        res = ctx.tools.execute(tool, args)
        self.results.append(res)
        self.say("    model sees:")
        for line in res.text.split("\n"):
            self.say(f"    | {line}")
        version = getattr(res.value, "version", None)
        if version is not None:
            self.say(f"    version  {version.short}")
        diff = getattr(res.value, "diff", None)
        if diff:
            self.say("    diff:")
            self.say(diff.rstrip("\n"))
        self.say()
        return res


def _expect(res: ToolResult, code: ErrorCode | None) -> None:
    """The script is deterministic; a different outcome means a bug, so say so loudly."""
    got = None if res.ok else res.error.code if res.error else None
    if got != code:
        raise DemoError(
            f"unexpected outcome of {res.tool}: expected {code.value if code else 'ok'}, "
            f"got: {res.text}"
        )


def _prepare(ws: Workspace, *, reuse: bool) -> None:
    try:
        ws.backend.stat(KEY)
    except FsError as e:
        if e.code is ErrorCode.FS_NOT_FOUND:
            return
        raise
    if not reuse:
        raise DemoError(
            f"{ws.url} already has {PATH}; the demo creates it, so point it at an empty "
            "location"
        )
    ws.backend.delete(KEY)  # left by an earlier demo in this process (memory://demo)


def _outside_write(s: _Script, ws: Workspace) -> None:
    """A writer that is no agent of fsseam's rewrites the file with no precondition."""
    s.n += 1
    s.say(f"[{s.n}] outside fsseam: someone rewrites {PATH} with no precondition")
    s.say(f"    (a person, a sync job: backend.write({KEY!r}, ..., Overwrite()))")
    current = ws.backend.read(KEY).data.decode()
    version = ws.backend.write(KEY, current.replace(*DONE).encode(), Overwrite())
    s.say(f"    version  {version.short}")
    s.say()


def run_demo(
    url: str | None = None,
    storage_options: dict[str, Any] | None = None,
    out: TextIO | None = None,
) -> list[ToolResult]:
    """Run the scripted session on ``url`` (``memory://demo`` by default); print to ``out``.

    Returns the results of the tool calls. Raises DemoError when the location already
    holds the demo's file (except the default memory root, which is reset) and FsError for
    a misconfigured workspace.
    """
    out = out or sys.stdout
    ws = Workspace(url or DEFAULT_URL, storage_options=storage_options)
    _prepare(ws, reuse=url is None or url == DEFAULT_URL)
    caps = ws.backend.capabilities
    s = _Script(ws, out)
    a, b = ws.context("agent-a"), ws.context("agent-b")

    s.say(f"fsseam demo on {ws.url}")
    s.say(
        f"backend {type(ws.backend).__name__}: versions are {caps.version_kind}; "
        f"compare-and-swap is {'atomic' if caps.if_match_atomic else 'emulated (not atomic)'}"
    )
    s.say()

    _expect(s.step(a, "write", {"file_path": PATH, "content": NOTES},
                   "creates the file (a new file needs no read)"), None)
    _expect(s.step(a, "read", {"file_path": PATH},
                   "reads it; the policy records the version it saw"), None)
    _expect(s.step(b, "read", {"file_path": PATH}, "reads the same file"), None)
    _expect(s.step(b, "edit", {"file_path": PATH, "old_string": "- tag the release",
                               "new_string": "- tag the release (v1.0)"},
                   "edits it, compare-and-swap against the version it read"), None)
    edit_a = {"file_path": PATH, "old_string": "- announce it",
              "new_string": "- announce it on the blog"}
    _expect(s.step(a, "edit", edit_a,
                   "edits from its old view: refused, and shown what changed since its read"),
            ErrorCode.FS_STALE)
    _expect(s.step(a, "edit", edit_a,
                   "retries at once (the refusal showed all of agent-b's change, so agent-a "
                   "has seen the current version): it lands on top of agent-b's"), None)

    _outside_write(s, ws)
    where = "the storage itself" if caps.if_match_atomic else "the backend"
    _expect(s.step(a, "write", {"file_path": PATH, "content": NOTES},
                   f"rewrites the whole file from its last view: {where} refuses the "
                   "conditional write (if-match on the version agent-a saw)"),
            ErrorCode.FS_STALE)

    final = ws.backend.read(KEY).data.decode()
    s.say(f"{PATH} at the end (nothing was lost):")
    for line in final.splitlines():
        s.say(f"    {line}")
    return s.results


@contextmanager
def moto_s3(err: TextIO | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
    """A moto S3 server on 127.0.0.1 with a fresh bucket: yields (url, storage_options)."""
    err = err or sys.stderr
    try:
        import fsseam_s3  # noqa: F401
    except ImportError as e:
        raise DemoError(
            f"the S3 demo needs the S3 adapter and moto ({e}): {S3_INSTALL_HINT}"
        ) from e
    try:
        boto3 = importlib.import_module("boto3")
        from moto.server import ThreadedMotoServer
    except ImportError as e:
        raise DemoError(f"the S3 demo needs moto's server ({e}): {S3_INSTALL_HINT}") from e

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no log line per request
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        endpoint = f"http://{host}:{port}"
        err.write(f"fsseam demo: moto S3 server on {endpoint}\n")
        bucket = "fsseam-demo"
        boto3.client(
            "s3",
            endpoint_url=endpoint,
            region_name="us-east-1",
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
        ).create_bucket(Bucket=bucket)
        yield f"s3://{bucket}/demo", {"endpoint_url": endpoint, "key": "testing",
                                      "secret": "testing"}
    finally:
        server.stop()
        err.write("fsseam demo: moto S3 server stopped\n")


def run_s3_demo(out: TextIO | None = None, err: TextIO | None = None) -> list[ToolResult]:
    """:func:`run_demo` against a moto S3 server started (and stopped) for the demo."""
    with moto_s3(err) as (url, options):
        return run_demo(url, options, out)

"""Every code block of the docs runs as written (the conventions: tests/docsnippets.py).

One test per page: its python blocks in order in one namespace, in this process, in a
fresh temporary directory as the working directory; its shell blocks through bash with
this interpreter's ``fsseam`` and ``python`` first on PATH. What cannot be given offline
as the page writes it (a bucket, a project directory, a model key) is replaced by the
page's entry in ``PAGES`` below, never in the page: each pair's text must occur on its
page, so a stale entry fails too.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from .docsnippets import DocError, Step, blocks, execute, plan

ROOT = Path(__file__).resolve().parent.parent
FIELD = re.compile(r"\{(tmp|root|bucket|s3_endpoint|container|azure)\}")
DOCS = ROOT / "docs"


@dataclass(frozen=True)
class Page:
    """How one page runs here: (text, replacement) pairs, whose replacement may name
    ``{tmp}`` (the page's directory), ``{root}`` (this checkout), ``{bucket}`` (a fresh
    bucket on the session's moto server: ``s3``), ``{container}`` and ``{azure}`` (a
    container on Azurite and its connection string: ``azure``)."""

    subs: tuple[tuple[str, str], ...] = ()
    needs: frozenset[str] = field(default_factory=frozenset)


S3 = frozenset({"s3"})
AZURE = frozenset({"azure"})

PAGES: dict[str, Page] = {
    "docs/architecture.md": Page(subs=(("python bench/", "python {root}/bench/"),)),
    "docs/azure.md": Page(
        subs=(("az://my-container/", "az://{container}/"),
              ("DefaultEndpointsProtocol=https;...", "{azure}")),
        needs=AZURE,
    ),
    "docs/backends.md": Page(
        subs=(("s3://bucket/prefix", "s3://{bucket}/prefix"),
              ('"az://container/prefix", storage_options={"connection_string": "..."}',
               '"az://{container}/prefix", storage_options={"connection_string": "{azure}"}')),
        needs=S3 | AZURE,
    ),
    "docs/cli.md": Page(
        subs=(("/tmp/proj", "{tmp}/proj"), ("s3://bucket/", "s3://{bucket}/")), needs=S3
    ),
    "docs/distributed.md": Page(
        subs=(("s3://bucket/", "s3://{bucket}/"),
              ('storage_options={"profile": "agents"}', "storage_options={}"),
              # threads: pickling is the block above's, and tests/test_dask_agents.py
              # runs agents on a cluster of processes
              ("n_workers=8, processes=True",
               "n_workers=2, processes=False, dashboard_address=None")),
        needs=S3,
    ),
    "docs/filesystem.md": Page(subs=(("/home/me/project", "{tmp}"),)),
    "docs/mcp.md": Page(
        subs=(("/path/to/project", "{tmp}"),
              ("s3://bucket/prefix -o endpoint_url=http://127.0.0.1:5000 -o key=K -o secret=S",
               "s3://{bucket}/prefix -o endpoint_url={s3_endpoint} -o key=testing "
               "-o secret=testing")),
        needs=S3,
    ),
    "docs/mounts.md": Page(
        subs=(("s3://bucket/", "s3://{bucket}/"),
              ("http://127.0.0.1:9000", "{s3_endpoint}"),
              ('"minioadmin", "secret": "minioadmin"', '"testing", "secret": "testing"')),
        needs=S3,
    ),
}

def page_names() -> list[str]:
    pages = sorted(p.relative_to(ROOT).as_posix() for p in DOCS.rglob("*.md"))
    return [*pages, "README.md"]


def test_the_table_names_pages_that_exist() -> None:
    assert set(PAGES) <= set(page_names()), set(PAGES) - set(page_names())


@pytest.fixture
def isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """The page's directory as cwd; fsspec's shared memory store, the observations this
    process keeps per workspace URL and the message catalogue as they were before the page
    ran (pages name stores like ``memory://demo``, which other tests may use too)."""
    from fsspec.implementations.memory import MemoryFileSystem

    from fsseam import messages
    from fsseam.observations import opening

    store, dirs = dict(MemoryFileSystem.store), list(MemoryFileSystem.pseudo_dirs)
    catalogue = dict(messages._MESSAGES)
    shared = opening._shared.copy()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / ".cache"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    try:
        yield tmp_path
    finally:
        MemoryFileSystem.store.clear()
        MemoryFileSystem.store.update(store)
        MemoryFileSystem.pseudo_dirs[:] = dirs
        messages._MESSAGES.clear()
        messages._MESSAGES.update(catalogue)
        with opening._shared_lock:
            opening._shared.clear()
            opening._shared.update(shared)


def page_values(page: Page, tmp: Path, request: pytest.FixtureRequest,
            monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    values = {"tmp": str(tmp), "root": str(ROOT)}
    if "s3" in page.needs:
        server: Any = request.getfixturevalue("fsseam_moto_server")
        values["bucket"] = server.create_bucket()
        values["s3_endpoint"] = server.url
        # s3fs and the CLI read these, as they would a user's configured AWS profile.
        monkeypatch.setenv("AWS_ENDPOINT_URL", server.url)
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
        monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    if "azure" in page.needs:
        azurite: Any = request.getfixturevalue("azurite")
        values["container"] = azurite.create_container()
        values["azure"] = azurite.connection_string
    return values


def shell_env() -> dict[str, str]:
    """This interpreter's ``fsseam`` and ``python`` first on PATH. A page's pytest run loads
    fsseam's plugin alone: the other plugins of this venv are not the page's (and cost
    seconds to import); test_pytest_plugin.py checks the entry point that loads it in a
    user's install, and the install-line test runs pages with every plugin they install."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    env["PYTEST_PLUGINS"] = "fsseam.pytest_plugin"
    return env


def page_steps(name: str, values: dict[str, str]) -> list[Step]:
    """A page's steps with its substitutions made (each must find its text)."""
    page = PAGES.get(name, Page())
    text = (ROOT / name).read_text(encoding="utf-8")
    for old, _ in page.subs:
        assert old in text, f"{name}: the substitution for {old!r} finds nothing"
    pairs = [(old, FIELD.sub(lambda m: values[m[1]], new)) for old, new in page.subs]
    return plan(blocks(ROOT / name, name), pairs)


@pytest.mark.parametrize("name", page_names())
def test_page_runs_verbatim(name: str, isolated: Path, request: pytest.FixtureRequest,
                            monkeypatch: pytest.MonkeyPatch) -> None:
    values = page_values(PAGES.get(name, Page()), isolated, request, monkeypatch)
    execute(page_steps(name, values), isolated, shell_env())



def test_the_readme_example_prints_what_the_readme_shows(isolated: Path) -> None:
    """The README's example and the output shown under it are one run's."""
    page = blocks(ROOT / "README.md", "README.md")
    example = next(b for b in page if b.lang == "python")
    shown = next(b for b in page[page.index(example) + 1:] if b.lang == "text")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(example.text, "README.md", "exec"), {"__name__": "__main__"})
    assert printed.getvalue() == shown.text + "\n"

# -- the harness's own rules ----------------------------------------------------------------
FENCE = "```"


def _page(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "page.md"
    path.write_text(text.replace("~~~", FENCE), encoding="utf-8")
    return path


def test_what_runs_and_what_does_not(tmp_path: Path) -> None:
    path = _page(tmp_path, (
        "~~~python\nx = 1\n~~~\n\n"
        "~~~bash\npip install '.[mcp]'   # left to the install test\n"
        "echo one \\\n  two > out.txt\n~~~\n\n"
        "~~~text\nError [FS_STALE]: shown, not run\n~~~\n\n"
        "~~~python\n# not run: a fragment\nclient.messages.create(...)\n~~~\n\n"
        "~~~python\n# file: test_x.py\ndef test_x():\n    pass\n~~~\n\n"
        "~~~console\n$ cat out.txt\none two\n~~~\n"
    ))
    steps = plan(blocks(path, "page.md"), [("x = 1", "x = 2")])
    assert [(s.kind, s.where, s.code) for s in steps] == [
        ("python", "page.md:1", "x = 2"),
        ("shell", "page.md:5", "echo one    two > out.txt"),
        ("file", "test_x.py", "def test_x():\n    pass"),
        ("shell", "page.md:26", "cat out.txt"),
    ]
    execute(steps, tmp_path, shell_env())
    assert (tmp_path / "out.txt").read_text() == "one two\n"
    assert (tmp_path / "test_x.py").read_text() == "def test_x():\n    pass"


@pytest.mark.parametrize(("text", "error"), [
    ("~~~\nprint(1)\n~~~\n", "page.md:1: a code block without a language"),
    ("~~~bash\nls\n~~~ and prose\n", "page.md:3: text after a closing fence"),
    ("~~~python\nx = 1\n", "page.md:1: a code block that is never closed"),
])
def test_a_block_nobody_can_classify_is_an_error(tmp_path: Path, text: str, error: str) -> None:
    with pytest.raises(DocError, match=re.escape(error)):
        blocks(_page(tmp_path, text), "page.md")


def test_a_block_that_defines_tests_must_be_a_file(tmp_path: Path) -> None:
    steps = plan(blocks(_page(tmp_path, "~~~python\ndef test_a():\n    pass\n~~~\n"),
                        "page.md"), [])
    with pytest.raises(DocError, match=re.escape("page.md:1: defines test_a but nothing runs")):
        execute(steps, tmp_path)


def test_a_failing_block_names_its_page_line(tmp_path: Path) -> None:
    path = _page(tmp_path, "text\n\n~~~bash\ntrue\nfalse\n~~~\n\n~~~python\n\n1 / 0\n~~~\n")
    steps = plan(blocks(path, "page.md"), [])
    with pytest.raises(DocError, match=re.escape("page.md:3: exit 1")):
        execute(steps, tmp_path, shell_env())
    with pytest.raises(ZeroDivisionError) as info:
        execute(steps[1:], tmp_path)
    assert info.traceback[-1].lineno + 1 == 10  # the page's own line of "1 / 0"

"""The size rule: no module over 400 lines, no function over 60, under ``src/`` and every
``backends/*/src/``.

A module or function may be longer only if it is in :data:`EXCEPTIONS`, with a one-line
reason that holds for good (a table is read as one; so is a class). An entry that is no
longer too long (or no longer exists) fails the test too, so that the table keeps no
licence nobody uses.
"""

from __future__ import annotations

import textwrap
from functools import cache
from pathlib import Path

from .architecture import function_lengths, module_lines, source_files, source_roots

MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60

# Modules by dotted name, functions as "module:Qualified.name".
EXCEPTIONS: dict[str, str] = {
    # A class is read whole in its module: split, its methods would reach into its
    # private state from another file, which is worse than a long module.
    "fsseam.backends.objectstore.backend": "ObjectStoreBackend, one class whole",
    "fsseam.backends.base": "the Backend contract and Wrapper, each one class whole",
    "fsseam.backends._fsspec": "FsspecDigestBackend, one class whole",
    "fsseam.backends.history.backend": "KeptHistoryBackend and its budget, one concept",
    "fsseam_s3.client": "the S3 store client, one class whole",
    "fsseam_gcs.client": "the GCS store client, one class whole",
    "fsseam_azure.client": "the Azure store client, one class whole",
}


def offenders(roots: list[Path]) -> dict[str, int]:
    """Every module over :data:`MAX_MODULE_LINES` and function over
    :data:`MAX_FUNCTION_LINES` under ``roots``, with its lines."""
    found: dict[str, int] = {}
    for module, path in sorted(source_files(roots).items()):
        lines = module_lines(path)
        if lines > MAX_MODULE_LINES:
            found[module] = lines
        for name, _, length in function_lengths(path):
            if length > MAX_FUNCTION_LINES:
                found[f"{module}:{name}"] = length
    return found


@cache
def _repo() -> dict[str, int]:
    return offenders(source_roots())


def test_no_module_or_function_over_the_limit() -> None:
    too_long = {name: lines for name, lines in _repo().items() if name not in EXCEPTIONS}
    assert too_long == {}, (
        f"split these (modules over {MAX_MODULE_LINES} lines, functions over "
        f"{MAX_FUNCTION_LINES}), or add a permanent reason to EXCEPTIONS in tests/test_sizes.py"
    )


def test_every_table_entry_is_still_too_long() -> None:
    found = _repo()
    stale = sorted(name for name in EXCEPTIONS if name not in found)
    assert stale == [], "no longer too long: remove from tests/test_sizes.py"


def test_every_exception_says_why() -> None:
    assert all(reason.strip() for reason in EXCEPTIONS.values())


def test_every_kind_of_function_is_measured(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(60))
    source = textwrap.dedent("""\
        def short():
            pass


        class Outer:
            async def method(self):
        {body}

            class Inner:
                def deep(self):
                    def local():
        {deep}
        """).format(
        body=textwrap.indent(body, "    "), deep=textwrap.indent(body, "            ")
    )
    package = tmp_path / "src" / "pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "mod.py").write_text(source + "\n" * (401 - source.count("\n")))
    found = offenders([tmp_path / "src"])
    assert found == {
        "pkg.mod": 401,
        "pkg.mod:Outer.method": 61,
        "pkg.mod:Outer.Inner.deep": 62,
        "pkg.mod:Outer.Inner.deep.local": 61,
    }

"""deepagents' own backend tests, run against fsseam's ``FsseamBackend`` (see ``swap.py``).

A test listed in :data:`NOT_APPLICABLE` is skipped with its reason: each is a documented
non-applicability (a private helper of deepagents' own backend, a keyword no
``BackendProtocol`` has, a behaviour where fsseam differs on purpose), not a missing
feature. The same table is in ``docs/integrations/deepagents.md``. Tests built with
``virtual_mode=False`` skip themselves in the swap (host paths: a workspace is rooted).
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

import pytest

pytest.importorskip(
    "deepagents", reason="deepagents is not installed: pip install -e '.[deepagents]'"
)

PRIVATE = "a private helper or engine of deepagents' own backend (ripgrep, its Python search)"
FAULTS = "patches deepagents' own implementation (Path.rglob, Path.unlink) to inject a fault"
CONTEXT = "grep(context_lines=...) is a keyword of deepagents' FilesystemBackend only, no part "\
    "of BackendProtocol nor of the grep tool"
GUARD = "changes a file it never read: fsseam refuses (FS_NOT_OBSERVED), by design"
WORDS = "asserts deepagents' own error wording; fsseam's error says its code and next step " \
    "(and keeps the not_a_directory token deepagents' middleware reads)"
RAISES = "expects an exception; fsseam returns every refusal as an error result " \
    "(FS_OUTSIDE_ROOT), as BackendProtocol asks"
OTHER = "tests another of deepagents' backends (State, Store, the sandbox's glob script, a " \
    "composite without a FilesystemBackend route), not the one fsseam stands in for"
LOOP = "expects a per-child error for a symlink loop in a listing; fsseam lists the link"

NOT_APPLICABLE: dict[str, str] = {
    "test_filesystem_backend_virtual_mode": RAISES,
    "test_filesystem_backend_ls_nested_directories": WORDS,
    "test_filesystem_backend_ls_trailing_slash": WORDS,
    "test_ls_nonexistent_path_sets_error": WORDS,
    "test_ls_file_path_sets_not_a_directory_error": WORDS,
    "test_ls_virtual_mode_reports_child_symlink_loop": LOOP,
    "test_grep_python_fallback_survives_mid_iteration_failure": FAULTS,
    "test_grep_virtual_mode_sanitizes_runtime_error_details": FAULTS,
    "test_grep_virtual_mode_sanitizes_oserror_path": FAULTS,
    "TestToVirtualPath": PRIVATE,
    "TestDisplayPath": PRIVATE,
    "TestGrepPythonFallbackTimeout": PRIVATE,
    "TestFilesystemGrepContext": CONTEXT,
    "TestFilesystemDelete::test_delete_existing_file": GUARD,
    "TestFilesystemDelete::test_delete_directory_recursively": GUARD,
    "TestFilesystemDelete::test_delete_directory_leaves_siblings": GUARD,
    "TestFilesystemDelete::test_delete_only_removes_target": GUARD,
    "TestFilesystemDelete::test_adelete_existing_file": GUARD,
    "TestFilesystemDelete::test_delete_unlink_failure_returns_error": GUARD,
    "TestFilesystemDelete::test_delete_missing_file_returns_error": WORDS,
    "TestFilesystemDelete::test_delete_resolve_failure_returns_error": PRIVATE,
    "test_glob_backend_budget_below_middleware_deadline": PRIVATE,
    # test_filesystem_backend_async.py
    "test_filesystem_backend_async_virtual_mode": RAISES,
    "test_filesystem_backend_als_nested_directories": WORDS,
    "test_filesystem_backend_als_trailing_slash": WORDS,
    "test_als_nonexistent_path_sets_error": WORDS,
    "test_als_file_path_sets_not_a_directory_error": WORDS,
    "test_filesystem_aedit_replace_all": GUARD,
    "test_filesystem_agrep_with_context": CONTEXT,
    "test_filesystem_agrep_with_context_times_out": CONTEXT,
    # test_composite_backend.py (its tests without a FilesystemBackend route: OTHER)
    "test_composite_backend_ls_trailing_slash": WORDS,
    # test_glob_semantics.py: the matrix runs on fsseam; the rest are other backends.
    "TestSandboxGlobScriptMatrix::test_matches_filesystem_backend": OTHER + "; it starts a "
    "Python process per pattern (5 s of the suite)",
    "TestGlobSearchFilesMatrix": OTHER,
    "TestStateBackendGlobMatrix": OTHER,
    "TestStoreBackendGlobMatrix": OTHER,
    "TestSandboxGlobScriptMatrix::test_matrix": OTHER,
    "TestSandboxGlobScriptMatrix::test_hidden_dirs": OTHER,
    "TestSandboxGlobBraceExpansionLimit": OTHER,
    "test_build_glob_cmd_passes_user_pattern_unchanged": OTHER,
    "test_glob_command_template_uses_walk_not_stdlib_glob": OTHER,
    "test_glob_directory_only_walk_honors_time_budget": OTHER,
    "test_glob_script_body_is_shell_safe": OTHER,
    "test_glob_script_skips_symlinks_outside_root": OTHER,
    "test_glob_script_reports_unreadable_subtree_instead_of_shrinking": OTHER,
}
"""Test (``name``, ``Class``, or ``Class::name``) -> why it does not apply to fsseam."""


def _reason(item: pytest.Item) -> str | None:
    function = getattr(item, "function", None)
    if (item.path.name == "test_composite_backend.py" and function is not None
            and "FilesystemBackend" not in inspect.getsource(function)):
        return OTHER
    name = getattr(item, "originalname", item.name)
    cls = item.cls.__name__ if getattr(item, "cls", None) is not None else None
    for key in (f"{cls}::{name}" if cls else name, cls):
        if key is not None and key in NOT_APPLICABLE:
            return NOT_APPLICABLE[key]
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # The hook sees the whole session's items, not only this directory's. Tests of
    # deepagents' other backends test nothing of fsseam's: they are deselected (counted as
    # such), not reported as skipped tests of fsseam; the rest that do not apply skip with
    # their reason.
    other: list[pytest.Item] = []
    kept: list[pytest.Item] = []
    for item in items:
        reason = _reason(item) if "deepagents_upstream" in item.nodeid else None
        if reason == OTHER or (reason is not None and reason.startswith(OTHER)):
            other.append(item)
            continue
        if reason is not None:
            item.add_marker(pytest.mark.skip(reason=f"does not apply to fsseam: {reason}"))
        kept.append(item)
    if other:
        items[:] = kept
        config.hook.pytest_deselected(items=other)


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """deepagents runs its async tests with pytest-asyncio; here each runs in a loop of
    its own."""
    if not inspect.iscoroutinefunction(pyfuncitem.obj):
        return None
    names = pyfuncitem._fixtureinfo.argnames
    args: dict[str, Any] = {n: pyfuncitem.funcargs[n] for n in names}
    asyncio.run(pyfuncitem.obj(**args))
    return True

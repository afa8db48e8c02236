"""The public surface is exactly what is documented (like httpx's test of its exports)."""

from __future__ import annotations

import fsseam

DOCUMENTED = {
    # the documented public API (README, docs/quickstart.md)
    "Workspace", "Context", "ErrorCode", "FsError", "ToolResult", "ToolError",
    "UnknownToolError",
    # versions and preconditions
    "Version", "Overwrite", "CreateOnly", "IfMatch", "Precondition", "Capabilities", "Conflict",
    # backends
    "Backend", "open_backend",
    # the seam and its outcomes
    "Seam", "Limits", "ReadOutcome", "WriteOutcome", "EditOutcome", "StatOutcome",
    "ListOutcome", "ListEntry", "GlobOutcome", "GrepOutcome", "DeleteOutcome", "MoveOutcome",
    "ChangeOutcome", "ChangedFile",
    # gate, events, policy
    "hookimpl", "hookspec", "FsEvent", "ReadEvent", "MissingEvent", "WriteIntent",
    "EditIntent", "WrittenEvent", "StatEvent", "ListEvent", "DeleteIntent", "DeletedEvent",
    "ObservationPolicy", "Ledger",
    # where observations live (docs/observations.md)
    "ObservationStore", "MemoryObservations", "FileObservations", "ShardedObservations",
    # tools, for users who compose their own registry
    "Tool", "ToolRegistry", "ReadTool", "WriteTool", "EditTool", "StrReplaceEditor",
    "LsTool", "GlobTool", "GrepTool", "DeleteTool", "MoveTool",
    "MultiEditTool", "ApplyPatchTool", "MemoryTool", "MemoryOutcome",
    # what a tool result carries beside its text, and the named tool sets (docs/tools.md)
    "ImageContent", "TOOL_SETS",
    # history: opt-in kept history, the history and restore tools and their outcomes,
    # undo's event, and what a write tells a store that keeps it
    "History", "HistoryTool", "RestoreTool", "HistoryOutcome", "HistoryEntry",
    "RestoreOutcome", "UndoIntent", "WriteMeta",
    # the guarded fsspec filesystem's one refusal (docs/filesystem.md)
    "GuardRefused",
    # branches: a review, a merge's report, the branches listed, collect's count
    # (docs/branches.md)
    "BranchDiff", "FileChange", "MergeOutcome", "MergeConflict", "BranchInfo", "HeadInfo",
    "CollectOutcome", "RebaseOutcome",
    # the audit trail: reading, verifying, anchoring it (docs/audit.md)
    "AuditTrail", "AuditEntry", "AuditReport", "AuditProblem", "Anchor",
}


def test_all_is_exactly_the_documented_surface() -> None:
    assert set(fsseam.__all__) == DOCUMENTED
    assert sorted(fsseam.__all__, key=str.lower) == sorted(DOCUMENTED, key=str.lower)


def test_every_exported_name_exists() -> None:
    for name in fsseam.__all__:
        assert getattr(fsseam, name) is not None, name


def test_error_codes_are_the_design_codes() -> None:
    assert [c.value for c in fsseam.ErrorCode] == [
        "FS_NOT_FOUND", "FS_NOT_OBSERVED", "FS_STALE", "FS_ALREADY_EXISTS", "FS_IS_DIRECTORY",
        "FS_NOT_TEXT", "FS_TOO_LARGE", "FS_NO_MATCH", "FS_MULTIPLE_MATCHES",
        "FS_INVALID_ARGUMENT", "FS_OUTSIDE_ROOT", "FS_PERMISSION_DENIED", "FS_READ_ONLY",
        "FS_UNSUPPORTED", "FS_BACKEND",
    ]
    assert fsseam.ErrorCode.FS_STALE == "FS_STALE"  # a str enum

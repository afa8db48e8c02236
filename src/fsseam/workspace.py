"""Workspace (one storage root) and Context (one owner's ctx.fs and ctx.tools)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import timedelta
from typing import Any

from .backends.base import Backend
from .backends.history import History, keep_history
from .backends.registry import open_backend
from .branches import open_branch
from .branches.manage import Branches, BranchInfo, CollectOutcome
from .branches.merging import merge, rebase, resume
from .branches.review import BranchDiff, MergeOutcome, RebaseOutcome, review, survey
from .doccache import Authors, DocCache, shared_cache
from .errors import ErrorCode, FsError
from .filesystem import GuardedFileSystem
from .gate import Gate
from .index import FOLDER as INDEX_FOLDER
from .index import PLUGIN_NAME, ReservedIndex, plugin
from .limits import Limits
from .messages import Reason
from .observations import ObservationStore, open_observations
from .observations.opening import (
    ObservationsSpec,
    canonical_url,
    reserved_prefix,
    shared_memory,
)
from .observations.sealing import check_key
from .observations.store import BranchObservations
from .policy import Ledger, ObservationPolicy
from .policy.reserved import ReservedKeys
from .seam import Seam
from .seam.calls import expire as expire_calls
from .spec import (
    ContextSpec,
    WorkspaceSpec,
    opened,
    received_store,
    shipped_store,
    spec_of,
)
from .tools.registry import ToolRegistry

__all__ = ["Context", "Workspace"]


class Workspace:
    """A root on some storage, with its gate and observation policy.

    ``url``: ``/abs/dir``, ``file:///abs/dir``, ``memory://name``, ``s3://bucket/prefix``,
    ``gs://bucket/prefix``, ``az://container/prefix`` or any fsspec URL.
    ``backend="generic"`` uses the generic backend (compare-and-swap emulated in this
    process) even where the protocol has an adapter; a Backend instance is used as it is
    (``url`` then only names it). Several stores under one root: :meth:`mount`.
    ``history``: keep older versions of files for storage that keeps none (local disk,
    memory, generic), so ``history``, ``restore`` and ``undo_edit`` work there too; see
    :class:`~fsseam.backends.history.History`. S3 and GCS keep versions themselves (enable
    versioning on the bucket).
    ``observations``: where what each owner has read is kept (docs/observations.md): a
    store object, a ``.json`` ledger file, any fsspec URL (shard objects there, shared by
    many machines), or ``(url, storage_options)``. Default: in this process, shared by the
    Workspaces of one URL (``ledger=``: in that ledger).
    ``content_index``: keep a content index beside the files (``<root>/.fsseam-index/``,
    hidden from every tool) so a grep reads only the files that may match: True, False,
    or None (the default: on for S3, GCS and Azure, off for local disk and memory); see
    docs/finders.md.
    ``observation_key``: a secret of the application's (bytes): the observations the
    framework integrations keep in state the client holds (a message history, a run
    context, a checkpoint) are signed with it, and one not signed with it is ignored (the
    file must be read again); see docs/observations.md, "Trust".
    ``branch``: work on that branch of the files (as :meth:`branch` opens it): reads see
    the branch's changes over main's current files, changes land on the branch only; see
    docs/branches.md.
    Raises FsError for a misconfigured workspace (unknown protocol, adapter package
    missing, local root that does not exist, ``observations=`` at the root itself, a
    read-only workspace on a branch that does not exist).
    """

    def __init__(
        self,
        url: str,
        storage_options: dict[str, Any] | None = None,
        read_only: bool = False,
        policy: bool = True,
        plugins: Iterable[Any] = (),
        *,
        fs: Any | None = None,
        limits: Limits | None = None,
        ledger: Ledger | None = None,
        load_entry_points: bool = True,
        backend: str | Backend | None = None,
        history: History | None = None,
        observations: ObservationsSpec | None = None,
        content_index: bool | None = None,
        observation_key: bytes | None = None,
        branch: str | None = None,
    ) -> None:
        self.url = url
        self.branch_name = branch
        """The branch this workspace works on (None: main, the files themselves)."""
        self.observation_key = check_key(observation_key)
        self.read_only = read_only
        self._made: dict[str, Any] = {
            "url": url, "storage_options": storage_options, "read_only": read_only,
            "policy": policy, "plugins": tuple(plugins), "fs": fs, "limits": limits,
            "ledger": ledger, "load_entry_points": load_entry_points, "history": history,
            "backend": backend if not isinstance(backend, Backend) else None,
            "backend_instance": backend if isinstance(backend, Backend) else None,
            "observations": observations, "content_index": content_index,
            "observation_key": self.observation_key, "branch": branch,
        }
        plugins = self._made["plugins"]
        if backend is None or isinstance(backend, str):
            self.backend: Backend = open_backend(url, storage_options, fs, backend=backend)
        elif storage_options or fs is not None:
            raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason=Reason.backend_given_with_options)
        else:
            self.backend = backend
        if history is not None:
            self.backend = keep_history(self.backend, history)
        self.branches_of = Branches(self.backend)
        """Main's branches (``branch``, ``diff``, ``merge`` ... are asked of it)."""
        if branch is not None:
            self.backend = open_branch(self.backend, branch, read_only=read_only)
            if not read_only:
                resume(self.backend)  # a merge killed midway is finished by the next open
        self.limits = limits or Limits()
        self.policy: ObservationPolicy | None = (
            self._observation_policy(url, storage_options, ledger, observations,
                                     shared=fs is None and not isinstance(backend, Backend))
            if policy else None
        )
        first: list[Any] = [self.policy] if self.policy is not None else []
        hidden = (reserved_prefix(self.policy.store, self.backend)
                  if self.policy is not None and observations is not None else None)
        self._reserved = {hidden} if hidden is not None else set()
        if branch is not None and self.policy is not None:
            # Main's reads are of other files than the branch's: kept apart, per branch.
            self.policy.store = BranchObservations(self.policy.store, branch)
        if hidden is not None:
            first.append(ReservedKeys(hidden))  # registered last: asked first
        if branch is not None:
            first.append(ReservedIndex(INDEX_FOLDER))  # main's index; a branch keeps none
        self.gate = Gate([*first, *plugins], load_entry_points=load_entry_points)
        index = (plugin(content_index, self.backend, read_only=read_only)
                 if branch is None else None)
        if index is not None:
            self.gate.pm.register(index, name=PLUGIN_NAME)
        self.docs = self._doc_cache(url, storage_options, backend,
                                    private=fs is not None or isinstance(backend, Backend))
        """The text of what was read, kept to show what changed when a write is refused."""
        self._authors = Authors()

    @staticmethod
    def _observation_policy(url: str, storage_options: dict[str, Any] | None,
                            ledger: Ledger | None, observations: ObservationsSpec | None, *,
                            shared: bool) -> ObservationPolicy:
        """Where observations live: ``observations=``; else ``ledger=``; else the
        in-process store this process keeps for the workspace's URL (a notebook cell that
        makes its Workspace again keeps its reads), unless the storage is private to this
        Workspace (a Backend instance, a memory store outside the global one)."""
        if observations is not None:
            if ledger is not None:
                raise TypeError("pass ledger= or observations=, not both")
            return ObservationPolicy(store=open_observations(
                observations, workspace_url=url, storage_options=storage_options))
        private = (storage_options or {}).get("global_store") is False
        if ledger is not None or not shared or private:
            return ObservationPolicy(ledger)
        return ObservationPolicy(store=shared_memory(url, storage_options))

    def _doc_cache(self, url: str, storage_options: dict[str, Any] | None,
                   backend: str | Backend | None, *, private: bool) -> DocCache:
        """The text of what was read, shared by this process's Workspaces of one store (a
        conflict met through another Workspace of the URL, or a new one made for the next
        request, still shows what changed), unless the storage is this Workspace's own."""
        budget = self.limits.doc_cache_bytes
        if private or (storage_options or {}).get("global_store") is False:
            return DocCache(budget)
        options = json.dumps(storage_options or {}, sort_keys=True, default=repr)
        return shared_cache(f"{canonical_url(url)} {backend or ''} {options}", budget)

    @classmethod
    def mount(
        cls,
        mounts: Mapping[str, str | Backend],
        storage_options: Mapping[str, dict[str, Any]] | None = None,
        read_only: bool | Iterable[str] = False,
        policy: bool = True,
        plugins: Iterable[Any] = (),
        *,
        limits: Limits | None = None,
        ledger: Ledger | None = None,
        load_entry_points: bool = True,
        backend: Mapping[str, str] | None = None,
        history: History | Mapping[str, History] | None = None,
        observations: ObservationsSpec | None = None,
        observation_key: bytes | None = None,
        branch: str | None = None,
    ) -> Workspace:
        """One workspace over several stores, each at a mount point::

            Workspace.mount(
                {"/": "memory://scratch", "/data": "s3://bucket/prefix", "/repo": "/abs/dir"},
                storage_options={"/data": {"endpoint_url": ...}},
                read_only={"/repo"},
            )

        A path belongs to the mount with the longest matching mount point (a listing shows
        the mount points in it). Each mount keeps its own store, versions and
        capabilities (``ws.backend.capabilities_for(path)``; ``ws.backend.capabilities`` is
        what every mount guarantees). A move between mounts is a guarded copy and a guarded
        delete. ``mounts`` values are URLs or Backend instances; ``storage_options`` and
        ``backend`` (adapter names, such as ``"generic"``) are per mount point;
        ``read_only`` is True (the whole workspace) or the mount points to mount read-only
        (FS_READ_ONLY on any change there). ``history``: one
        :class:`~fsseam.backends.history.History` for every mount whose store keeps no
        versions (local, memory, generic), or ``{mount point: History}``; the rest as for
        ``Workspace``. See docs/mounts.md."""
        from .backends.mounts import build_mounts

        plugins = tuple(plugins)  # iterated twice: for the gate and for the spec
        made = {k: v for k, v in locals().items() if k not in ("cls", "build_mounts")}
        if isinstance(read_only, bool):
            frozen: tuple[str, ...] = ()
        elif isinstance(read_only, str):  # one mount point, not its characters
            frozen = (read_only,)
        else:
            frozen = tuple(read_only)
            made["read_only"] = frozen  # an iterator is spent by now
        router = build_mounts(mounts, storage_options, frozen, backend, history)
        ws = cls(repr(router).removeprefix("MountBackend(").removesuffix(")"),
                 read_only=read_only is True, policy=policy, plugins=plugins, limits=limits,
                 ledger=ledger, load_entry_points=load_entry_points, backend=router,
                 observations=observations, observation_key=observation_key, branch=branch)
        ws._made = made
        return ws

    # -- branches (docs/branches.md) ---------------------------------------------------
    def branch(self, name: str) -> Workspace:
        """A workspace over branch ``name`` of this one: made from main's current files
        when absent (the same name from any process or machine opens the same branch).
        Reads see the branch's changes over main's current files; every change lands only
        on the branch, guarded as on main. Opening it finishes a merge of it that was
        killed midway."""
        self._main_only()
        made = dict(self._made, branch=name)
        private = (made.get("backend_instance") is not None or made.get("fs") is not None
                   or "mounts" in made
                   or (made.get("storage_options") or {}).get("global_store") is False)
        if not private:
            made.pop("backend_instance")
            ws = Workspace(**made)  # opened by its URL, as another process opens it
            ws._made = dict(self._made, branch=name)
            return ws
        # Storage this Workspace holds (an instance, a private memory store, a mount
        # table): the branch is over the very same backend.
        ws = Workspace(self.url, read_only=self.read_only, policy=made["policy"],
                       plugins=made["plugins"], limits=made["limits"], ledger=made["ledger"],
                       load_entry_points=made["load_entry_points"],
                       backend=self.branches_of.inner, observations=made["observations"],
                       observation_key=made["observation_key"], branch=name)
        ws._made = made
        return ws

    def branches(self) -> list[BranchInfo]:
        """Every branch: its head, its log's newest heads, the owners of its changes."""
        self._main_only()
        return self.branches_of.list()

    def diff(self, name: str) -> BranchDiff:
        """Every file branch ``name`` added, changed, deleted or moved, with its unified
        diff, main's version now and whether main changed it since; ``.token`` names what
        was reviewed (pass it to :meth:`merge` as ``expect``)."""
        self._main_only()
        branch = self.branches_of.backend(name)
        head = branch.head()
        return review(name, head.ref.head, survey(branch.store, branch.inner, head.manifest))

    def merge(self, name: str, *, owner: str, expect: str | None = None,
              paths: Iterable[str] | None = None) -> MergeOutcome:
        """Publish branch ``name`` to main, each file a conditional write against the
        version it was based on (three ways where main changed it and the changes do not
        overlap); refused, with nothing written, on any conflict or when ``expect`` (a
        review's token) no longer names the branch and main. Crash-safe: see
        docs/branches.md."""
        self._main_only(changes=True)
        return merge(self.branches_of.backend(name), owner=owner, expect=expect, paths=paths)

    def rebase(self, name: str, *, owner: str,
               paths: Iterable[str] | None = None) -> RebaseOutcome:
        """Move branch ``name``'s changes that main changed too onto main's current files:
        combined where they do not overlap, with conflict markers where they do (an agent
        on the branch then resolves them, and the merge writes the result as is)."""
        self._main_only(changes=True)
        return rebase(self.branches_of.backend(name), owner=owner, paths=paths)

    def rewind(self, name: str, to: str) -> BranchInfo:
        """Move branch ``name`` back to ``to``, an earlier head of its log."""
        self._main_only(changes=True)
        return self.branches_of.rewind(name, to)

    def discard(self, name: str) -> None:
        """Remove branch ``name``; :meth:`collect` frees what only it used."""
        self._main_only(changes=True)
        self.branches_of.discard(name)

    def collect(self, grace: timedelta = timedelta(hours=1)) -> CollectOutcome:
        """Remove the branch objects no branch reaches (older than ``grace``), and the
        records of calls older than their time to live (``fsseam.seam.calls.CALL_TTL``)."""
        self._main_only(changes=True)
        collected = self.branches_of.collect(grace)
        expired = expire_calls(self.branches_of.inner)
        return collected.model_copy(update={"expired_calls": expired})

    def _main_only(self, *, changes: bool = False) -> None:
        """Refuse a branch operation on a branch workspace, and (``changes``) one that
        changes the store on a read-only workspace."""
        if changes and self.read_only:
            raise FsError(ErrorCode.FS_READ_ONLY, reason=Reason.read_only)
        if self.branch_name is not None:
            raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason=Reason.branch_of_branch,
                          details={"name": self.branch_name})

    def context(self, owner: str = "agent", *,
                observations: ObservationStore | None = None) -> Context:
        """One execution context: the owner the observation policy keeps observations for.
        ``observations``: keep this owner's in that store (a framework's state) rather
        than the workspace's. A store that keeps its objects inside the root is reserved
        as ``observations=`` is (raises FsError for one at the root itself)."""
        if observations is not None and self.policy is not None:
            hidden = reserved_prefix(observations, self.backend)
            if hidden is not None and hidden not in self._reserved:
                self._reserved.add(hidden)
                self.gate.register(ReservedKeys(hidden))
            self.policy.bind(owner, observations)
        return Context(self, owner, observations)

    # -- shipping to another process (fsseam.spec) ------------------------------------
    def spec(self, *, snapshot: bool = False) -> WorkspaceSpec:
        """What opens this workspace again in another process (``Workspace.from_spec``;
        ``pickle.dumps(ws)`` sends it). Observations kept in this process's memory are
        refused (FS_INVALID_ARGUMENT) unless ``snapshot``: the spec then carries a copy,
        which nothing keeps in step with this process."""
        store = self.policy.store if self.policy is not None else None
        if isinstance(store, BranchObservations):
            store = store.inner  # the branch's spec opens the wrapper again
        return spec_of(self._made, store, snapshot=snapshot)

    @classmethod
    def from_spec(cls, spec: WorkspaceSpec, *, shared: bool = True) -> Workspace:
        """The workspace ``spec`` names. ``shared``: the one this process already opened
        for an equal spec, if any (its clients and caches stay warm between tasks)."""
        def make() -> Workspace:
            args = spec.arguments()
            return cls.mount(**args) if spec.mounts is not None else cls(**args)

        return opened(spec, make) if shared else make()

    def __reduce__(self) -> tuple[Any, ...]:
        return (_open_workspace, (self.spec(),))

    def __repr__(self) -> str:
        return f"Workspace({self.url!r}, read_only={self.read_only}, policy={bool(self.policy)})"


class Context:
    """One owner's ``fs`` (the seam) and ``tools`` over a workspace."""

    def __init__(self, workspace: Workspace, owner: str,
                 observations: ObservationStore | None = None) -> None:
        self.workspace = workspace
        self.owner = owner
        self.fs = Seam(
            workspace.backend,
            workspace.gate,
            owner,
            limits=workspace.limits,
            docs=workspace.docs,
            read_only=workspace.read_only,
            authors=workspace._authors,
            observing=workspace.policy.call if workspace.policy is not None else None,
            observations=observations,
            policy=workspace.policy,
        )
        self.tools = ToolRegistry(self.fs)

    def show(self, path: str) -> str:
        """The whole text of ``path``, for the application to put in the model's prompt,
        recorded as this owner's read of that version: the agent may then change the file
        without reading it, and is refused (FS_STALE) if it changed meanwhile. The text is
        what ``read`` shows, without line numbers (CRLF as LF, no BOM). Raises FsError:
        FS_NOT_FOUND, FS_NOT_TEXT (a binary file), FS_TOO_LARGE (over
        ``Limits.max_edit_bytes``); none of them counts as a read."""
        return self.fs.show(path)

    def filesystem(self) -> GuardedFileSystem:
        """This owner as an fsspec filesystem rooted at the workspace root (``/a/b.csv``):
        reads record what was read, writes are guarded as the tools' are, a refusal raises
        :class:`fsseam.GuardRefused` (docs/filesystem.md)."""
        return GuardedFileSystem(context=self, skip_instance_cache=True)

    def spec(self, *, snapshot: bool = False) -> ContextSpec:
        """What opens this context again in another process (``Context.from_spec``;
        ``pickle.dumps(ctx)`` sends it): the workspace's spec and the owner, and the store
        the owner is bound to, if any (see :meth:`Workspace.spec` for ``snapshot``)."""
        # The store this context was made with; without one, the workspace's own store
        # travels with the workspace.
        bound = self.fs.observations
        return ContextSpec(
            workspace=self.workspace.spec(snapshot=snapshot), owner=self.owner,
            store=None if bound is None else shipped_store(bound, snapshot=snapshot),
        )

    @classmethod
    def from_spec(cls, spec: ContextSpec) -> Context:
        ws = Workspace.from_spec(spec.workspace)
        return ws.context(spec.owner, observations=received_store(spec.store))

    def __reduce__(self) -> tuple[Any, ...]:
        return (Context.from_spec, (self.spec(),))

    def __repr__(self) -> str:
        return f"Context(owner={self.owner!r}, workspace={self.workspace!r})"


def _open_workspace(spec: WorkspaceSpec) -> Workspace:
    return Workspace.from_spec(spec)

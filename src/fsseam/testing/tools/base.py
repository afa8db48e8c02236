"""What every part of the tool conformance suite shares."""

from __future__ import annotations


class Settings:
    """The knobs a backend's subclass may turn (see :class:`~fsseam.testing.ToolsConformance`)."""

    mount_points: tuple[str, ...] = ()
    """Directories the workspace's root shows before any test writes (the other mount
    points of a mounted workspace, empty stores): views of ``/`` are read without them."""

    def _without_mount_points(self, text: str) -> str:
        hidden = {f"/{m}/" for m in self.mount_points}
        return "\n".join(line for line in text.split("\n") if line not in hidden)

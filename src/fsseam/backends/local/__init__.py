"""Local disk: content-digest versions, and a compare-and-swap that survives crashes.

One job per module:

- ``backend``: :class:`LocalBackend`, the contract answered for one root;
- ``tree``: the descriptor walks from the root that never follow a link, opens, listings;
- ``digests``: versions (the stat cache, digests of open files, the chunked read);
- ``search``: the reads of a search, without versions (one pass over the tree);
- ``writes``: write, delete and copy, the compare-and-swap and its crash safety;
- ``temps``: the temp files a write prepares, and the sweep of those left by the dead;
- ``files``: what every operation checks of one file (kind, signature, protection).
"""

from .backend import LocalBackend
from .temps import TEMP_MARK, is_temp_name

__all__ = ["TEMP_MARK", "LocalBackend", "is_temp_name"]

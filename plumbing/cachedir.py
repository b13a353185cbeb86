"""Where biasaudit keeps what it can recompute: ``$BIASAUDIT_CACHE_DIR``, default ``~/.cache/biasaudit``.

Users: the experiment caches (``validation-eos``, ``validation-sam``). A fresh run needs the variable pointed at an empty directory (or the directory removed).
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["cache_root"]


def cache_root() -> Path:
    """The run cache's folder: ``$BIASAUDIT_CACHE_DIR`` if set, else ``~/.cache/biasaudit`` (read at every call).

    Returns
    -------
    Path
        The folder (not created here).

    Examples
    --------
    >>> import os
    >>> from biasaudit.plumbing import cache_root
    >>> str(cache_root()) == (os.environ.get("BIASAUDIT_CACHE_DIR") or os.path.expanduser("~/.cache/biasaudit"))
    True
    """
    return Path(os.environ.get("BIASAUDIT_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache",
                                                                        "biasaudit"))

"""Private temporary folders that do not outlive their process for long.

A worker's folder is removed when the worker ends normally (``weakref.finalize``), but a worker
killed by a signal (a hung kernel, a crash, the tool's shutdown) cannot clean up after itself. The
folder's name carries its owner's process id, and every new folder first removes the folders of
the same kind whose owner is gone, so a killed worker's files last until the next start.
"""

from __future__ import annotations

import glob
import os
import shutil
import tempfile
import weakref


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    return True


def sweep(kind: str, root: str | None = None) -> int:
    """Removes the ``<kind>-<pid>-*`` folders under ``root`` whose process is gone; returns how many."""
    root = root or tempfile.gettempdir()
    removed = 0
    for path in glob.glob(os.path.join(root, f"{kind}-*-*")):
        pid_text = os.path.basename(path)[len(kind) + 1:].split("-", 1)[0]
        if not pid_text.isdigit() or int(pid_text) == os.getpid() or _alive(int(pid_text)):
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed += not os.path.exists(path)
    return removed


def private_dir(owner: object, kind: str, root: str | None = None) -> str:
    """A new folder ``<kind>-<pid>-XXXX`` removed with ``owner`` (or at exit); stale ones swept first."""
    sweep(kind, root)
    path = tempfile.mkdtemp(prefix=f"{kind}-{os.getpid()}-", dir=root)
    weakref.finalize(owner, shutil.rmtree, path, True)
    return path

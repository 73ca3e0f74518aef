"""A killed worker's private folder is removed at the next start (tmpdirs.py); a live one's stays."""

import gc
import os
import subprocess
import sys

from ucutlass_torch import tmpdirs


def dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_a_new_folder_sweeps_the_folders_of_ended_processes_only(tmp_path):
    gone = tmp_path / f"ucut-worker-{dead_pid()}-abc"
    gone.mkdir()
    (gone / "0_lib.so").write_bytes(b"x")
    live = tmp_path / f"ucut-worker-{os.getppid()}-def"
    live.mkdir()
    other_kind = tmp_path / f"ucut-ray-eval-{dead_pid()}-ghi"
    other_kind.mkdir()
    not_ours = tmp_path / "ucut-worker-baselines"
    not_ours.mkdir()

    class Owner:
        pass

    owner = Owner()
    mine = tmpdirs.private_dir(owner, "ucut-worker", str(tmp_path))
    assert os.path.basename(mine).startswith(f"ucut-worker-{os.getpid()}-")
    assert not gone.exists()
    assert live.exists() and other_kind.exists() and not_ours.exists()
    # the folder goes with its owner
    assert os.path.isdir(mine)
    del owner
    gc.collect()
    assert not os.path.exists(mine)

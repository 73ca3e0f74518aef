"""What the GPU tests that run the ucutlass binary share: whether a CUDA GPU is visible, and which
binary to run ($UCUT_GPU_BIN, else build-gpu/ucutlass, else build/ucutlass; "" when none exists)."""

import os

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def have_gpu():
    try:
        import torch
        return torch.cuda.is_available()
    except ImportError:
        return False


def ucutlass_binary():
    for c in (os.environ.get("UCUT_GPU_BIN"), os.path.join(ROOT, "build-gpu", "ucutlass"),
              os.path.join(ROOT, "build", "ucutlass")):
        if c and os.path.exists(c):
            return c
    return ""

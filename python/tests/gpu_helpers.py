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


def kernelbench_protocol(problem_path, model_new_text, tol):
    """KernelBench's own check of a ModelNew against its problem's Model on the GPU: both sources
    exec'd, set_seed(42) before each model (same init inputs), 5 trials of fresh inputs, every
    output's shape and dtype compared and torch.allclose(atol=rtol=tol)."""
    import torch
    ref_ns, new_ns = {}, {}
    exec(compile(open(problem_path).read(), "ref", "exec"), ref_ns)
    exec(compile(model_new_text, "new", "exec"), new_ns)
    init = ref_ns["get_init_inputs"]()
    torch.manual_seed(42)
    ref = ref_ns["Model"](*init).cuda()
    torch.manual_seed(42)
    new = new_ns["ModelNew"](*init).cuda()
    for trial in range(5):
        torch.manual_seed(100 + trial)
        x = [t.cuda() if isinstance(t, torch.Tensor) else t for t in ref_ns["get_inputs"]()]
        with torch.no_grad():
            a, b = ref(*x), new(*x)
        torch.cuda.synchronize()
        a = a if isinstance(a, tuple) else (a,)
        b = b if isinstance(b, tuple) else (b,)
        assert len(a) == len(b)
        for i, (u, v) in enumerate(zip(a, b)):
            assert u.shape == v.shape and u.dtype == v.dtype, (trial, i, u.shape, v.shape, u.dtype, v.dtype)
            assert torch.allclose(u, v, atol=tol, rtol=tol), (trial, i, float((u - v).abs().max()))

"""ucutlass_torch: the Python side of ucutlass (the only code that touches PyTorch).

For PyTorch users (docs/python.md): ``optimize(model, example_inputs, ...)`` and ``load(dir, model)``
(api.py), the ``torch.compile`` backend ``"ucutlass"`` (backend.py), kernel libraries as custom ops
``torch.ops.ucutlass.<name>`` (library_op.py) over the one library runtime (runtime.py).

Tool side: loader (KernelBench-format problem files), extract (Problem IR, schema
ucutlass.problem/1), ops (ATen op -> IR vocabulary mapping and FLOP counts); worker, protocol,
export, calibrate belong to the evaluation side. Importing this package does not import torch:
``optimize``, ``load`` and ``register_backend`` import it when first used.
"""

__version__ = "0.1.0"
SCHEMA = "ucutlass.problem/1"


def __getattr__(name):
    if name in ("optimize", "load", "Optimized"):
        from . import api
        return getattr(api, name)
    if name == "register_backend":
        from .backend import register
        return register
    raise AttributeError(f"module 'ucutlass_torch' has no attribute {name!r}")

"""ucutlass_torch: the Python side of ucutlass (the only code that touches PyTorch).

Modules: loader (KernelBench-format problem files), extract (Problem IR, schema ucutlass.problem/1),
ops (ATen op -> IR vocabulary mapping and FLOP counts). Other modules (worker, protocol, export,
calibrate) belong to the evaluation side. Importing this package does not import torch.
"""

__version__ = "0.1.0"
SCHEMA = "ucutlass.problem/1"

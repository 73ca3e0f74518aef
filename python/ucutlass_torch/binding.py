"""The binding rules under their old name: they live in runtime.py, the one runtime of a kernel
library (docs/python.md), which the worker, the custom ops and the exported ModelNew all run."""

from .runtime import (DTYPE_NAMES, DTYPES, BindError, as_declared, as_reference, check_declared,  # noqa: F401
                      dtype_name)

"""runtime.Binder: a library's tensor list bound from its declared specs read once. A tensor that
already binds (declared shape, dtype, contiguous) is passed as it is, with no view or copy; any
other goes through as_declared (made contiguous, viewed in the declared shape, or refused with the
tensor's name); outputs come back in output order whatever their declaration order."""

import os
import sys

import pytest
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from ucutlass_torch import runtime  # noqa: E402

TENSORS = runtime.declared_tensors({"tensors": [
    {"name": "x", "role": "in", "dtype": "f32", "shape": [4, 6]},
    {"name": "w", "role": "param", "dtype": "f32", "shape": [6], "binding": "fc.weight"},
    {"name": "second", "role": "out", "dtype": "f32", "shape": [4, 6], "index": 1},
    {"name": "first", "role": "out", "dtype": "f32", "shape": [2, 12], "index": 0}]})


def test_tensors_that_bind_as_they_are_are_passed_as_they_are():
    x, w = torch.randn(4, 6), torch.randn(6)
    args, outs = runtime.Binder(TENSORS).bind([x], {"fc.weight": w}, torch.device("cpu"))
    assert args[0] is x and args[1] is w
    assert [tuple(o.shape) for o in outs] == [(2, 12), (4, 6)]  # output order, not declaration order
    assert outs[0] is args[3] and outs[1] is args[2]


def test_other_layouts_are_made_contiguous_and_viewed():
    x = torch.randn(6, 4).t()  # [4, 6], not contiguous
    w = torch.nn.Parameter(torch.randn(2, 3))  # 6 elements in another shape, requires grad
    args, _ = runtime.Binder(TENSORS).bind([x], {"fc.weight": w}, torch.device("cpu"))
    assert args[0].is_contiguous() and torch.equal(args[0], x)
    assert tuple(args[1].shape) == (6,) and not args[1].requires_grad and torch.equal(args[1], w.detach().view(6))


def test_what_does_not_bind_is_refused_with_its_name():
    b = runtime.Binder(TENSORS)
    with pytest.raises(runtime.BindError, match=r"tensor w \(fc.weight\): kernel expects f32"):
        b.bind([torch.randn(4, 6)], {"fc.weight": torch.randn(6, dtype=torch.float64)}, torch.device("cpu"))
    with pytest.raises(runtime.BindError, match=r"tensor x: kernel expects shape \[4, 6\]"):
        b.bind([torch.randn(5, 6)], {"fc.weight": torch.randn(6)}, torch.device("cpu"))
    with pytest.raises(runtime.BindError, match=r"tensor w: no tensor for its binding 'fc.weight'"):
        b.bind([torch.randn(4, 6)], {}, torch.device("cpu"))
    with pytest.raises(runtime.BindError, match="takes 1 input tensor"):
        b.bind([], {"fc.weight": torch.randn(6)}, torch.device("cpu"))

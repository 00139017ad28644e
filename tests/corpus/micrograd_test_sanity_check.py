# source: Andrej Karpathy, micrograd, test/test_engine.py
# url: https://github.com/karpathy/micrograd/blob/master/test/test_engine.py
# section: test_sanity_check (the file's imports and this test, as published)
# prints: nothing (its asserts compare micrograd with PyTorch); the numbers: y = -20,
#   x.grad = 46 (PyTorch's)
import torch
from micrograd.engine import Value

def test_sanity_check():

    x = Value(-4.0)
    z = 2 * x + 2 + x
    q = z.relu() + z * x
    h = (z * z).relu()
    y = h + q + q * x
    y.backward()
    xmg, ymg = x, y

    x = torch.Tensor([-4.0]).double()
    x.requires_grad = True
    z = 2 * x + 2 + x
    q = z.relu() + z * x
    h = (z * z).relu()
    y = h + q + q * x
    y.backward()
    xpt, ypt = x, y

    # forward pass went well
    assert ymg.data == ypt.data.item()
    # backward pass went well
    assert xmg.grad == xpt.grad.item()

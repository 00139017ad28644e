# source: tinygrad, README "Neural networks" / "Things we can do" (the torch comparison)
# url: https://github.com/tinygrad/tinygrad
# section: the autograd example, run beside PyTorch's
# prints: [[2.0, 2.0, 2.0], [0.0, 0.0, 0.0], [-2.0, -2.0, -2.0]], [[1.0, 1.0, 1.0]]
from tinygrad import Tensor

x = Tensor.eye(3, requires_grad=True)
y = Tensor([[2.0,0,-2.0]], requires_grad=True)
z = y.matmul(x).sum()
z.backward()

print(x.grad.tolist())  # dz/dx
print(y.grad.tolist())  # dz/dy

# source: JAX documentation, "Quickstart"
# url: https://docs.jax.dev/en/latest/quickstart.html
# section: "Taking derivatives with jax.grad": sum_logistic's gradient, grad of jit of grad
#   three deep, and jacobian
# prints: [0.25       0.19661197 0.10499357], -0.0353256, the 3x3 Jacobian of exp
import jax
import jax.numpy as jnp
from jax import grad, jit

def sum_logistic(x):
  return jnp.sum(1.0 / (1.0 + jnp.exp(-x)))

x_small = jnp.arange(3.)
derivative_fn = grad(sum_logistic)
print(derivative_fn(x_small))

print(grad(jit(grad(jit(grad(sum_logistic)))))(1.0))

from jax import jacobian
print(jacobian(jnp.exp)(x_small))

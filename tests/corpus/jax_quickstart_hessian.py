# source: JAX documentation, "Quickstart"
# url: https://docs.jax.dev/en/latest/quickstart.html
# section: "Taking derivatives with jax.grad": the hessian as jit(jacfwd(jacrev(fun)))
# prints: the 3x3 Hessian of sum_logistic at [0, 1, 2]
import jax
import jax.numpy as jnp
from jax import grad, jit

def sum_logistic(x):
  return jnp.sum(1.0 / (1.0 + jnp.exp(-x)))

x_small = jnp.arange(3.)

from jax import jacfwd, jacrev
def hessian(fun):
  return jit(jacfwd(jacrev(fun)))
print(hessian(sum_logistic)(x_small))

# source: JAX documentation, "The Autodiff Cookbook"
# url: https://docs.jax.dev/en/latest/notebooks/autodiff_cookbook.html
# section: "Hessian-vector products using both forward- and reverse-mode": forward-over-
#   reverse hvp = jvp(grad(f), (x,), (v,))[1], here on the cookbook's tanh loss at a point
#   written out
# prints: the Hessian-vector product (JAX's float32 numbers)
import jax.numpy as jnp
from jax import grad, jit, vmap
from jax import jvp

def hvp(f, primals, tangents):
  return jvp(grad(f), primals, tangents)[1]

def f(X):
  return jnp.sum(jnp.tanh(X)**2)

X = jnp.array([[0.5, -1.0], [1.5, 0.25]])
V = jnp.array([[1.0, 0.0], [-2.0, 0.5]])
print(hvp(f, (X,), (V,)))

# source: JAX documentation, "The Autodiff Cookbook"
# url: https://docs.jax.dev/en/latest/notebooks/autodiff_cookbook.html
# section: "Hessian-vector products with grad-of-grad": hvp as grad of vdot(grad(f)(x), v),
#   on a function and point written out (the cookbook gives none)
# prints: the Hessian-vector product (JAX's float32 numbers)
import jax.numpy as jnp
from jax import grad, jit, vmap

def hvp(f, x, v):
    return grad(lambda x: jnp.vdot(grad(f)(x), v))(x)

def f(x):
    return jnp.sum(jnp.sin(x) * x ** 2)

x = jnp.array([0.5, -1.0, 2.0])
v = jnp.array([1.0, 0.0, -1.0])
print(hvp(f, x, v))

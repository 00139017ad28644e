# source: JAX documentation, "Just-in-time compilation"
# url: https://docs.jax.dev/en/latest/jit-compilation.html
# section: "JIT compiling a function": jit as a decorator (the tutorial's @jit pattern, on a
#   function of its own written out, and differentiated)
# prints: the jitted function's value and its gradient (JAX's float32 numbers)
import jax
import jax.numpy as jnp
from jax import jit

@jit
def f(x):
  return jnp.sum(jnp.tanh(x) ** 2)

x = jnp.array([0.5, 1.0, 1.5])
print(f(x))
print(jax.grad(f)(x))

# source: JAX documentation, "The Autodiff Cookbook"
# url: https://docs.jax.dev/en/latest/notebooks/autodiff_cookbook.html
# section: "Jacobian-Vector products (JVPs, aka forward-mode autodiff)", the jvp cell (the
#   logistic model above it, W, b and v drawn with jax.random); y and u printed here
# prints: y and u (JAX's float32 numbers)
import jax.numpy as jnp
from jax import grad, jit, vmap
from jax import random
from jax import jvp

key = random.key(0)

def sigmoid(x):
    return 0.5 * (jnp.tanh(x / 2) + 1)

def predict(W, b, inputs):
    return sigmoid(jnp.dot(inputs, W) + b)

inputs = jnp.array([[0.52, 1.12,  0.77],
                    [0.88, -1.08, 0.15],
                    [0.52, 0.06, -1.30],
                    [0.74, -2.49, 1.39]])

key, W_key, b_key = random.split(key, 3)
W = random.normal(W_key, (3,))
b = random.normal(b_key, ())

# Isolate the function from the weight matrix to the predictions
f = lambda W: predict(W, b, inputs)

key, subkey = random.split(key)
v = random.normal(subkey, W.shape)

# Push forward the vector `v` along `f` evaluated at `W`
y, u = jvp(f, (W,), (v,))
print(y)
print(u)

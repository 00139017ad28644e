# source: JAX documentation, "The Autodiff Cookbook"
# url: https://docs.jax.dev/en/latest/notebooks/autodiff_cookbook.html
# section: "Jacobians and Hessians using jacfwd and jacrev" (the logistic model of the
#   cells above it, W and b drawn with jax.random), and its hessian = jacfwd(jacrev(f))
# prints: jacfwd result, with shape (4, 3), J; jacrev result, with shape (4, 3), J;
#   hessian, with shape (4, 3, 3), H
import jax.numpy as jnp
from jax import grad, jit, vmap
from jax import random
from jax import jacfwd, jacrev

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

J = jacfwd(f)(W)
print("jacfwd result, with shape", J.shape)
print(J)

J = jacrev(f)(W)
print("jacrev result, with shape", J.shape)
print(J)

def hessian(f):
    return jacfwd(jacrev(f))

H = hessian(f)(W)
print("hessian, with shape", H.shape)
print(H)

# source: JAX documentation, "The Autodiff Cookbook"
# url: https://docs.jax.dev/en/latest/notebooks/autodiff_cookbook.html
# section: "Gradients" (the logistic-regression loss; inputs, targets and W written out, since
#   the cookbook draws W with jax.random)
# prints: the cookbook prints random W_grad; here PyTorch's numbers for these W, b
import jax.numpy as jnp
from jax import grad

def sigmoid(x):
    return 0.5 * (jnp.tanh(x / 2) + 1)

# Outputs probability of a label being true.
def predict(W, b, inputs):
    return sigmoid(jnp.dot(inputs, W) + b)

# Build a toy dataset.
inputs = jnp.array([[0.52, 1.12,  0.77],
                    [0.88, -1.08, 0.15],
                    [0.52, 0.06, -1.30],
                    [0.74, -2.49, 1.39]])
targets = jnp.array([True, True, False, True])

# Training loss is the negative log-likelihood of the training examples.
def loss(W, b):
    preds = predict(W, b, inputs)
    label_probs = preds * targets + (1 - preds) * (1 - targets)
    return -jnp.sum(jnp.log(label_probs))

W = jnp.array([0.1, -0.2, 0.3])
b = 0.5
W_grad = grad(loss, argnums=0)(W, b)

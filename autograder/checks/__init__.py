"""The checks a notebook's test cells call, bound to that notebook's namespace.

    check = Checker(globals())
    verdict = check.backward(Mul(), shapes=[(2, 3), (2, 3)])
    assert verdict.passed, verdict.message

Names such as `Tensor` are looked up in the namespace at every call, so a student who
re-runs a cell is checked against what the notebook holds now.
"""
import contextlib

from ..verdict import passed
from . import (
    capstone, convolution, course_ops, data, engine, fitting, idx, init, module_tree, nn, operators, ops, optim,
    persistence, scalar, tensor, training, transforms,
)
from . import engine_rules

MODULE_CHECKS = {
    "parameters": module_tree.check_parameters,
    "children": module_tree.check_children,
    "train_eval": module_tree.check_train_eval,
    "zero_grad": module_tree.check_zero_grad,
    "call": module_tree.check_call,
}


LOADER_CHECKS = {"batches": data.check_loader_batches, "shuffle": data.check_loader_shuffle}
TRANSFORM_CHECKS = {
    "normalize": transforms.check_normalize,
    "flatten_image": transforms.check_flatten_image,
    "flip": transforms.check_flip,
    "crop": transforms.check_crop,
    "compose": transforms.check_compose,
}
IDX_CHECKS = {"bytes": idx.check_idx_bytes, "types": idx.check_idx_types, "errors": idx.check_idx_errors}


class Checker:
    def __init__(self, namespace, verbose=True):
        self.namespace = namespace
        self.verbose = verbose

    def _report(self, verdict):
        if verdict.passed and self.verbose:
            print(verdict.message)
        return verdict

    def forward(self, op, expected, shapes, domains="real", seed=0):
        """op.forward against NumPy's `expected` on random inputs of these shapes, with the course's
        own versions of every other chapter-3 op and of the Tensor operators meanwhile (`course_ops`)."""
        with course_ops.swapped(self.namespace, keep=[type(op).__name__]):
            return self._report(ops.check_forward(op, expected, shapes, domains, seed))

    def backward(self, op, shapes, domains="real", seed=0, isolate=()):
        """op.backward against finite differences of op.forward, with all-ones and random out_grad.

        Meanwhile every other chapter-3 op and the Tensor operators are the course's (`course_ops`), and
        `isolate` names further ops (chapter 10's Flip, Dilate, ...) replaced by known-right stand-ins,
        so that a backward built from other ops is graded on its own.
        """
        isolated = convolution.swapped(self.namespace, isolate) if isolate else contextlib.nullcontext()
        with course_ops.swapped(self.namespace, keep=[type(op).__name__]), isolated:
            return self._report(ops.check_backward(self.namespace["Tensor"], op, shapes, domains, seed))

    def all(self, *verdicts):
        """One verdict for several checks: the first failure, or a pass."""
        failures = [v for v in verdicts if not v.passed]
        return failures[0] if failures else passed(f"✔ all {len(verdicts)} checks passed")

    def operators(self):
        """The Tensor operators and methods call the right Function."""
        return self._report(operators.check_operators(self.namespace))

    def engine(self, name):
        """One property of Tensor.backward: product, diamond, reuse, accumulation, explicit_grad, long_chain."""
        return self._report(engine.check_engine(self.namespace["Tensor"], self.namespace["Function"], name))

    def engine_rule(self, name):
        """One rule around Tensor.backward: zero_grad, no_grad, constant_error, non_scalar_error."""
        return self._report(engine_rules.check_engine_rule(self.namespace, name))

    # ── chapter 4: nn ──

    def module(self, name):
        """One behaviour of the Module base class, on stand-in modules: parameters, children,
        train_eval, zero_grad, call."""
        return self._report(MODULE_CHECKS[name](self.namespace))

    def linear_init(self, in_features=3, out_features=4):
        """Linear's weight and bias: Parameters of the right shapes, seeded, in ±1/sqrt(in_features)."""
        return self._report(nn.check_linear_init(self.namespace, in_features, out_features))

    def linear(self, in_features=3, out_features=4, batch=5, bias=True, seed=0):
        """Linear.forward and its gradients against x @ W + b."""
        return self._report(nn.check_linear(self.namespace, in_features, out_features, batch, bias, seed))

    def activation(self, name, shape=(4, 3), seed=0):
        """The ReLU, Sigmoid, Tanh or Identity module against its formula."""
        return self._report(nn.check_activation(self.namespace, name, tuple(shape), seed))

    def sequential(self, seed=0):
        """Sequential on stand-in modules: order, gradient, parameters reachable, empty = identity."""
        return self._report(nn.check_sequential(self.namespace, seed))

    def flatten(self, shape=(2, 3, 4), seed=0):
        return self._report(nn.check_flatten(self.namespace, tuple(shape), seed))

    def dropout(self, p=0.25, seed=0):
        """Dropout in training: drop rate, 1/(1-p) scaling, fresh seeded masks, gradient."""
        return self._report(nn.check_dropout(self.namespace, p, seed))

    def dropout_eval(self, p=0.25, seed=0):
        return self._report(nn.check_dropout_eval(self.namespace, p, seed))

    def batchnorm(self, batch=6, dim=3, seed=0):
        """BatchNorm1d in training mode: output and gradients of x, weight and bias."""
        return self._report(nn.check_batchnorm(self.namespace, batch, dim, seed))

    def batchnorm_running(self, batch=6, dim=3, seed=0):
        """BatchNorm1d's running statistics, and evaluation mode."""
        return self._report(nn.check_batchnorm_running(self.namespace, batch, dim, seed))

    def layernorm(self, batch=4, dim=5, seed=0, scale=1.0):
        """LayerNorm1d: output and gradients; `scale` shrinks the inputs to rows whose variance is near eps."""
        return self._report(nn.check_layernorm(self.namespace, batch, dim, seed, scale))

    def mse_loss(self, shape=(5, 1), seed=0):
        return self._report(nn.check_mse(self.namespace, tuple(shape), seed))

    def softmax_loss(self, batch=5, classes=4, offset=0.0, labels_as="array", seed=0):
        """SoftmaxLoss (with a stand-in LogSumExp) against the mean cross-entropy and its gradient."""
        return self._report(nn.check_softmax_loss(self.namespace, batch, classes, offset, labels_as, seed))

    def logsumexp_forward(self, axes, shape, domain="real", seed=0):
        """LogSumExp(axes).forward against a stable NumPy log-sum-exp."""
        return self._report(nn.check_logsumexp_forward(self.namespace, axes, tuple(shape), domain, seed))

    def softmax_forward(self, axis, shape, domain="real", seed=0):
        """Softmax(axis).forward against a stable NumPy softmax."""
        return self._report(nn.check_softmax_forward(self.namespace, axis, tuple(shape), domain, seed))

    def bce_loss(self, shape=(6,), extreme=False, targets_as="array", seed=0):
        """BCEWithLogitsLoss against the float64 mean binary cross-entropy and its gradient; `extreme` adds
        logits of ±50 and ±1000 on both sides of the answer."""
        return self._report(nn.check_bce(self.namespace, tuple(shape), extreme, targets_as, seed))

    def embedding(self, num_embeddings=5, dim=3, index_shape=(2, 4), seed=0):
        """Embedding: a seeded weight Parameter, rows looked up for indices of any shape, gradients added at repeats."""
        return self._report(nn.check_embedding(self.namespace, num_embeddings, dim, tuple(index_shape), seed))

    # ── chapter 5: optimizers ──

    def optimizer_zero_grad(self):
        return self._report(optim.check_zero_grad(self.namespace))

    def train_step(self):
        """train_step with a recording optimizer: order of the calls, fresh gradients, the loss returned."""
        return self._report(optim.check_train_step(self.namespace))

    def sgd(self, lr=0.1, momentum=0.0, weight_decay=0.0, seed=0):
        """Three SGD steps against the NumPy update rule, to 1e-6."""
        return self._report(optim.check_sgd(self.namespace, lr, momentum, weight_decay, seed))

    def adam(self, lr=0.01, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.0, seed=0):
        """Three Adam steps against the NumPy update rule, to 1e-6."""
        return self._report(optim.check_adam(self.namespace, lr, beta1, beta2, eps, weight_decay, seed))
    # ── chapter 1: the scalar Value ──

    def value_graph(self, op, seed=0):
        """`a + b` or `a * b` ("add", "mul"), numbers on either side: a new Value with data, _prev and _op."""
        return self._report(scalar.check_graph(self.namespace["Value"], op, seed))

    def value_backward(self, op, seed=0):
        """The `_backward` closure of "add" or "mul", called directly: out.grad × local derivative, accumulated."""
        return self._report(scalar.check_backward(self.namespace["Value"], op, seed))

    def value_engine(self, name):
        """Value.backward on graphs whose closures the check wires: order, reuse, twice, long_chain."""
        return self._report(scalar.ENGINE_CHECKS[name](self.namespace["Value"]))

    def numerical_gradient(self, case="basic"):
        """The student's numerical_gradient against exact derivatives of small functions ("basic", "more")."""
        return self._report(scalar.check_numerical_gradient(self.namespace["numerical_gradient"], case))

    # ── chapter 2: the Tensor ──

    def constructor(self, case):
        """Tensor(...) for one kind of input: list, requires_grad, ints, scalar, float64, ndarray,
        float64 ndarray, or "copies" (a tensor made from a tensor or an array owns its values)."""
        return self._report(tensor.check_constructor(self.namespace["Tensor"], case))

    def properties(self, case="matrix"):
        """shape, ndim, size, dtype on a matrix, scalar, float64 or empty tensor (the rest of Tensor stood in)."""
        return self._report(tensor.check_properties(self.namespace["Tensor"], case))

    def conversions(self, case="basic"):
        """numpy(), item(), detach(), len(): "basic", or "more" (float64, other shapes)."""
        return self._report(tensor.check_conversions(self.namespace["Tensor"], case))

    def tensor_repr(self, case="basic"):
        """repr(t) against the specified text: "basic", or "more" (dtype, op, scalar, matrix)."""
        return self._report(tensor.check_repr(self.namespace["Tensor"], case))

    def factories(self, kind, case="basic"):
        """zeros/ones ("constant") or randn/rand ("random"), for the "basic" or "more" cases."""
        return self._report(tensor.check_factories(self.namespace, kind, case))


    # ── chapter 6: data ──

    def array_dataset(self):
        """ArrayDataset: length, items as tuples, unequal lengths refused."""
        return self._report(data.check_array_dataset(self.namespace))

    def data_loader(self, name):
        """One property of DataLoader: `batches` (order, sizes, drop_last, len, dtypes) or `shuffle`."""
        return self._report(LOADER_CHECKS[name](self.namespace))

    def transform(self, name):
        """One transform: normalize, flatten_image, flip, crop or compose."""
        return self._report(TRANSFORM_CHECKS[name](self.namespace))

    def parse_idx(self, name, **options):
        """parse_idx on files the check writes: `bytes` (uint8, raw and gzip), `types` (seed=...), `errors`."""
        return self._report(IDX_CHECKS[name](self.namespace["parse_idx"], **options))

    def mnist_dataset(self, real_split=None):
        """MNISTDataset with a known-good parser swapped in; with `real_split`, also on that MNIST split."""
        files = None
        if real_split:
            from ..datasets import mnist_files
            files = mnist_files(real_split)
        return self._report(data.check_mnist_dataset(self.namespace, files))

    # ── chapter 7: initialization and training ──

    def initializer(self, name, fan_in=400, fan_out=600, setting=(), seed=0):
        """xavier_uniform, xavier_normal, kaiming_uniform or kaiming_normal, by the statistics of a large draw."""
        return self._report(init.check_initializer(self.namespace, name, fan_in, fan_out, tuple(setting), seed))

    def train_epoch(self):
        """train_epoch: one train_step per batch, in training mode (train_step is swapped for a recorder)."""
        return self._report(training.check_train_epoch(self.namespace))

    def accuracy(self):
        """accuracy(model, loader) on a probe model with known predictions."""
        return self._report(training.check_accuracy(self.namespace))

    def trained_model(self, model, loader, minimum):
        """The held-out accuracy of a trained model, counted by the course, is at least `minimum`."""
        return self._report(training.check_trained_model(model, loader, minimum))

    # ── chapter 8: persistence ──

    def named_state(self, variant="flat"):
        """Module.named_state on a stand-in model that hides state everywhere (`flat` or `nested`)."""
        return self._report(persistence.check_named_state(self.namespace, variant))

    def state_dict(self):
        """Module.state_dict (with the course's named_state): every array, copied."""
        return self._report(persistence.check_state_dict(self.namespace))

    def load_state_dict(self, kind):
        """Module.load_state_dict: `values` (copied in place) or `errors` (missing, unexpected, shape; all or nothing)."""
        check = {"values": persistence.check_load_values, "errors": persistence.check_load_errors}[kind]
        return self._report(check(self.namespace))

    def optimizer_state(self, *optimizers):
        """Optimizer.state_dict / load_state_dict: `adam`, `sgd` (momentum), `adam_decay` continue exactly."""
        return self._report(persistence.check_optimizer_state(self.namespace, optimizers or ("adam",)))

    def checkpoint(self, kind, *files):
        """save_checkpoint / load_checkpoint: `round_trip`, or `refuses` files that are not checkpoints
        (text, empty, random, zip, npy, npz)."""
        if kind == "round_trip":
            return self._report(persistence.check_checkpoint_round_trip(self.namespace))
        return self._report(persistence.check_checkpoint_refuses(self.namespace, files or ("text", "npz")))

    def resume_training(self, optimizer="adam"):
        """Train, checkpoint, train on; resuming from the checkpoint must match bit for bit."""
        return self._report(persistence.check_resume_training(self.namespace, optimizer))

    # ── chapter 9: the Trainer, and the capstones ──

    def evaluate(self, samples=10, batch_size=4, seed=0):
        """Trainer.evaluate against NumPy's loss and accuracy per sample, on a model with dropout."""
        return self._report(fitting.check_evaluate(self.namespace, samples, batch_size, seed))

    def keep_best(self, kind, losses=None, patience=2, seed=0):
        """Trainer.keep_best on scripted validation losses: `checkpoint` (snapshot and file) or `patience`."""
        return self._report(fitting.check_keep_best(self.namespace, kind, losses, patience, seed))

    def fit(self, epochs=5, stop_after=3, validate=True, seed=0):
        """Trainer.fit with scripted train_epoch, evaluate and keep_best: calls, history, stop, best weights."""
        return self._report(fitting.check_fit(self.namespace, epochs, stop_after, validate, seed))

    def capstone(self, kind, build):
        """Train `build()` (`mlp` or `cnn`) with the notebook's Trainer; held-out accuracy against the threshold."""
        return self._report(capstone.check_capstone(self.namespace, kind, build))

    def my_capstone(self, kind):
        """The bonus: the capstone recipe on the student's own mybabygrad/, loaded by the notebook's provided cell."""
        return self._report(capstone.check_my_capstone(self.namespace, kind))

    # ── chapter 10: convolutional networks ──

    def vectorized(self, op, shapes, larger, seed=0):
        """op's forward and backward run as many Python lines on `larger` inputs as on `shapes`: no pixel loops."""
        return self._report(convolution.check_vectorized(self.namespace["Tensor"], op, shapes, larger, seed))

    def conv2d(self, **options):
        """The Conv2d layer: Parameters, Kaiming scale, seed, conv(x, W) + b (with a stand-in Conv)."""
        return self._report(convolution.check_conv2d(self.namespace, **options))

    def max_pool2d(self, **options):
        """The MaxPool2d layer: no parameters, MaxPool on its input (with a stand-in MaxPool)."""
        return self._report(convolution.check_max_pool2d(self.namespace, **options))

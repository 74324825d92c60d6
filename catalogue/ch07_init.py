"""Chapter 7's catalog of typical mistakes, and of correct answers written another way.

Each entry is an answer a student might really write, given as edits to the solved exercise cell,
with the test cells it must lose (`loses`; empty for a correct alternative). The tests grade them
with the real `nbgrader autograde` and require exactly those cells to lose their points. The demo's
"partial" student makes the mistakes named in DEMO_PARTIAL.
"""
from autograder.build.submissions import right, wrong



XU = "a = gain * np.sqrt(6.0 / (fan_in + fan_out))"
XN = "std = gain * np.sqrt(2.0 / (fan_in + fan_out))"
KU = "a = GAINS[nonlinearity] * np.sqrt(3.0 / fan_in)"
KN = "std = GAINS[nonlinearity] / np.sqrt(fan_in)"
KN_DRAW = "return Tensor(np.random.default_rng(seed).normal(0.0, std, (fan_in, fan_out)))"
STEP = "losses.append(train_step(model, loss_fn, optimizer, images, labels))"
LOOP = ("for images, labels in loader:\n        " + STEP + "\n        if progress is not None:\n"
        "            recent = losses[-50:]\n"
        "            progress.set_postfix(loss=sum(recent) / len(recent), refresh=False)\n            progress.update(1)")
COUNT = '''    right = total = 0
    for images, labels in loader:
        predicted = model(images).numpy().argmax(axis=1)
        right += int((predicted == labels.numpy()).sum())
        total += len(predicted)
    return right / total'''

MISTAKES = [
    # xavier_uniform
    wrong("xavier_uniform_std_as_bound", "uses the standard deviation as the bound of the uniform", "xavier_uniform",
          XU, "a = gain * np.sqrt(2.0 / (fan_in + fan_out))", ["test_xavier_uniform"]),
    wrong("xavier_uniform_fan_in_only", "divides by fan_in alone", "xavier_uniform",
          XU, "a = gain * np.sqrt(6.0 / fan_in)", ["test_xavier_uniform"]),
    wrong("xavier_uniform_from_zero", "draws from U(0, a)", "xavier_uniform",
          "uniform(-a, a, (fan_in, fan_out))", "uniform(0, a, (fan_in, fan_out))", ["test_xavier_uniform"]),
    # xavier_normal
    wrong("xavier_normal_variance_as_std", "passes the variance where normal() wants the std", "xavier_normal",
          XN, "std = gain * 2.0 / (fan_in + fan_out)", ["test_xavier_normal"]),
    wrong("xavier_normal_no_gain", "ignores the gain (the visible check uses gain 1)", "xavier_normal",
          XN, "std = np.sqrt(2.0 / (fan_in + fan_out))", ["test_xavier_normal"]),
    # kaiming_uniform
    wrong("kaiming_uniform_fan_out", "divides by fan_out", "kaiming_uniform",
          KU, "a = GAINS[nonlinearity] * np.sqrt(3.0 / fan_out)", ["test_kaiming_uniform"]),
    wrong("kaiming_uniform_no_gain", "forgets the gain: half the variance ReLU needs", "kaiming_uniform",
          KU, "a = np.sqrt(3.0 / fan_in)", ["test_kaiming_uniform"]),
    wrong("kaiming_uniform_global_rng", "draws from the global np.random: the seed does nothing", "kaiming_uniform",
          "return Tensor(np.random.default_rng(seed).uniform(-a, a, (fan_in, fan_out)))",
          "return Tensor(np.random.uniform(-a, a, (fan_in, fan_out)))", ["test_kaiming_uniform"]),
    # kaiming_normal
    wrong("kaiming_normal_relu_only", "always uses the ReLU gain (the visible check uses relu)", "kaiming_normal",
          KN, "std = np.sqrt(2.0 / fan_in)", ["test_kaiming_normal"]),
    wrong("kaiming_normal_transposed", "returns shape (fan_out, fan_in)", "kaiming_normal",
          KN_DRAW, "return Tensor(np.random.default_rng(seed).normal(0.0, std, (fan_out, fan_in)))",
          ["test_kaiming_normal"]),
    wrong("kaiming_normal_array", "returns a NumPy array", "kaiming_normal",
          KN_DRAW, "return np.random.default_rng(seed).normal(0.0, std, (fan_in, fan_out)).astype(np.float32)",
          ["test_kaiming_normal"]),
    # train_epoch
    wrong("train_epoch_no_train_mode", "never switches the model back to training mode", "train_epoch",
          "    model.train()\n", "", ["test_train_epoch"]),
    wrong("train_epoch_returns_mean", "returns the mean loss instead of the list", "train_epoch",
          "    return losses", "    return float(np.mean(losses))", ["test_train_epoch"]),
    wrong("train_epoch_returns_early", "`return` indented into the loop: trains on one batch", "train_epoch",
          "    return losses", "        return losses", ["test_train_epoch", "test_mnist_training"]),
    wrong("train_epoch_no_running_loss", "shows the last batch's loss instead of the running mean", "train_epoch",
          "progress.set_postfix(loss=sum(recent) / len(recent), refresh=False)",
          "progress.set_postfix(loss=losses[-1], refresh=False)",
          ["test_train_epoch"]),
    # a mean over every batch is the mean of the last 50 only while an epoch has 50 batches or fewer
    wrong("train_epoch_running_mean_of_all", "shows the mean of every batch loss so far, not of the last 50",
          "train_epoch", "recent = losses[-50:]", "recent = losses", ["test_train_epoch"]),
    wrong("train_epoch_running_last_10", "shows the mean of the last 10 batch losses", "train_epoch",
          "recent = losses[-50:]", "recent = losses[-10:]", ["test_train_epoch"]),
    wrong("train_epoch_update_to_index", "progress.update(i) with the batch's index, as if it set the bar's position",
          "train_epoch", LOOP, LOOP.replace("for images, labels in loader:", "for i, (images, labels) in enumerate(loader):")
          .replace("progress.update(1)", "progress.update(i)"), ["test_train_epoch"]),
    # accuracy
    wrong("accuracy_batch_average", "averages the per-batch accuracies", "accuracy", COUNT,
          '''    scores = [float((model(images).numpy().argmax(axis=1) == labels.numpy()).mean()) for images, labels in loader]
    return float(np.mean(scores))''', ["test_accuracy"]),
    wrong("accuracy_no_eval", "measures in training mode", "accuracy", "    model.eval()\n", "", ["test_accuracy"]),
    wrong("accuracy_argmax_axis0", "takes the argmax over the batch axis", "accuracy",
          "predicted = model(images).numpy().argmax(axis=1)", "predicted = model(images).numpy().argmax(axis=0)",
          ["test_accuracy"]),
]

ALTERNATIVES = [
    right("xavier_uniform_from_std", "the bound as √3 times the std", "xavier_uniform", XU,
          "a = np.sqrt(3.0) * gain * np.sqrt(2.0 / (fan_in + fan_out))"),
    right("xavier_normal_standard", "a standard normal draw, scaled", "xavier_normal",
          "return Tensor(np.random.default_rng(seed).normal(0.0, std, (fan_in, fan_out)))",
          "return Tensor(std * np.random.default_rng(seed).standard_normal((fan_in, fan_out)))"),
    right("kaiming_uniform_bound", "gain √2 written into sqrt(6 / fan_in) form", "kaiming_uniform", KU,
          "a = np.sqrt(3.0 * GAINS[nonlinearity] ** 2 / fan_in)"),
    right("kaiming_normal_variance", "the variance first, then its square root", "kaiming_normal", KN,
          "variance = GAINS[nonlinearity] ** 2 / fan_in\n    std = variance ** 0.5"),
    right("train_epoch_postfix_after_update", "the bar advanced first, the running loss drawn with np.mean",
          "train_epoch", "            recent = losses[-50:]\n"
          "            progress.set_postfix(loss=sum(recent) / len(recent), refresh=False)\n"
          "            progress.update(1)                  # redraws the bar, postfix included, when it is time",
          "            progress.update(1)\n            progress.set_postfix(loss=float(np.mean(losses[-50:])))"),
    right("accuracy_numpy_sum", "np.sum over the comparisons, .data instead of numpy()", "accuracy", COUNT,
          '''    right, total = 0, 0
    for images, labels in loader:
        logits = model(images).data
        right += np.sum(np.argmax(logits, axis=1) == labels.data)
        total += labels.data.shape[0]
    return float(right) / total'''),
]

DEMO_PARTIAL = ["xavier_normal_no_gain", "kaiming_uniform_fan_out", "accuracy_batch_average"]

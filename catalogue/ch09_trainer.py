"""Chapter 9's catalog of typical mistakes, and of correct answers written another way (see ch03.py)."""
from autograder.build.submissions import right, wrong



EVAL_SUM = "        total_loss += self.loss_fn(logits, labels).item() * n"
IMPROVED = "    if val_loss < self.best_loss:"
SNAPSHOT = "        self.best_state = self.model.state_dict()"
SAVE = '''        if self.checkpoint_path is not None:
            save_checkpoint(self.checkpoint_path, self.model, self.optimizer)
'''
STOP = "    return self.patience is not None and self.stale_epochs >= self.patience"
RESTORE = '''    if self.best_state is not None:
        self.model.load_state_dict(self.best_state)
'''
EVAL_BODY = '''    self.model.eval()
    total_loss, right, seen = 0.0, 0, 0
    for images, labels in loader:
        logits = self.model(images)
        n = len(labels)
        total_loss += self.loss_fn(logits, labels).item() * n
        right += int((logits.numpy().argmax(axis=1) == labels.numpy()).sum())
        seen += n
    return {"loss": total_loss / seen, "accuracy": right / seen}'''
KEEP_BEST_CALL = '''        if self.keep_best(epoch, val["loss"]):
            break'''

MISTAKES = [
    wrong("keep_best_checkpoint_without_optimizer", "writes the best checkpoint with the model only", "keep_best",
          "save_checkpoint(self.checkpoint_path, self.model, self.optimizer)",
          "save_checkpoint(self.checkpoint_path, self.model)", ["test_keep_best"]),
    wrong("keep_best_beats_previous", "counts an epoch as the best when it beats the epoch before, not the best so far",
          "keep_best", "    if val_loss < self.best_loss:",
          "    improved = val_loss < getattr(self, 'previous_loss', float('inf'))\n"
          "    self.previous_loss = val_loss\n    if improved:", ["test_keep_best", "test_early_stopping"]),
    # evaluate
    wrong("evaluate_mean_of_means", "averages the batch means: the short last batch weighs too much", "evaluate",
          EVAL_SUM + "\n", "        total_loss += self.loss_fn(logits, labels).item()\n",
          ["test_evaluate"]),
    wrong("evaluate_train_mode", "forgets model.eval(): dropout is still on while measuring", "evaluate",
          "    self.model.eval()\n", "", ["test_evaluate"]),
    wrong("evaluate_batch_accuracy", "accuracy of the last batch only", "evaluate",
          'return {"loss": total_loss / seen, "accuracy": right / seen}',
          'return {"loss": total_loss / seen, "accuracy": float((logits.numpy().argmax(axis=1) == labels.numpy()).mean())}',
          ["test_evaluate"]),
    # keep_best: checkpoint
    wrong("keep_best_ties_improve", "counts a tie with the best as an improvement", "keep_best", IMPROVED,
          "    if val_loss <= self.best_loss:", ["test_keep_best", "test_early_stopping"]),
    wrong("keep_best_no_snapshot", "records the best loss and epoch but forgets the snapshot", "keep_best",
          SNAPSHOT + "\n", "", ["test_keep_best"]),
    wrong("keep_best_no_file", "keeps the best state in memory but never writes the checkpoint file", "keep_best",
          SAVE, "", ["test_keep_best"]),
    # keep_best: patience
    wrong("early_stop_off_by_one", "stops one stale epoch too late", "keep_best", STOP,
          "    return self.patience is not None and self.stale_epochs > self.patience", ["test_early_stopping"]),
    wrong("early_stop_no_reset", "never resets the count of stale epochs after an improvement", "keep_best",
          "        self.stale_epochs = 0\n", "", ["test_early_stopping"]),
    # fit
    wrong("fit_no_restore", "ends with the last weights instead of the best", "fit", RESTORE, "", ["test_fit"]),
    wrong("fit_ignores_stop", "never stops early", "fit", KEEP_BEST_CALL, '''        self.keep_best(epoch, val["loss"])''',
          ["test_fit"]),
    wrong("fit_last_batch_loss", "records the last batch's loss as the epoch's", "fit",
          'history["train_loss"].append(float(np.mean(losses)))', 'history["train_loss"].append(float(losses[-1]))',
          ["test_fit"]),
    wrong("fit_running_loss", "records chapter 7's running loss, the mean of the last 50 batch losses, as the "
          "epoch's loss", "fit", 'history["train_loss"].append(float(np.mean(losses)))',
          'history["train_loss"].append(float(np.mean(losses[-50:])))', ["test_fit"]),
    wrong("fit_no_training", "evaluates every epoch but never calls train_epoch", "fit",
          "            losses = train_epoch(self.model, train_loader, self.loss_fn, self.optimizer, bar)",
          "            losses = [0.0]", ["test_fit", "test_capstone_mlp"]),
    wrong("fit_validates_without_val_loader", "evaluates and asks keep_best every epoch, with or without a "
          "val_loader", "fit", '''        if val_loader is None:
            report(epoch, history["train_loss"][-1])
            continue
''', "", ["test_fit", "test_capstone_mlp"]),         # the capstone's fit has no val_loader: evaluate(None) raises
    wrong("fit_stops_before_recording", "asks keep_best before recording the epoch: the epoch that stops is "
          "missing from the history", "fit", '''        history["val_loss"].append(val["loss"])
        history["val_accuracy"].append(val["accuracy"])
        report(epoch, history["train_loss"][-1], val)
        if self.keep_best(epoch, val["loss"]):
            break''', '''        if self.keep_best(epoch, val["loss"]):
            break
        history["val_loss"].append(val["loss"])
        history["val_accuracy"].append(val["accuracy"])
        report(epoch, history["train_loss"][-1], val)''', ["test_fit"]),
    # the capstone
    wrong("mlp_unseeded", "layers without seeds: every call of build_mlp a different model", "build_mlp",
          "return Sequential(Linear(784, 128, seed=1), ReLU(), Linear(128, 10, seed=2))",
          "return Sequential(Linear(784, 128), ReLU(), Linear(128, 10))", ["test_capstone_mlp"]),
    wrong("mlp_shared_model", "builds the model once, outside the function, and returns that one at every call",
          "build_mlp", "return Sequential(Linear(784, 128, seed=1), ReLU(), Linear(128, 10, seed=2))",
          '''global MLP_MODEL
    if "MLP_MODEL" not in globals():
        MLP_MODEL = Sequential(Linear(784, 128, seed=1), ReLU(), Linear(128, 10, seed=2))
    return MLP_MODEL''', ["test_capstone_mlp"]),
    wrong("mlp_no_hidden_layer", "a linear model, no hidden layer: about 92%", "build_mlp",
          "return Sequential(Linear(784, 128, seed=1), ReLU(), Linear(128, 10, seed=2))",
          "return Sequential(Linear(784, 10, seed=1))", ["test_capstone_mlp"]),
    wrong("mlp_no_activation", "two Linear layers without a ReLU between them: still a linear model", "build_mlp",
          "return Sequential(Linear(784, 128, seed=1), ReLU(), Linear(128, 10, seed=2))",
          "return Sequential(Linear(784, 128, seed=1), Linear(128, 10, seed=2))", ["test_capstone_mlp"]),
    # evaluate, keep_best and fit: what each must leave as it found it
    wrong("evaluate_runs_backward", "runs loss.backward() on each batch, as in training (no step): gradients pile up",
          "evaluate", EVAL_SUM, "        loss = self.loss_fn(logits, labels)\n        loss.backward()\n"
          "        total_loss += loss.item() * n", ["test_evaluate"]),
    wrong("evaluate_numpy_loss", "sums the loss's .data instead of its item(): returns a numpy.float32, not a Python float",
          "evaluate", EVAL_SUM, "        total_loss += self.loss_fn(logits, labels).data * n", ["test_evaluate"]),
    wrong("keep_best_snapshot_only_with_file", "takes the snapshot only when there is a checkpoint_path: without one, "
          "fit has no best weights to restore", "keep_best", SNAPSHOT + "\n        self.stale_epochs = 0\n"
          "        if self.checkpoint_path is not None:\n",
          "        self.stale_epochs = 0\n        if self.checkpoint_path is not None:\n"
          "            self.best_state = self.model.state_dict()\n", ["test_keep_best"]),
    wrong("keep_best_min_delta", "counts an improvement only when it beats the best by 0.001 (a min_delta, as some "
          "libraries do); the text says strictly lower", "keep_best", IMPROVED,
          "    if val_loss < self.best_loss - 1e-3:", ["test_keep_best"]),
    wrong("keep_best_state_holders", "keeps dict(named_state()), the model's own Parameters, as the snapshot",
          "keep_best", SNAPSHOT, "        self.best_state = dict(self.model.named_state())", ["test_keep_best"]),
    wrong("fit_restores_every_epoch", "loads best_state back after every epoch, inside the loop: each epoch trains on "
          "from the best weights, not from the last", "fit", KEEP_BEST_CALL, '''        stop = self.keep_best(epoch, val["loss"])
        if self.best_state is not None:
            self.model.load_state_dict(self.best_state)
        if stop:
            break''', ["test_fit"]),
    wrong("fit_without_progress_bar", "calls train_epoch without the skeleton's bar", "fit",
          "losses = train_epoch(self.model, train_loader, self.loss_fn, self.optimizer, bar)",
          "losses = train_epoch(self.model, train_loader, self.loss_fn, self.optimizer)", ["test_fit"]),
    wrong("fit_no_report", "prints no line for the epochs it validates: a long run shows nothing", "fit",
          '        report(epoch, history["train_loss"][-1], val)\n', "", ["test_fit"]),
]

ALTERNATIVES = [
    right("evaluate_arrays", "collects every logit and label, then computes once", "evaluate",
          EVAL_BODY.removeprefix("    self.model.eval()\n"),
          '''    losses, sizes, hits = [], [], []
    for images, labels in loader:
        logits = self.model(images)
        losses.append(self.loss_fn(logits, labels).item())
        sizes.append(len(labels))
        hits.append(logits.numpy().argmax(axis=1) == labels.numpy())
    return {"loss": float(np.average(losses, weights=sizes)), "accuracy": float(np.concatenate(hits).mean())}'''),
    right("keep_best_early_return", "stale branch first", "keep_best",
          '''    if val_loss < self.best_loss:
        self.best_loss, self.best_epoch = val_loss, epoch
        self.best_state = self.model.state_dict()
        self.stale_epochs = 0
        if self.checkpoint_path is not None:
            save_checkpoint(self.checkpoint_path, self.model, self.optimizer)
        return False
    self.stale_epochs += 1
    return self.patience is not None and self.stale_epochs >= self.patience''',
          '''    if not val_loss < self.best_loss:
        self.stale_epochs += 1
        return bool(self.patience) and self.stale_epochs >= self.patience
    self.best_loss, self.best_epoch, self.stale_epochs = val_loss, epoch, 0
    self.best_state = self.model.state_dict()
    if self.checkpoint_path:
        save_checkpoint(self.checkpoint_path, self.model, self.optimizer)
    return False'''),
    right("fit_while_loop", "a while loop and a stop flag", "fit", KEEP_BEST_CALL,
          '''        stop = self.keep_best(epoch, val["loss"])
        if stop:
            break'''),
    right("evaluate_no_grad", "the forward passes inside no_grad(), and the model's mode put back afterwards",
          "evaluate", EVAL_BODY, '''    was_training = self.model.training
    self.model.eval()
    total_loss, right, seen = 0.0, 0, 0
    with no_grad():
        for images, labels in loader:
            logits = self.model(images)
            total_loss += float(self.loss_fn(logits, labels).numpy()) * len(labels)
            right += int((logits.numpy().argmax(axis=1) == labels.numpy()).sum())
            seen += len(labels)
    if was_training:
        self.model.train()
    return {"loss": total_loss / seen, "accuracy": right / seen}'''),
    right("mlp_wider", "a wider hidden layer", "build_mlp",
          "return Sequential(Linear(784, 128, seed=1), ReLU(), Linear(128, 10, seed=2))",
          "return Sequential(Linear(784, 256, seed=1), ReLU(), Linear(256, 10, seed=2))"),
]

DEMO_PARTIAL = ["evaluate_mean_of_means", "keep_best_no_file", "early_stop_off_by_one", "mlp_no_activation"]

"""Chapter 8's catalog of typical mistakes, and of correct answers written another way (see ch03.py)."""
from autograder.build.submissions import Edit, Mistake, right, wrong



SEEN_CHECK = '''        if isinstance(value, (Tensor, np.ndarray)):
            if id(value) not in seen:
                seen.add(id(value))
                found.append((name, value))'''
NAMED_STATE_BODY = '''    found, seen = [], set()

    def visit(value, name):
        if isinstance(value, (Tensor, np.ndarray)):
            if id(value) not in seen:
                seen.add(id(value))
                found.append((name, value))
        elif isinstance(value, Module):
            if id(value) not in seen:
                seen.add(id(value))
                for key, item in vars(value).items():
                    visit(item, f"{name}.{key}" if name else key)
        elif isinstance(value, (list, tuple)):
            for i, item in enumerate(value):
                visit(item, f"{name}.{i}")
        elif isinstance(value, dict):
            for key, item in value.items():
                visit(item, f"{name}.{key}")

    visit(self, "")
    return found'''
NAMED_STATE_GENERATOR = '''    seen = set()

    def visit(value, name):
        if isinstance(value, (Tensor, np.ndarray, Module)):
            if id(value) in seen:
                return
            seen.add(id(value))
        if isinstance(value, (Tensor, np.ndarray)):
            yield name, value
        elif isinstance(value, Module):
            for key, item in vars(value).items():
                yield from visit(item, key if not name else name + "." + key)
        elif isinstance(value, (list, tuple)):
            for i, item in enumerate(value):
                yield from visit(item, f"{name}.{i}")
        elif isinstance(value, dict):
            for key, item in value.items():
                yield from visit(item, f"{name}.{key}")

    return list(visit(self, ""))'''
STATE_DICT = "return {name: np.array(holder.data if isinstance(holder, Tensor) else holder)"
STRICT_CHECKS = '''    if strict and missing:
        raise KeyError(f"the state dict has no entry for {missing}")
    if strict and unexpected:
        raise KeyError(f"the state dict has entries the model does not: {unexpected}")'''
SHAPE_CHECK = '''    for name, holder in holders.items():
        if name in state and np.shape(state[name]) != np.shape(holder):
            raise ValueError(f"{name}: the state dict has shape {np.shape(state[name])}, the model {np.shape(holder)}")
'''
COPY_IN_PLACE = '''            target = holder.data if isinstance(holder, Tensor) else holder
            target[...] = state[name]'''
OPT_POSITION = 'state[f"{name}.{position[key]}"] = np.array(array)'
OPT_NUMBERS = '''        elif isinstance(value, (int, float)):
            state[name] = np.array(value)'''
SAVE_OPEN = '''    with open(path, "wb") as f:
        np.savez(f, **arrays)'''
LOAD_TRY = '''    try:
        archive = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as error:
        raise ValueError(f"{path} is not a babygrad checkpoint: NumPy cannot read it ({error})") from None'''
MARK_CHECK = '''        if CHECKPOINT_MARK not in archive.files:
            raise ValueError(f"{path} is not a babygrad checkpoint: it has no {CHECKPOINT_MARK!r} entry")
'''
READ_ENTRIES = '''        try:
            arrays = {name: archive[name] for name in archive.files}
        except (ValueError, OSError, EOFError, zipfile.BadZipFile) as error:
            raise ValueError(f"{path} is not a babygrad checkpoint: it is damaged ({error})") from None'''

LOAD_COPY = """            target = holder.data if isinstance(holder, Tensor) else holder
            target[...] = state[name]"""

MISTAKES = [
    wrong("optimizer_state_counters_only", "saves the integer numbers (t) but not the float settings (lr, betas), "
          "so a learning rate changed during the run is lost", "optimizer_state",
          "elif isinstance(value, (int, float)):", "elif isinstance(value, int):", ["test_optimizer_state"]),
    # named_state
    wrong("named_state_parameters_only", "collects Parameters only, forgetting buffers such as running_mean",
          "named_state", "if isinstance(value, (Tensor, np.ndarray)):", "if isinstance(value, Parameter):",
          ["test_named_state", "test_resume_training"]),
    wrong("named_state_no_dedup", "names a tied weight twice", "named_state", SEEN_CHECK,
          '''        if isinstance(value, (Tensor, np.ndarray)):
            found.append((name, value))''', ["test_named_state"]),
    wrong("named_state_leading_dot", "gives the top module's attributes a leading dot", "named_state",
          'visit(item, f"{name}.{key}" if name else key)', 'visit(item, f"{name}.{key}")', ["test_named_state"]),
    # state_dict
    wrong("state_dict_aliases", "returns the model's own arrays instead of copies", "state_dict", STATE_DICT,
          "return {name: (holder.data if isinstance(holder, Tensor) else holder)", ["test_state_dict"]),
    wrong("state_dict_tensors", "stores the Tensors themselves", "state_dict", STATE_DICT,
          "return {name: holder", ["test_state_dict", "test_resume_training"]),
    # load_state_dict
    wrong("load_rebinds_loop_variable", "assigns to the loop variable, which changes nothing in the model",
          "load_state_dict", COPY_IN_PLACE, "            holder = state[name]",
          ["test_load_state_dict", "test_load_state_dict_refuses", "test_resume_training"]),
    wrong("load_no_strict_checks", "never checks for missing or unexpected names", "load_state_dict",
          STRICT_CHECKS, "", ["test_load_state_dict_refuses"]),
    wrong("load_checks_while_copying", "checks each shape just before copying it: a refused load is half done",
          "load_state_dict", SHAPE_CHECK + '''    for name, holder in holders.items():
        if name in state:
''', '''    for name, holder in holders.items():
        if name in state:
            if np.shape(state[name]) != np.shape(holder):
                raise ValueError(f"{name}: the state dict has shape {np.shape(state[name])}, the model {np.shape(holder)}")
''', ["test_load_state_dict_refuses"]),
    wrong("load_shape_unnamed", "a shape error that does not say which entry or which shapes", "load_state_dict",
          'raise ValueError(f"{name}: the state dict has shape {np.shape(state[name])}, the model {np.shape(holder)}")',
          'raise ValueError("shape mismatch")', ["test_load_state_dict_refuses"]),
    # optimizer state
    wrong("optimizer_state_by_id", "keys per-parameter arrays by id(p), which changes in every process",
          "optimizer_state", OPT_POSITION, 'state[f"{name}.{key}"] = np.array(array)',
          ["test_optimizer_state", "test_resume_training"]),
    wrong("optimizer_state_no_numbers", "saves the arrays but not the step count t", "optimizer_state",
          OPT_NUMBERS, "", ["test_optimizer_state", "test_resume_training"]),
    wrong("optimizer_load_aliases", "load_state_dict keeps the dict's arrays as the optimizer's own: Adam's steps "
          "then change the dict in place", "optimizer_state", "getattr(self, name)[id(self.params[int(index)])] = np.array(value)",
          "getattr(self, name)[id(self.params[int(index)])] = value", ["test_optimizer_state"]),
    # checkpoint files
    wrong("save_adds_npz", "np.savez(path, ...) writes path + '.npz'", "checkpoint", SAVE_OPEN,
          "    np.savez(path, **arrays)", ["test_checkpoint_round_trip", "test_resume_training"]),
    wrong("load_no_try", "lets NumPy's own errors through", "checkpoint", LOAD_TRY,
          "    archive = np.load(path, allow_pickle=False)", ["test_checkpoint_refuses"]),
    wrong("load_no_mark", "accepts any .npz archive", "checkpoint", MARK_CHECK, "", ["test_checkpoint_refuses"]),
    wrong("load_allows_pickle", "np.load(path, allow_pickle=True), a common copy from the web: NumPy then reads a "
          "text file as a pickle and raises UnpicklingError", "checkpoint", "allow_pickle=False", "allow_pickle=True",
          ["test_checkpoint_refuses"]),
    wrong("load_allows_pickle_catches_all", "allows pickle and turns any exception into the refusal: a marked file "
          "whose entry needs pickle is read, unpickling it", "checkpoint", LOAD_TRY,
          LOAD_TRY.replace("allow_pickle=False", "allow_pickle=True")
          .replace("except (ValueError, OSError, EOFError, zipfile.BadZipFile) as error:", "except Exception as error:"),
          ["test_checkpoint_refuses"]),
    wrong("load_entries_unguarded", "guards np.load but not the reading of the entries: an entry only pickle can "
          "read raises NumPy's own ValueError, which does not name the file", "checkpoint", READ_ENTRIES,
          "        arrays = {name: archive[name] for name in archive.files}", ["test_checkpoint_refuses"]),
    wrong("load_state_dict_rebinds_data", "rebinds each Parameter's .data to the state's array instead of copying "
          "into it: the model and the dict then share their values", "load_state_dict", LOAD_COPY,
          """            if isinstance(holder, Tensor):
                holder.data = state[name]
            else:
                holder[...] = state[name]""", ["test_load_state_dict"]),
    # optimizer state and its settings, checkpoints without an optimizer, buffers loaded in place
    wrong("optimizer_state_dict_order", "numbers per-parameter arrays by their order in the dict keyed by id(p), not by "
          "the parameter's position in self.params: wrong once a parameter got its first gradient later",
          "optimizer_state", '''            for key, array in value.items():
                state[f"{name}.{position[key]}"] = np.array(array)''', '''            for i, array in enumerate(value.values()):
                state[f"{name}.{i}"] = np.array(array)''', ["test_optimizer_state"]),
    wrong("optimizer_state_named_numbers_only", "saves only the numbers the text names as examples (lr and t), not "
          "every setting", "optimizer_state", OPT_NUMBERS, '''        elif name in ("lr", "t"):
            state[name] = np.array(value)''', ["test_optimizer_state"]),
    wrong("optimizer_load_numbers_as_floats", "puts every number back as a float: t becomes 12.0", "optimizer_state",
          "setattr(self, name, np.asarray(value).item())", "setattr(self, name, float(value))", ["test_optimizer_state"]),
    wrong("optimizer_load_numbers_as_arrays", "puts numbers back as 0-d arrays: the next state_dict() skips them",
          "optimizer_state", "setattr(self, name, np.asarray(value).item())", "setattr(self, name, np.array(value))",
          ["test_optimizer_state", "test_resume_training"]),
    wrong("save_requires_optimizer", "save_checkpoint always saves optimizer.state_dict(): fails without an optimizer",
          "checkpoint", '''    if optimizer is not None:
        arrays.update({f"optimizer.{name}"''', '''    if True:
        arrays.update({f"optimizer.{name}"''', ["test_checkpoint_round_trip"]),
    wrong("load_compares_sizes", "compares the sizes of the arrays, not their shapes: a bias saved as a column is "
          "accepted, and the copy fails half-way", "load_state_dict",
          "if name in state and np.shape(state[name]) != np.shape(holder):",
          "if name in state and np.size(state[name]) != np.size(holder):", ["test_load_state_dict_refuses"]),
    wrong("load_buffers_rebound", "copies into the Parameters but rebinds the loop variable for a buffer: running "
          "statistics are never loaded", "load_state_dict", COPY_IN_PLACE, '''            if isinstance(holder, Tensor):
                holder.data[...] = state[name]
            else:
                holder = np.array(state[name])''',
          ["test_load_state_dict", "test_load_state_dict_refuses", "test_resume_training"]),
    # section 8.4's fourth detail: a checkpoint of another model is refused
    wrong("load_checkpoint_not_strict", "loads the model's entries with strict=False: a checkpoint of another model is "
          "half-loaded without an error", "checkpoint", '''if name.startswith("model.")})''',
          '''if name.startswith("model.")}, strict=False)''', ["test_checkpoint_refuses"]),
    # buffers kept as Tensors, checkpoints without the mark, settings of 0
    wrong("state_dict_tensor_buffer_as_object", "takes .data of Parameters only: a buffer kept as a Tensor becomes "
          "an array holding the Tensor object", "state_dict", "holder.data if isinstance(holder, Tensor) else holder",
          "holder.data if isinstance(holder, Parameter) else holder", ["test_state_dict", "test_resume_training"]),
    wrong("load_tensor_buffer_item_assignment", "writes through .data for Parameters only: a buffer kept as a Tensor "
          "is indexed itself, which a Tensor does not allow", "load_state_dict",
          "target = holder.data if isinstance(holder, Tensor) else holder",
          "target = holder.data if isinstance(holder, Parameter) else holder",
          ["test_load_state_dict", "test_load_state_dict_refuses", "test_resume_training"]),
    wrong("optimizer_state_skips_zero_numbers", "saves only the numbers that are not 0 (a truth test): a setting "
          "turned off is not saved", "optimizer_state", "elif isinstance(value, (int, float)):",
          "elif isinstance(value, (int, float)) and value:", ["test_optimizer_state"]),
    wrong("optimizer_load_skips_zero_numbers", "loads only the numbers that are not 0 (a truth test): a setting "
          "turned off stays on", "optimizer_state", "            setattr(self, name, np.asarray(value).item())",
          "            if np.asarray(value).item():\n                setattr(self, name, np.asarray(value).item())",
          ["test_optimizer_state"]),
    Mistake("load_checkpoint_entries_not_mark", "never looks for the mark; refuses only files whose entries do not "
            "fit the model, by turning load_state_dict's KeyError into a ValueError",
            (Edit("checkpoint", "        if CHECKPOINT_MARK not in archive.files:\n            raise ValueError(f\"{path} "
                  "is not a babygrad checkpoint: it has no {CHECKPOINT_MARK!r} entry\")\n", ""),
             Edit("checkpoint", '''    model.load_state_dict({name[len("model."):]: value for name, value in arrays.items()
                           if name.startswith("model.")})''', '''    try:
        model.load_state_dict({name[len("model."):]: value for name, value in arrays.items()
                               if name.startswith("model.")})
    except KeyError as error:
        raise ValueError(f"{path} is not a babygrad checkpoint of this model ({error})") from None''')),
            ("test_checkpoint_refuses",)),
]

ALTERNATIVES = [
    right("named_state_generator", "a recursive generator, `yield from`", "named_state", NAMED_STATE_BODY,
          NAMED_STATE_GENERATOR),
    right("load_rebinds_data", "gives each Tensor a new array (the Parameter objects stay the same)",
          "load_state_dict", COPY_IN_PLACE, '''            if isinstance(holder, Tensor):
                holder.data = np.array(state[name], dtype=holder.data.dtype)
            else:
                holder[...] = state[name]'''),
    right("state_dict_copy", "x.copy() instead of np.array(x)", "state_dict", STATE_DICT,
          "return {name: (holder.data if isinstance(holder, Tensor) else holder).copy()"),
    right("load_copyto", "np.copyto into the holder's array", "load_state_dict", COPY_IN_PLACE,
          "            np.copyto(holder.data if isinstance(holder, Tensor) else holder, state[name])"),
    right("optimizer_state_items", "np.asarray(...).copy() and numbers as 0-d arrays by np.asarray", "optimizer_state",
          OPT_POSITION, 'state[f"{name}.{position[key]}"] = np.asarray(array).copy()'),
    right("load_default_no_pickle", "np.load(path): NumPy's default already refuses pickles", "checkpoint",
          "np.load(path, allow_pickle=False)", "np.load(path)"),
    right("load_catches_any_error", "no pickle, and any exception of np.load but a missing file turned into the "
          "refusal", "checkpoint", "except (ValueError, OSError, EOFError, zipfile.BadZipFile) as error:",
          "except Exception as error:"),
    right("checkpoint_savez_compressed", "compressed .npz", "checkpoint", SAVE_OPEN,
          '''    with open(path, "wb") as f:
        np.savez_compressed(f, **arrays)'''),
    right("optimizer_state_by_params", "walks self.params for each per-parameter dict", "optimizer_state",
          '''            for key, array in value.items():
                state[f"{name}.{position[key]}"] = np.array(array)''',
          '''            for i, p in enumerate(self.params):
                if id(p) in value:
                    state[f"{name}.{i}"] = value[id(p)].copy()'''),
    right("load_checkpoint_optimizer_first", "loads the optimizer's entries before the model's", "checkpoint",
          '''    model.load_state_dict({name[len("model."):]: value for name, value in arrays.items()
                           if name.startswith("model.")})
    if optimizer is not None:
        optimizer.load_state_dict({name[len("optimizer."):]: value for name, value in arrays.items()
                                   if name.startswith("optimizer.")})''',
          '''    if optimizer is not None:
        optimizer.load_state_dict({name.removeprefix("optimizer."): value for name, value in arrays.items()
                                   if name.startswith("optimizer.")})
    model.load_state_dict({name.removeprefix("model."): value for name, value in arrays.items()
                           if name.startswith("model.")})'''),
    right("load_checkpoint_wraps_refusal", "turns load_state_dict's refusal into a ValueError that names the file",
          "checkpoint", '''    model.load_state_dict({name[len("model."):]: value for name, value in arrays.items()
                           if name.startswith("model.")})''', '''    try:
        model.load_state_dict({name[len("model."):]: value for name, value in arrays.items()
                               if name.startswith("model.")})
    except (KeyError, ValueError) as error:
        raise ValueError(f"{path} is a checkpoint of another model: {error}") from None'''),
]

DEMO_PARTIAL = ["named_state_parameters_only", "state_dict_aliases", "load_no_strict_checks", "load_no_try"]

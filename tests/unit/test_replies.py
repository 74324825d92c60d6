"""A malformed reply becomes a ProbeFailure that names the field, for the record mechanism itself and for each
request kind whose judge reads its reply as a record: the right code's real reply, run in process, passes, and
the same reply with one field broken fails the probe, saying which field."""
import copy
import functools
import json
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pytest
from helpers.solved_code import in_process, notebook_namespace

from autograder.grading.judge import JUDGED_CHECKS
from autograder.grading.judge.plan import OpSpec
from autograder.grading.judge.probes import MAX_ARRAY_ELEMENTS, ProbeFailure, pack, probe_code, reply_from_outputs
from autograder.grading.judge.replies import (Array, AsText, Bool, Failed, Flag, Int, ListOf, Nested, Number, Optional,
                                              Real, Tag, Text, read, wire)

pytestmark = pytest.mark.unit


@dataclass(frozen=True)
class Inner:
    count: int = wire(Int(low=0))


@dataclass(frozen=True)
class Sample:
    values: list[np.ndarray] = wire(ListOf(Array(), length="params"))
    count: int = wire(Int(low=0))
    loss: float = wire(Real())
    name: str = wire(Text(10))
    done: bool = wire(Bool())
    inner: list[Inner] = wire(ListOf(Nested(Inner), most=2))
    extra: np.ndarray | None = wire(Optional(Array()))
    shown: str = wire(AsText(5, absent=None))
    said: bool = wire(Flag())
    real: float | None = wire(Number())


def sample():
    return {"values": [pack(np.arange(3.0)), pack(np.ones((2, 2)))], "count": 2, "loss": 0.5, "name": "x",
            "done": True, "inner": [{"count": 1}]}


def test_a_well_formed_reply_reads_as_its_record():
    got = read(sample(), Sample, params=2)
    assert np.array_equal(got.values[1], np.ones((2, 2))) and got.count == 2 and got.loss == 0.5
    assert got.inner == [Inner(1)] and got.extra is None
    # the lenient fields, missing: the kernel said nothing
    assert (got.shown, got.said, got.real) == ("None", False, None)


@pytest.mark.parametrize("change, says", [
    (lambda r: r.pop("count"), "the reply's 'count' is missing"),
    (lambda r: r.update(count=float("nan")), "the reply's 'count' is not a whole number"),
    (lambda r: r.update(count=True), "the reply's 'count' is not a whole number"),
    (lambda r: r.update(count=-1), "the reply's 'count' is -1, outside"),
    (lambda r: r.update(loss=float("inf")), "the reply's 'loss' is inf, not a finite number"),
    (lambda r: r.update(loss="0.5"), "the reply's 'loss' is not a number"),
    (lambda r: r.update(name=3), "the reply's 'name' is not a string"),
    (lambda r: r.update(done=1), "the reply's 'done' is not true or false"),
    (lambda r: r.update(values="1,2,3"), "the reply's 'values' is not a list"),
    (lambda r: r["values"].pop(), "the reply's 'values' holds 1 values, expected 2"),
    (lambda r: r["values"].__setitem__(1, "<f8;2;@@@@"), r"the reply's 'values'\[1\]: .*not valid base64"),
    (lambda r: r["values"].__setitem__(0, pack(np.zeros(MAX_ARRAY_ELEMENTS + 1, np.int8))),
     r"the reply's 'values'\[0\]: an array in the reply has 1000001 elements"),
    (lambda r: r["values"].__setitem__(0, [1.0, 2.0]), r"the reply's 'values'\[0\]: .*not a string"),
    (lambda r: r.update(inner=[{"count": 1}, {"count": 2}, {"count": 3}]), "'inner' holds 3 values, expected 0 to 2"),
    (lambda r: r["inner"][0].update(count="1"), r"the reply's 'inner'\[0\]\['count'\] is not a whole number"),
    (lambda r: r.update(inner=[[1]]), r"the reply's 'inner'\[0\] is not a JSON object"),
    (lambda r: r.update(extra={"__ndarray__": "x"}), "the reply's 'extra': .*not a string"),
], ids=["missing", "NaN count", "bool count", "negative count", "infinite loss", "string loss", "number name",
        "int flag", "string for arrays", "short list", "bad base64", "oversized array", "list for an array",
        "long list", "nested field", "nested not object", "object for an array"])
def test_a_malformed_field_is_a_probe_failure_that_names_it(change, says):
    reply = sample()
    change(reply)
    with pytest.raises(ProbeFailure, match=says):
        read(reply, Sample, params=2)


def test_the_reply_must_be_an_object():
    with pytest.raises(ProbeFailure, match="the reply is not a JSON object"):
        read([1], Sample, params=2)


@dataclass(frozen=True)
class Stage:
    TAG: ClassVar[Tag] = Tag("stage", "run")
    stage: str = wire(Text())
    value: float = wire(Real())


@dataclass(frozen=True)
class Other:
    stage: str = wire(Text())


def test_a_union_reads_the_member_whose_tag_the_reply_carries_else_the_last():
    raised = {"error": {"kind": "error", "error_type": "ValueError", "message": "no", "line": "x = 1"}}
    assert read(raised, Failed | Sample, params=2).error.error_type == "ValueError"
    assert isinstance(read(sample(), Failed | Sample, params=2), Sample)
    assert read({"stage": "run", "value": 1}, Stage | Other) == Stage("run", 1.0)
    assert read({"stage": "type", "value": 1}, Stage | Other) == Other("type")
    with pytest.raises(ProbeFailure, match=r"the reply's 'error': a returned value in the reply is malformed"):
        read({"error": "boom"}, Failed | Sample, params=2)


# ── each converted request kind, on the right code's real reply ──

@functools.cache
def solved(chapter_id):
    """The chapter's notebook, solved, without its training runs: one namespace per chapter for these tests."""
    return notebook_namespace(chapter_id, training=False)


def real_reply(chapter_id, request):
    """The reply the chapter's solved code gives `request`, run in process as a probe."""
    namespace = solved(chapter_id)
    outputs = in_process(namespace)(probe_code({"kind": "batch", "requests": [request], "marks": [0]}, install=True))
    return json.loads(json.dumps(reply_from_outputs(outputs)["replies"][0]))


def judged(name, args, chapter_id, change):
    """What the judge of check.`name` makes of its first request's real reply after `change`."""
    judge = JUDGED_CHECKS[name](np.random.default_rng(7), *args)
    reply = real_reply(chapter_id, next(judge))
    change(reply)
    try:
        judge.send(reply)
    except StopIteration as done:
        return done.value
    return "another request"


def drop(*path):
    def change(reply):
        node = reply
        for key in path[:-1]:
            node = node[key]
        del node[path[-1]]
    return change


def put(value, *path):
    def change(reply):
        node = reply
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = copy.deepcopy(value)
    return change


def unchanged(reply):
    pass


HUGE = pack(np.zeros(MAX_ARRAY_ELEMENTS + 1, np.int8))

# (check, its arguments, chapter, a change to the real reply, what the ProbeFailure says)
MALFORMED = [
    ("sgd", (), "ch05", drop("grads_after"), "'grads_after' is missing"),
    ("sgd", (), "ch05", put("1,2", "steps", 0), r"'steps'\[0\] is not a list"),
    ("sgd", (), "ch05", put(HUGE, "steps", 1, 0), r"'steps'\[1\]\[0\]: an array in the reply has 1000001 elements"),
    ("sgd", (), "ch05", put(None, "float32", "same_array"), r"'float32'\['same_array'\] is not true or false"),
    ("optimizer_zero_grad", (), "ch05", put([1.0], "before"), "'before' holds 1 values, expected 3"),
    ("optimizer_zero_grad", (), "ch05", put(7, "grad_types", 0), r"'grad_types'\[0\] is not a string"),
    ("train_step", (), "ch05", put(["forward", "fly"], "calls", 0, "events"), r"'calls'\[0\]\['events'\]\[1\] is not one of"),
    ("train_step", (), "ch05", put("<f8;2;@@@@", "calls", 1, "seen"), r"'calls'\[1\]\['seen'\]: .*base64"),
    ("train_step", (), "ch05", put([], "calls"), "'calls' holds 0 values, expected 1 to 2"),
    ("initializer", ("xavier_uniform",), "ch07", put([], "draws"), "'draws' holds 0 values, expected 3"),
    ("initializer", ("xavier_uniform",), "ch07", put("1;2", "draws", 2, "value"), r"'draws'\[2\]\['value'\]: .*packed"),
    ("initializer", ("xavier_uniform",), "ch07", drop("draws", 0, "value"), r"'draws'\[0\]\['value'\] is missing"),
    ("train_epoch", (), "ch07", put([3, float("nan")], "calls"), r"'calls'\[1\] is not a whole number"),
    ("train_epoch", (), "ch07", put(HUGE, "result"), "'result': an array in the reply has 1000001 elements"),
    ("accuracy", (), "ch07", put(pack(np.zeros(0)), "result"), "'result' holds 0 values, expected 1"),
    ("accuracy", (), "ch07", put([0.5], "result"), "'result': .*not a string"),
    ("constructor", ("list",), "ch02", drop("results", 0, "fields", "_op"), r"'results'\[0\]\['fields'\]\['_op'\] is missing"),
    ("constructor", ("list",), "ch02", put({"value": "1,2"}, "results", 0, "data"), r"'results'\[0\]\['data'\]\['value'\]: "),
    ("constructor", ("copies",), "ch02", put([], "results"), "'results' holds 0 values, expected 4"),
    ("factories", ("constant",), "ch02", drop("results", 1, "data"), r"'results'\[1\]\['data'\] is missing"),
    ("tensor_repr", (), "ch02", put(["Tensor"], "results", 0, "text"), r"'results'\[0\]\['text'\] is not a string"),
    ("properties", ("matrix",), "ch02", drop("members", "ndim"), r"'members'\['ndim'\] is missing"),
    ("conversions", (), "ch02", drop("detach"), r"the reply: 'detach' is missing"),
    ("conversions", (), "ch02", put(HUGE, "numpy", "after"), r"'numpy'\['after'\]: an array in the reply has 1000001"),
    ("conversions", (), "ch02", put(True, "len"), r"'len' is not a whole number"),
    ("conv2d", (), "ch10", drop("bias_backward"), "the reply: 'bias_backward' is missing"),
    ("conv2d", (), "ch10", put([[2, 3.5]], "bias_backward", "operands"), r"'bias_backward'\['operands'\]\[0\]\[1\] is not a whole"),
    ("conv2d", (), "ch10", put([True], "reaches"), "'reaches' holds 1 values, expected 2"),
    ("conv2d", (), "ch10", put("Parameter", "weight"), "'weight' is not a JSON object"),
    ("max_pool2d", (), "ch10", drop("parameters"), "the reply: 'parameters' is missing"),
    ("max_pool2d", (), "ch10", put(float("nan"), "parameters"), "'parameters' is not a whole number"),
    ("engine", ("accumulation",), "ch03", drop("own"), "the reply's 'own' is missing"),
    ("engine", ("accumulation",), "ch03", put({"shared": [[0, 99]], "readonly": []}, "own"),
     r"'own'\['shared'\]\[0\]\[1\] is 99, not below"),
    ("engine", ("product",), "ch03", put([["float32", "no", "float32", True]], "handed"), r"'handed'\[0\]\[1\] is not true or false"),
    ("engine", ("product",), "ch03", put(float("nan"), "depth"), "'depth' is not a whole number"),
    ("engine", ("product",), "ch03", put([], "grads"), "'grads' holds 0 values, expected"),
    ("operators", (), "ch03", put([], "results"), "'results' holds 0 values, expected"),
    ("operators", (), "ch03", put(float("nan"), "results", 0, "stray"), r"'results'\[0\]\['stray'\] is not a whole number"),
    ("operators", (), "ch03", drop("results", 1, "returned"), r"'results'\[1\]\['returned'\] is missing"),
    ("indexing", (1, (3, 4)), "ch03", put("ok", "returned"),
     r"'returned': a returned value in the reply is malformed"),
    ("module", ("parameters",), "ch04", put({"items": [], "count": -1}, "parameters"), r"'parameters'\['count'\] is -1"),
    ("module", ("parameters",), "ch04", put({"items": [1, 2], "count": 1}, "parameters"), r"'parameters'\['items'\]\[0\]: "),
    ("module", ("children",), "ch04", drop("leaf"), "the reply's 'leaf' is missing"),
    ("module", ("train_eval",), "ch04", put(["yes"], "flags", 0, "x"), r"'flags'\[0\]\['x'\] is not a JSON object"),
    ("module", ("train_eval",), "ch04", put([], "flags"), "'flags' holds 0 values, expected 7"),
    ("module", ("zero_grad",), "ch04", put(HUGE, "values", 0), r"'values'\[0\]: an array in the reply has 1000001"),
    ("module", ("call",), "ch04", put([[{"kind": "tensor"}]], "calls"), r"'calls'\[0\]\[0\]: an array in the reply is not a string"),
    ("value_graph", ("mul",), "ch01", put({"is_value": True, "members": [["input", 2]]}, "results", 0),
     r"'results'\[0\]\['members'\]\[0\]\[1\] is not one of 0, 1"),
    ("value_graph", ("mul",), "ch01", put([["twin", 0]], "results", 3, "members"),
     r"'results'\[3\]\['members'\]\[0\] is not a pair \[input \| value \| other, value\]"),
    ("value_graph", ("mul",), "ch01", put({"input": 0}, "results", 1, "members"), r"'results'\[1\]\['members'\] is not a list"),
    ("value_backward", ("add",), "ch01", put("finished", "results", 0, "stage"), r"'results'\[0\]\['stage'\] is not one of done"),
    ("value_backward", ("add",), "ch01", put([1.0], "results", 2, "grads"), r"'results'\[2\]\['grads'\] holds 1 values, expected 2"),
    ("value_engine", ("long_chain",), "ch01", put(float("nan"), "depth"), "'depth' is not a whole number"),
    ("value_engine", ("order",), "ch01", drop("shown"), "'shown' is missing"),
    ("numerical_gradient", (), "ch01", put(5, "results", 0, "count"),
     r"'results'\[0\]: 'count' is 5, but 'returned' holds 1 derivatives"),
    ("numerical_gradient", (), "ch01", put(["1.0", 2.0], "results", 1, "returned"),
     r"'results'\[1\]\['returned'\]\[0\] is not a number"),
    ("evaluate", (), "ch09", put(pack(np.ones(3)), "params"), "'params' is not a list"),
    ("evaluate", (), "ch09", drop("params"), "'params' is missing"),
    ("evaluate", (), "ch09", put({"loss": "float"}, "types"), r"'types'\['loss'\] is not a JSON object"),
    ("keep_best", ("checkpoint",), "ch09", put([[3, float("nan")]], "shapes"), r"'shapes'\[0\]\[1\] is not a whole number"),
    ("keep_best", ("checkpoint",), "ch09", put("[1.0]", "records", 0, "state"), r"'records'\[0\]\['state'\] is not a list"),
    ("keep_best", ("checkpoint",), "ch09", put([{}] * 7, "records"), "'records' holds 7 values, expected 0 to 6"),
    ("fit", (), "ch09", put(float("nan"), "train_calls"), "'train_calls' is not a whole number"),
    ("fit", (), "ch09", put([[1, True, 2]], "restarts"), r"'restarts'\[0\] is not a list of 2 values"),
    ("fit", (), "ch09", put([[1]], "keep_best_calls"), r"'keep_best_calls'\[0\] is not a list of 2 values"),
    ("fit", (), "ch09", put([HUGE], "params"), r"'params'\[0\]: an array in the reply has 1000001 elements"),
]

# chapter 8: state dicts, optimizer state, checkpoints
MALFORMED += [
    ("named_state", (), "ch08", put("x", "pairs", 0, "value"), r"'pairs'\[0\]\['value'\]: a returned value in the reply is malformed"),
    ("named_state", (), "ch08", put({"name": "w"}, "pairs"), r"'pairs' is not a list"),
    ("state_dict", (), "ch08", drop("after"), "the reply's 'after' is missing"),
    ("state_dict", (), "ch08", put("many", "state", "entries"), r"'state'\['entries'\] is not a list"),
    ("load_state_dict", ("values",), "ch08", put([], "holders"), "'holders' holds 0 values, expected"),
    ("load_state_dict", ("errors",), "ch08", put({"kind": "returned"}, "cases", 0, "raised"),
     r"'cases'\[0\]\['raised'\]\['kind'\] is not one of error"),
    ("load_state_dict", ("errors",), "ch08", put([], "cases"), "'cases' holds 0 values, expected"),
    ("optimizer_state", ("adam",), "ch08", put("1", "ids"), "'ids' is not a list"),
    ("optimizer_state", ("adam",), "ch08", drop("numbers", "lr"), r"'numbers'\['lr'\] is missing"),
    ("optimizer_state", ("adam",), "ch08", drop("after_fresh"), "the reply's 'after_fresh' is missing"),
    ("checkpoint", ("round_trip",), "ch08", drop("loaded"), "the reply's 'loaded' is missing"),
    ("checkpoint", ("round_trip",), "ch08", put([1], "alone", "model"), r"'alone'\['model'\] holds 1 values, expected"),
    ("checkpoint", ("round_trip",), "ch08", put(HUGE, "model", 0), r"'model'\[0\]: an array in the reply has 1000001"),
    ("checkpoint", ("refuses", "text"), "ch08", put([], "results", 0, "holders"),
     r"'results'\[0\]\['holders'\] holds 0 values, expected"),
    ("resume_training", (), "ch08", put("x", "original_out"), "'original_out': "),
    ("resume_training", (), "ch08", put(7, "resumed"), "'resumed' is not a JSON object"),
]

# chapter 6: datasets, loaders, transforms, IDX files
MALFORMED += [
    ("array_dataset", (), "ch06", put("x", "sample"), "'sample': a returned value in the reply is malformed"),
    ("array_dataset", (), "ch06", put(True, "n"), "'n' is not a JSON object"),
    ("array_dataset", (), "ch06", put("ValueError", "mismatch"), "'mismatch' is not a JSON object"),
    ("data_loader", ("batches",), "ch06", put([], "runs"), "'runs' holds 0 values, expected 1 to 5"),
    ("data_loader", ("batches",), "ch06", put([{"tensor": False, "type_name": "list"}], "runs", 0, "batches", 0, "fields"),
     r"'runs'\[0\]\['batches'\]\[0\]\['fields'\] holds 1 values, expected 2"),
    ("data_loader", ("batches",), "ch06", drop("runs", 0, "batches", 0, "fields", 0, "data"),
     r"'runs'\[0\]\['batches'\]\[0\]\['fields'\]\[0\]\['data'\] is missing"),
    ("data_loader", ("batches",), "ch06", drop("one_field"), "the reply's 'one_field' is missing"),
    ("data_loader", ("shuffle",), "ch06", put([], "epochs"), "'epochs' holds 0 values, expected 13"),
    ("data_loader", ("shuffle",), "ch06", put("a batch", "epochs", 2), r"'epochs'\[2\] is not a list"),
    ("transform", ("normalize",), "ch06", put([], "runs"), "'runs' holds 0 values, expected 1 to 2"),
    ("transform", ("normalize",), "ch06", put("1;2", "runs", 0, "stacked"), r"'runs'\[0\]\['stacked'\]: "),
    ("parse_idx", ("bytes",), "ch06", put([], "results"), "'results' holds 0 values, expected"),
    ("parse_idx", ("errors",), "ch06", put("x", "results", 0, "returned"),
     r"'results'\[0\]\['returned'\]: a returned value in the reply is malformed"),
    ("mnist_dataset", (), "ch06", put({"shape": "28x28"}, "stored", "images"), r"'stored'\['images'\]\['shape'\] is not a list"),
    ("mnist_dataset", (), "ch06", put(1.5, "calls"), "'calls' is not a whole number"),
    ("mnist_dataset", (), "ch06", drop("item", "label"), r"'item'\['label'\] is missing"),
]


@pytest.mark.parametrize("name, args, chapter_id", sorted({(m[0], m[1], m[2]) for m in MALFORMED}))
def test_the_right_codes_real_reply_passes(name, args, chapter_id):
    verdict = judged(name, args, chapter_id, unchanged)
    assert verdict == "another request" or verdict.passed, verdict


@pytest.mark.parametrize("name, args, chapter_id, change, says", MALFORMED,
                         ids=[f"{m[0]}-{m[4][:40]}" for m in MALFORMED])
def test_a_malformed_reply_fails_the_probe_naming_the_field(name, args, chapter_id, change, says):
    with pytest.raises(ProbeFailure, match=says):
        judged(name, args, chapter_id, change)



# ── the trained models' replies, built by hand: a model to walk takes a trained notebook ──

def capstone_reply(steps, *replies):
    """What a capstone judge's generator makes of `replies`, sent one by one to its requests."""
    next(steps)
    for reply in replies:
        try:
            steps.send(reply)
        except StopIteration as done:
            return done.value
    return "another request"


class Named:
    name = "build_mlp"


BUILDS = {"found": True, "same": False, "shared": 0, "differ": [[0, [784, 16]]]}
WALK_FAILED = {"found": True, "error": {"kind": "error", "error_type": "ValueError", "message": "no", "line": ""}}


def test_a_well_formed_capstone_reply_reads_as_before():
    from autograder.grading.judge import capstone
    verdict = capstone_reply(capstone.fresh_builds("mlp", Named()), BUILDS)
    assert not verdict.passed and "different weights" in verdict.message
    assert capstone_reply(capstone.fresh_builds("mlp", Named()), {"found": False}) is None
    assert capstone_reply(capstone.held_out(np.random.default_rng(1), {"capstone": "mlp"}, (784,)), {}) is None
    said = capstone_reply(capstone.held_out(np.random.default_rng(1), {"capstone": "mlp"}, (784,)), WALK_FAILED,
                          {"found": True, "logits_shape": [500, 3]})
    assert said == "the model returned logits of shape (500, 3) for a batch of test digits"


@pytest.mark.parametrize("replies, says", [
    ([{**BUILDS, "differ": [[0, [784, "16"]]]}], r"'differ'\[0\]\[1\]\[1\] is not a whole number"),
    ([{**BUILDS, "shared": float("nan")}], "'shared' is not a whole number"),
    ([{**BUILDS, "differ": [[0]]}], r"'differ'\[0\] is not a list of 2 values"),
], ids=["shape of text", "NaN count", "short pair"])
def test_a_malformed_capstone_builds_reply_fails_the_probe_naming_the_field(replies, says):
    from autograder.grading.judge import capstone
    with pytest.raises(ProbeFailure, match=says):
        capstone_reply(capstone.fresh_builds("mlp", Named()), *replies)


@pytest.mark.parametrize("replies, says", [
    ([WALK_FAILED, {"found": True, "predicted": HUGE}], "'predicted': an array in the reply has 1000001 elements"),
    ([WALK_FAILED, {"found": True, "predicted": [1, 2]}], "'predicted': .*not a string"),
    ([WALK_FAILED, {"found": True, "logits_shape": [500, 2.5]}], r"'logits_shape'\[1\] is not a whole number"),
    ([{"found": True}], "'model' is missing"),
], ids=["oversized predictions", "list for an array", "NaN-like shape", "no model"])
def test_a_malformed_model_reply_fails_the_probe_naming_the_field(replies, says):
    from autograder.grading.judge import capstone
    with pytest.raises(ProbeFailure, match=says):
        capstone_reply(capstone.held_out(np.random.default_rng(1), {"capstone": "mlp"}, (784,)), *replies)


# ── chapter 4's layers and Sequential: the steps of a layer request ──

MALFORMED_CH04 = [
    ("linear", (), "ch04", put([], "steps"), "'steps' holds 0 values, expected 3"),
    ("linear", (), "ch04", put({"kind": "tensor"}, "steps", 0, "attributes", "weight", "value"),
     r"'steps'\[0\]\['attributes'\]\['weight'\]\['value'\]: an array in the reply is not a string"),
    ("linear", (), "ch04", drop("steps", 0, "attributes", "bias", "value"),
     r"'steps'\[0\]\['attributes'\]\['bias'\]: 'value' is missing"),
    ("linear", (), "ch04", put([], "steps", 1, "grads"), r"'steps'\[1\]\['grads'\] holds 0 values, expected 3"),
    ("linear", (), "ch04", drop("steps", 2, "output"), "a step of the reply has no 'output'"),
    ("linear", (), "ch04", drop("steps", 2, "grads"), "a step of the reply has no 'grads'"),
    ("mse_loss", (), "ch04", put(-1, "steps", 0, "stray"), r"'steps'\[0\]\['stray'\] is -1, outside"),
    ("mse_loss", (), "ch04", put(True, "steps", 1, "stray"), r"'steps'\[1\]\['stray'\] is not a whole number"),
    ("dropout", (), "ch04", put({"kind": "maybe"}, "steps", 1, "output"), r"'steps'\[1\]\['output'\]: .*malformed"),
    ("batchnorm_running", (), "ch04", put([], "steps", 0, "attributes"), r"'steps'\[0\]\['attributes'\] is not a JSON object"),
    ("batchnorm_running", (), "ch04", drop("steps", 0, "attributes", "running_var"), r"does not report \.running_var"),
    ("embedding", (), "ch04", put("ValueError", "steps", 3, "set"), r"'steps'\[3\]\['set'\]: .*malformed"),
    ("sequential", (), "ch04", put([], "runs"), "'runs' holds 0 values, expected 2"),
    ("sequential", (), "ch04", put([HUGE], "found"), r"'found'\[0\]: an array in the reply has 1000001 elements"),
    ("sequential", (), "ch04", drop("empty"), "the reply's 'empty' is missing"),
    ("sequential", (), "ch04", put({"kind": "tensor"}, "runs", 1, "grads", 0), r"'runs'\[1\]\['grads'\]\[0\]: "),
]


@pytest.mark.parametrize("name, args, chapter_id", sorted({(m[0], m[1], m[2]) for m in MALFORMED_CH04}))
def test_the_right_codes_real_layer_reply_passes(name, args, chapter_id):
    verdict = judged(name, args, chapter_id, unchanged)
    assert verdict == "another request" or verdict.passed, verdict


@pytest.mark.parametrize("name, args, chapter_id, change, says", MALFORMED_CH04,
                         ids=[f"{m[0]}-{m[4][:40]}" for m in MALFORMED_CH04])
def test_a_malformed_layer_reply_fails_the_probe_naming_the_field(name, args, chapter_id, change, says):
    with pytest.raises(ProbeFailure, match=says):
        judged(name, args, chapter_id, change)


# ── chapter 3's forward and backward of one op (and chapter 10's pool ties, read as backward) ──

MUL = OpSpec("Mul")
FLIP = OpSpec("Flip", ((0,),))
FORWARD_MUL = ("forward", (MUL, lambda a, b: a * b, [(2, 3), (2, 3)]), "ch03")
FORWARD_FLIP = ("forward", (FLIP, lambda a: np.flip(a, (0,)), [(4,)], "real", 0, True), "ch10")
BACKWARD_MUL = ("backward", (MUL, [(2, 3), (2, 3)]), "ch03")
KINK_ABS = ("kink", (OpSpec("Abs"), [(2, 3)]), "ch03")
POOL_TIES = ("max_pool_ties", (OpSpec("MaxPool", (2,)), [(1, 1, 4, 4)]), "ch10")
REAL_CH03 = [FORWARD_MUL, FORWARD_FLIP, BACKWARD_MUL, KINK_ABS, POOL_TIES]

MALFORMED_CH03 = [
    (*FORWARD_MUL, put([], "results"), "'results' holds 0 values, expected 1"),
    (*FORWARD_MUL, put({"kind": "array", "value": "1;2"}, "results", 0), r"'results'\[0\]: .*packed"),
    (*FORWARD_MUL, put([[None]], "after"), r"'after'\[0\] holds 1 values, expected 2"),
    (*FORWARD_MUL, put([[{"kind": "array"}, None]], "after"), r"'after'\[0\]\[0\]: "),
    (*FORWARD_FLIP, put([["yes"]], "shares"), r"'shares'\[0\]\[0\] is not true or false"),
    (*FORWARD_FLIP, drop("shares"), "the reply's 'shares' is missing"),
    (*BACKWARD_MUL, drop("forward"), "the reply's 'forward' is missing"),
    (*BACKWARD_MUL, drop("perturbed"), "the reply's 'perturbed' is missing"),
    (*BACKWARD_MUL, put([], "grads"), "'grads' holds 0 values, expected 2"),
    (*BACKWARD_MUL, put([[None, None]], "after"), "'after' holds 1 values, expected 2"),
    (*BACKWARD_MUL, put([None, None, None], "after", 1), r"'after'\[1\] holds 3 values, expected 4"),
    (*BACKWARD_MUL, put([[["scale", "1"]], []], "changed"), r"'changed'\[0\]\[0\] is not a list of 3 values"),
    (*BACKWARD_MUL, put([[["scale", "1", 2]], []], "changed"), r"'changed'\[0\]\[0\]\[2\] is not a string"),
    (*BACKWARD_MUL, put([[True] * 18, []], "grads_set"), r"'grads_set'\[0\] holds 18 values, expected 0 to 17"),
    (*BACKWARD_MUL, put([[1, 0], []], "grads_set"), r"'grads_set'\[0\]\[0\] is not true or false"),
    (*KINK_ABS, put([{"kind": "tensor", "value": HUGE}], "grads"), r"'grads'\[0\]: an array in the reply has 1000001"),
    (*KINK_ABS, drop("grads_set"), "the reply's 'grads_set' is missing"),
    (*POOL_TIES, put([], "grads"), "'grads' holds 0 values, expected 1"),
]


@pytest.mark.parametrize("name, args, chapter_id", REAL_CH03, ids=[f"{m[0]}-{m[2]}" for m in REAL_CH03])
def test_the_right_codes_real_op_reply_passes(name, args, chapter_id):
    verdict = judged(name, args, chapter_id, unchanged)
    assert verdict == "another request" or verdict.passed, verdict


@pytest.mark.parametrize("name, args, chapter_id, change, says", MALFORMED_CH03,
                         ids=[f"{m[0]}-{m[4][:40]}" for m in MALFORMED_CH03])
def test_a_malformed_op_reply_fails_the_probe_naming_the_field(name, args, chapter_id, change, says):
    with pytest.raises(ProbeFailure, match=says):
        judged(name, args, chapter_id, change)

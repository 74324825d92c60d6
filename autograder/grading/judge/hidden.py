"""What a failing hidden check may tell the student: what went wrong (the op, the rule, which argument, the
kind of mismatch), never the hidden inputs that show it (shapes, values, the worst element's place or value).

The judge words every check's failure as the visible check does, with shapes and numbers; a check that stands
in a test cell's `### BEGIN HIDDEN TESTS` region has its message told again here, with those left out, so the
feedback page, the autograded notebook and Gradescope's results all keep the hidden tests hidden.
"""
import re

SHAPES = re.compile(r"\((?:\s*-?\d+\s*,)+(?:\s*-?\d+)?\s*\)")                   # (2, 3, 2), (8,), (3,4)
SCALAR_SHAPE = re.compile(r"\b([a-z])\(\)")                                     # a(): an input of shape ()
INPUTS = re.compile(r"\s+on (?:the )?inputs?\b[^:\n]*")                        # "on inputs (2, 3), (2, 3)"
COUNT = re.compile(r"\b\d+ of \d+\b")                                           # "3 of 12 elements"
BRACKETS = re.compile(r"\[[^\[\]\n]*\]")                                        # out[1, 2], [0.5 1.2 ...]
VALUE = re.compile(r"(?<![\w.])[-+]?(?:\d+\.\d+(?:[eE][-+]?\d+)?|\.\d+|\d+[eE][-+]?\d+)(?![\w.])")  # 0.5321, 1e-05
EVIDENCE = ("worst", "input value", "at:", "while running")     # lines that only show the inputs


def without_inputs(line, numbers=True):
    """One line of a check's message with the hidden inputs that show its failure left out: shapes, bracketed
    indices and values, counts of wrong elements, and (unless `numbers` is False, for a hint's formula) every
    value written with a decimal point or an exponent. A plain integer says which layer or line, not an input."""
    line = INPUTS.sub(" on the hidden check's inputs", line)
    line = COUNT.sub("some", line)
    line = BRACKETS.sub("", SCALAR_SHAPE.sub(r"\1", SHAPES.sub("", line)))
    if numbers:
        line = VALUE.sub("…", line)
    return re.sub(r"[ \t]{2,}", " ", line).replace(" :", ":").replace(" ,", ",").rstrip()


def hidden_failure(name, line, message):
    """The message of check.`name` on `line` of a test cell, a hidden check: every line but those that only show
    evidence (the worst element, the input values, where it was raised), with shapes, brackets and values left
    out; a hint keeps its numbers, which are its rule's (b**0.5, 709 in float64)."""
    lines = message.splitlines() or [""]
    summary = without_inputs(lines[0].removeprefix("✗ "))
    rest = [without_inputs(text, numbers=not text.strip().startswith("Hint")) for text in lines[1:]
            if not text.strip().lower().startswith(EVIDENCE)]
    told = (f"check.{name} on line {line} of this cell, a hidden check, failed (its inputs and values are not "
            f"shown): {summary}")
    return "\n".join([told, *[f"  {text.strip()}" for text in rest if text.strip()]])

"""What counts as code in a hint: a hint states the rule and the cause, never the line to type.

Concretely, a hint holds code when it contains
* a backticked span that Python parses into a statement (an assignment, `+=`, `def`, `for`, `if`, `return`,
  `import`, `with`), or an expression that calls something with, or applies an operator to, a name a
  solution would use (an attribute, or a name of two letters or more: `p.grad + wd * p.data`,
  `loss_fn(y, pred)`); a span naming one thing (`.grad`, `step()`, `None`, `int64`) is not code, nor the
  expression a check evaluated on its own one-letter operands (`a * 2`, `a.matmul(m)`), which is evidence;
* outside backticks, an assignment to an attribute or an element (`p.data -= ...`, `self.m[i] = ...`), an
  augmented assignment (`u += g`), `return `, `lambda `, `def `, `import `, a NumPy call (`np.zeros(`), or a
  call of a dotted name whose arguments include a name (`loss_fn(y, prediction)`, `np.pad(image, p)`).
Mathematics written as mathematics (`u = momentum·u + g`, `√v̂ + eps`, `1 - beta^t`, `t = 1`) is not code:
a middle dot, a root sign or a caret with a name stays prose, and a plain name equal to a formula is how the
text itself writes a rule.
"""
import ast
import re

BACKTICKED = re.compile(r"`([^`\n]+)`")
STATEMENT_NODES = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.FunctionDef, ast.For, ast.While, ast.If,
                   ast.With, ast.Return, ast.Import, ast.ImportFrom, ast.Lambda)
OPERATOR_NODES = (ast.BinOp, ast.Compare, ast.BoolOp)
PROSE_PATTERNS = [
    re.compile(r"\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*|\[[^\]\n]*\])+\s*(?:[-+*/@]?=)(?!=)\s*[\w(\[-]"),  # p.data -= x
    re.compile(r"\b[A-Za-z_]\w*\s*[-+*/@]=\s*[\w(]"),                                           # u += g
    re.compile(r"\breturn\s+[\w.]+(?:\(|\.\w|\[|\s*[-+*/@]\s*\w)"),
    re.compile(r"\blambda\s+\w*\s*:"),
    re.compile(r"(?:^|\s)def\s+\w+\("),
    re.compile(r"(?:^|\s)(?:from\s+\w+\s+)?import\s+\w+"),
    re.compile(r"\bnp\.\w+\("),
]
CALL = re.compile(r"\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\((?:[^()\n]|\([^()\n]*\))+\)")


def parsed(text):
    """The Python parse of `text` (a block header gets a body), or None when it is not Python."""
    for attempt in (text, text + " pass"):
        try:
            return ast.parse(attempt)
        except (SyntaxError, ValueError):
            continue
    return None


def names_used(node):
    return any(isinstance(n, (ast.Name, ast.Attribute)) for n in ast.walk(node))


def solution_names_used(node):
    """An attribute, or a name longer than one letter: what a line of a solution operates on."""
    return any(isinstance(n, ast.Attribute) or (isinstance(n, ast.Name) and len(n.id) > 1) for n in ast.walk(node))


def span_is_code(span):
    """A backticked span is code when it parses into a statement, a call with arguments, or an operator on names."""
    tree = parsed(span.strip())
    if tree is None:
        return False
    for node in ast.walk(tree):
        if isinstance(node, STATEMENT_NODES):
            return True
        if isinstance(node, ast.Call) and any(solution_names_used(a) for a in [*node.args, *node.keywords]):
            return True
        if isinstance(node, OPERATOR_NODES) and solution_names_used(node):
            return True
    return False


def call_is_code(text):
    """A dotted call in prose is code when one of its arguments is (or uses) a name."""
    tree = parsed(text)
    if tree is None or not tree.body or not isinstance(tree.body[0], ast.Expr):
        return False
    call = tree.body[0].value
    return isinstance(call, ast.Call) and any(names_used(a) for a in [*call.args, *(k.value for k in call.keywords)])


def code_in(text):
    """The first piece of code in `text`, or None."""
    for span in BACKTICKED.findall(text):
        if span_is_code(span):
            return span
    prose = BACKTICKED.sub(" ", text)
    for pattern in PROSE_PATTERNS:
        found = pattern.search(prose)
        if found:
            return found.group(0)
    for found in CALL.finditer(prose):
        if call_is_code(found.group(0)):
            return found.group(0)
    return None


def hint_of(message):
    """The hint of a check's message: what follows its "Hint:" (empty when it has none)."""
    _, _, hint = message.partition("Hint:")
    return hint.strip()

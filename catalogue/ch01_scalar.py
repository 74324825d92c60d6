"""Chapter 1's catalog of typical mistakes, and of correct answers written another way.

Each entry is an answer a student might really write, given as edits to the solved exercise cell,
with the test cells it must lose (`loses`; empty for a correct alternative). The tests grade them
with the real `nbgrader autograde` and require exactly those cells to lose their points. The demo's
"partial" student makes the mistakes named in DEMO_PARTIAL.
"""
from autograder.build.submissions import Edit, Mistake, right, wrong



ADD_CLOSURE = "        self.grad += out.grad\n        other.grad += out.grad"
MUL_CLOSURE = "        self.grad += other.data * out.grad\n        other.grad += self.data * out.grad"
WRAP = "    other = other if isinstance(other, Value) else Value(other)\n"
VISITED = "        elif node not in visited:"
PUSH_PARENTS = "stack.extend((parent, False) for parent in node._prev if parent not in visited)"
TOPO = '''    order, visited = [], set()
    stack = [(root, False)]
    while stack:
        node, parents_done = stack.pop()
        if parents_done:
            order.append(node)
        elif node not in visited:
            visited.add(node)
            stack.append((node, True))
            stack.extend((parent, False) for parent in node._prev if parent not in visited)
    return order'''
ENGINE_TESTS = ["test_backward_order", "test_backward_reuse", "test_backward_twice", "test_backward_long_chain"]
CENTRAL = "grads.append((f(*plus) - f(*minus)) / (2 * h))"

RECURSIVE_TOPO = '''    order, visited = [], set()

    def visit(node):
        if node not in visited:
            visited.add(node)
            for parent in node._prev:
                visit(parent)
            order.append(node)

    visit(root)
    return order'''
RAISED_LIMIT = "    import sys\n\n    sys.setrecursionlimit(10000)\n"     # so that the 2,000-node chain runs

MISTAKES = [
    # + : the graph
    wrong("add_no_parents", "builds out without recording its parents", "add",
          'out = Value(self.data + other.data, (self, other), "+")', 'out = Value(self.data + other.data, _op="+")',
          ["test_add_graph"]),
    wrong("add_number_unwrapped", "does not wrap a plain number: a + 2 fails on 2.data", "add", WRAP, "",
          ["test_add_graph"]),
    wrong("add_wraps_only_int", "wraps the other operand only when it is an int: a + 0.5 fails on 0.5.data", "add",
          WRAP, "    if isinstance(other, int):\n        other = Value(other)\n", ["test_add_graph"]),
    wrong("radd_recurses", "__radd__ computes other + self, which calls __radd__ again", "add",
          "    return self + other", "    return other + self", ["test_add_graph"]),
    # + : the closure
    wrong("add_assigns", "= instead of +=: a + a, and inputs used elsewhere, lose gradient", "add", ADD_CLOSURE,
          "        self.grad = out.grad\n        other.grad = out.grad", ["test_add_backward"]),
    wrong("add_ignores_out_grad", "adds the local derivative 1 without the chain rule's out.grad", "add",
          ADD_CLOSURE, "        self.grad += 1.0\n        other.grad += 1.0", ["test_add_backward"]),
    # * : the graph
    wrong("mul_label_plus", "copied from __add__: labels the op '+'", "mul",
          'out = Value(self.data * other.data, (self, other), "*")', 'out = Value(self.data * other.data, (self, other), "+")',
          ["test_mul_graph"]),
    wrong("mul_number_unwrapped", "does not wrap a plain number: 3 * a fails", "mul", WRAP, "", ["test_mul_graph"]),
    wrong("mul_wraps_only_int", "wraps the other operand only when it is an int: a * 0.5 fails", "mul", WRAP,
          "    if isinstance(other, int):\n        other = Value(other)\n", ["test_mul_graph"]),
    # * : the closure
    wrong("mul_assigns", "= instead of +=: a * a gets a instead of 2a", "mul", MUL_CLOSURE,
          "        self.grad = other.data * out.grad\n        other.grad = self.data * out.grad", ["test_mul_backward"]),
    wrong("mul_own_data", "multiplies each input's gradient by its own data instead of the other's", "mul",
          MUL_CLOSURE, "        self.grad += self.data * out.grad\n        other.grad += other.data * out.grad",
          ["test_mul_backward"]),
    wrong("mul_ignores_out_grad", "the local derivatives without out.grad", "mul", MUL_CLOSURE,
          "        self.grad += other.data\n        other.grad += self.data", ["test_mul_backward"]),
    wrong("mul_divides_by_input", "the local derivative as out.data / self.data: the other input, except at 0", "mul",
          MUL_CLOSURE, "        self.grad += out.data / self.data * out.grad\n"
          "        other.grad += out.data / other.data * out.grad", ["test_mul_backward"]),
    # backward()
    wrong("backward_recursive_topo", "a recursive depth-first search: fine until 1,000 nodes deep", "backward", TOPO,
          RECURSIVE_TOPO, ["test_backward_long_chain"]),
    wrong("backward_recursive_raised_limit", "a recursive depth-first search, under a recursion limit raised to "
          "10,000 so that the 2,000-node chain runs", "backward", TOPO, RAISED_LIMIT + RECURSIVE_TOPO,
          ["test_backward_long_chain"]),
    Mistake("backward_no_visited", "no visited set: a node reached along two paths runs its _backward twice",
            (Edit("backward", VISITED, "        else:"),
             Edit("backward", PUSH_PARENTS, "stack.extend((parent, False) for parent in node._prev)")),
            ("test_backward_reuse",)),
    wrong("backward_preorder_topo", "appends each node when it is popped (pre-order), then reverses the list",
          "backward", TOPO, '''    order, visited, stack = [], set(), [root]
    while stack:
        node = stack.pop()
        if node in visited:
            continue
        visited.add(node)
        order.append(node)
        stack.extend(node._prev)
    return order[::-1]''', ["test_backward_reuse"]),
    wrong("backward_breadth_first", "breadth-first from the output: a node can run before all its users have",
          "backward", TOPO, '''    order, seen, queue = [], {root}, [root]
    while queue:
        node = queue.pop(0)
        order.append(node)
        for parent in node._prev:
            if parent not in seen:
                seen.add(parent)
                queue.append(parent)
    return order[::-1]''', ["test_backward_reuse"]),
    wrong("backward_not_reversed", "walks the order forwards, parents before the nodes they feed", "backward",
          "for node in reversed(order):", "for node in order:", ENGINE_TESTS),
    wrong("backward_no_seed", "forgets to seed the output with 1.0", "backward", "    self.grad = 1.0\n", "",
          ENGINE_TESTS),
    wrong("backward_no_reset", "does not reset the gradients: a second backward() adds to the first", "backward",
          "    for node in order:\n        node.grad = 0.0\n", "", ["test_backward_twice"]),
    wrong("backward_not_reversed_no_reset", "walks the order forwards and never resets the gradients: the second "
          "call's gradients are wrong for the order, not the reset, and the message must not blame the reset",
          "backward", "    for node in order:\n        node.grad = 0.0\n    self.grad = 1.0\n    for node in reversed(order):",
          "    self.grad = 1.0\n    for node in order:", ENGINE_TESTS),
    # numerical_gradient
    wrong("numeric_forward_difference", "the one-sided forward difference", "numerical_gradient", CENTRAL,
          "grads.append((f(*plus) - f(*xs)) / h)", ["test_numerical_gradient"]),
    wrong("numeric_divides_by_h", "divides by h instead of by 2h", "numerical_gradient", CENTRAL,
          "grads.append((f(*plus) - f(*minus)) / h)", ["test_numerical_gradient"]),
    wrong("numeric_shared_list", "plus and minus are the same list, so the nudges cancel", "numerical_gradient",
          "plus, minus = list(xs), list(xs)", "plus = minus = list(xs)", ["test_numerical_gradient"]),
    wrong("numeric_ignores_h", "always steps by 1e-5, the step section 1.5 recommends, whatever h the caller gives",
          "numerical_gradient", "    grads = []", "    h = 1e-5\n    grads = []", ["test_numerical_gradient"]),
    wrong("numeric_nudges_xs", "nudges the caller's list in place", "numerical_gradient",
          "plus, minus = list(xs), list(xs)", "plus, minus = xs, list(xs)", ["test_numerical_gradient"]),
]

ALTERNATIVES = [
    right("add_times_one", "1.0 * out.grad, and the number wrapped with an if", "add",
          WRAP + '    out = Value(self.data + other.data, (self, other), "+")\n\n    def _backward():\n' + ADD_CLOSURE,
          '    if not isinstance(other, Value):\n        other = Value(other)\n'
          '    out = Value(self.data + other.data, (self, other), "+")\n\n    def _backward():\n'
          "        self.grad += 1.0 * out.grad\n        other.grad += 1.0 * out.grad"),
    right("add_wraps_numbers", "wraps the other operand when it is an int or a float", "add", WRAP,
          "    if isinstance(other, (int, float)):\n        other = Value(other)\n"),
    right("radd_explicit", "__radd__ calls __add__ by name", "add", "    return self + other",
          "    return self.__add__(other)"),
    right("mul_out_grad_first", "out.grad written first", "mul", MUL_CLOSURE,
          "        self.grad += out.grad * other.data\n        other.grad += out.grad * self.data"),
    right("rmul_via_mul", "__rmul__ calls __mul__ by name", "mul", "    return self * other",
          "    return self.__mul__(other)"),
    right("backward_kahn", "Kahn's algorithm: count each node's users, release it when all are done", "backward",
          TOPO, '''    users, seen, stack = {}, {root}, [root]
    while stack:
        node = stack.pop()
        for parent in node._prev:
            users[parent] = users.get(parent, 0) + 1
            if parent not in seen:
                seen.add(parent)
                stack.append(parent)
    order, ready = [], [root]
    while ready:
        node = ready.pop()
        order.append(node)
        for parent in node._prev:
            users[parent] -= 1
            if users[parent] == 0:
                ready.append(parent)
    return order[::-1]'''),
    right("numeric_comprehension", "the nudged lists built by comprehension", "numerical_gradient",
          "        plus, minus = list(xs), list(xs)\n        plus[i] += h\n        minus[i] -= h\n",
          "        plus = [x + h if j == i else x for j, x in enumerate(xs)]\n"
          "        minus = [x - h if j == i else x for j, x in enumerate(xs)]\n"),
]

DEMO_PARTIAL = ["add_assigns", "backward_recursive_topo", "numeric_forward_difference"]

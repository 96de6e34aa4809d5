"""The CEL side of CRD conformance: `x-kubernetes-validations` rules compiled and evaluated with
cel-python, and the Kubernetes CEL libraries it lacks.

Kubernetes CEL library functions implemented on top of cel-python (see `KUBERNETES_FUNCTIONS`):
the quantity library — `quantity`, `isQuantity`, `sign`, `isInteger`, `asInteger`,
`asApproximateFloat`, `add`, `sub`, `isGreaterThan`, `isLessThan`, `compareTo`. A rule that uses
any other function is compiled with a `problem` that names it (`SUPPORTED_FUNCTIONS`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any, Final

import celpy
from celpy import celtypes
from celpy.celparser import CELParseError
from celpy.evaluation import CELEvalError, base_functions

# --------------------------------------------------------------------------------------------
# The Kubernetes CEL quantity library, on top of cel-python
# --------------------------------------------------------------------------------------------

_QUANTITY = re.compile(
    r"^(?P<number>[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+))"
    r"(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?$"
)
_SUFFIX_FACTORS: Final[dict[str, Decimal]] = {
    "": Decimal(1),
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "k": Decimal("1e3"),
    "M": Decimal("1e6"),
    "G": Decimal("1e9"),
    "T": Decimal("1e12"),
    "P": Decimal("1e15"),
    "E": Decimal("1e18"),
    **{suffix: Decimal(1024**power) for power, suffix in enumerate(("Ki", "Mi", "Gi"), 1)},
    "Ti": Decimal(1024**4),
    "Pi": Decimal(1024**5),
    "Ei": Decimal(1024**6),
}


def parse_quantity(text: str) -> Decimal:
    """A Kubernetes quantity string (any suffix, exponent form included) as an exact Decimal."""
    match = _QUANTITY.match(text)
    if match is None:
        raise ValueError(f"{text!r} is not a Kubernetes quantity")
    suffix = match.group("suffix") or ""
    number = Decimal(match.group("number"))
    if suffix[:1] in ("e", "E"):
        return number.scaleb(int(suffix[1:]))
    return number * _SUFFIX_FACTORS[suffix]


class Quantity:
    """The value of `quantity(...)` in Kubernetes CEL."""

    def __init__(self, value: Decimal) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Quantity) and self.value == other.value

    def __hash__(self) -> int:
        return hash(self.value)

    def __repr__(self) -> str:
        return f"Quantity({self.value})"


def _cel_function(
    function: Callable[..., celtypes.Value | Quantity],
) -> Callable[..., Any]:
    """Errors inside a library function become CEL evaluation errors, not Python crashes."""

    @functools.wraps(function)
    def wrapper(*args: Any) -> Any:
        try:
            return function(*args)
        except (ValueError, TypeError, InvalidOperation, AttributeError) as exc:
            return CELEvalError(f"{function.__name__}: {exc}", type(exc), exc.args)

    return wrapper


def _as_quantity(value: object) -> Quantity:
    if isinstance(value, Quantity):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return Quantity(Decimal(int(value)))
    raise TypeError(f"expected a quantity or an int, got {type(value).__name__}")


def _quantity(text: celtypes.StringType) -> Quantity:
    return Quantity(parse_quantity(str(text)))


def _is_quantity(text: celtypes.StringType) -> celtypes.BoolType:
    return celtypes.BoolType(_QUANTITY.match(str(text)) is not None)


def _sign(q: Quantity) -> celtypes.IntType:
    return celtypes.IntType((q.value > 0) - (q.value < 0))


def _is_integer(q: Quantity) -> celtypes.BoolType:
    return celtypes.BoolType(q.value == q.value.to_integral_value() and -(2**63) <= q.value < 2**63)


def _as_integer(q: Quantity) -> celtypes.IntType:
    if not _is_integer(q):
        raise ValueError(f"{q.value} is not an int64 integer")
    return celtypes.IntType(int(q.value))


def _as_approximate_float(q: Quantity) -> celtypes.DoubleType:
    return celtypes.DoubleType(float(q.value))


def _add(q: Quantity, other: object) -> Quantity:
    return Quantity(q.value + _as_quantity(other).value)


def _sub(q: Quantity, other: object) -> Quantity:
    return Quantity(q.value - _as_quantity(other).value)


def _is_greater_than(q: Quantity, other: Quantity) -> celtypes.BoolType:
    return celtypes.BoolType(q.value > _as_quantity(other).value)


def _is_less_than(q: Quantity, other: Quantity) -> celtypes.BoolType:
    return celtypes.BoolType(q.value < _as_quantity(other).value)


def _compare_to(q: Quantity, other: Quantity) -> celtypes.IntType:
    value = _as_quantity(other).value
    return celtypes.IntType((q.value > value) - (q.value < value))


KUBERNETES_FUNCTIONS: Final[dict[str, Callable[..., Any]]] = {
    "quantity": _cel_function(_quantity),
    "isQuantity": _cel_function(_is_quantity),
    "sign": _cel_function(_sign),
    "isInteger": _cel_function(_is_integer),
    "asInteger": _cel_function(_as_integer),
    "asApproximateFloat": _cel_function(_as_approximate_float),
    "add": _cel_function(_add),
    "sub": _cel_function(_sub),
    "isGreaterThan": _cel_function(_is_greater_than),
    "isLessThan": _cel_function(_is_less_than),
    "compareTo": _cel_function(_compare_to),
}
# Standard CEL: macros and functions cel-python evaluates itself.
_CEL_MACROS: Final = frozenset({"has", "all", "exists", "exists_one", "map", "filter"})
SUPPORTED_FUNCTIONS: Final = frozenset(
    set(base_functions) | _CEL_MACROS | set(KUBERNETES_FUNCTIONS)
)

# --------------------------------------------------------------------------------------------
# CEL rules: compiled once per CRD version, evaluated on each value
# --------------------------------------------------------------------------------------------

# Kubernetes escapes object property names that are CEL keywords or carry special characters.
_CEL_RESERVED: Final = frozenset(
    (
        *("true", "false", "null", "in", "as", "break", "const", "continue", "else", "for"),
        *("function", "if", "import", "let", "loop", "package", "namespace", "return", "var"),
        *("void", "while"),
    )
)
_CEL_IDENTIFIER = re.compile(r"^[a-zA-Z_.\-/][a-zA-Z0-9_.\-/]*$")


def escape_property(name: str) -> str | None:
    """The name a CEL rule uses for an object property; None if CEL cannot reach it."""
    if name in _CEL_RESERVED:
        return f"__{name}__"
    if not _CEL_IDENTIFIER.match(name):
        return None
    return (
        name.replace("__", "__underscores__")
        .replace(".", "__dot__")
        .replace("-", "__dash__")
        .replace("/", "__slash__")
    )


@functools.cache
def _cel_environment() -> celpy.Environment:
    return celpy.Environment()


def _functions_used(tree: Any) -> set[str]:
    names: set[str] = set()
    for node in tree.iter_subtrees():
        if node.data == "ident_arg":
            names.add(str(node.children[0]))
        elif node.data == "member_dot_arg":
            names.add(str(node.children[1]))
    return names


@dataclass(frozen=True)
class CelRule:
    """One `x-kubernetes-validations` entry of a CRD version, compiled."""

    group: str
    version: str
    kind: str
    path: str  # where the rule sits in the schema: `spec.resourceGroups[*]`
    rule: str
    message: str
    transition: bool  # refers to oldSelf: runs on update only
    functions: frozenset[str]
    problem: str | None  # why this rule cannot be evaluated, or None
    field_path: str = ""
    program: Any = field(default=None, compare=False, repr=False)
    message_program: Any = field(default=None, compare=False, repr=False)

    @property
    def label(self) -> str:
        return f"{self.kind} {self.group}/{self.version} at {self.path or '(root)'}: {self.rule}"


def compile_rule(
    entry: Mapping[str, Any], *, group: str, version: str, kind: str, path: str
) -> CelRule:
    rule = str(entry.get("rule", ""))
    message = str(entry.get("message") or f"failed rule: {rule}")
    env = _cel_environment()
    problem: str | None = None
    program = message_program = None
    functions: frozenset[str] = frozenset()
    try:
        ast = env.compile(rule)
        functions = frozenset(_functions_used(ast))
        program = env.program(ast, functions=KUBERNETES_FUNCTIONS)
    except CELParseError as exc:
        problem = f"does not compile: {str(exc).splitlines()[0]}"
    missing = sorted(functions - SUPPORTED_FUNCTIONS)
    if missing:
        problem = f"uses CEL functions this validator does not implement: {', '.join(missing)}"
    if entry.get("optionalOldSelf"):
        problem = "sets optionalOldSelf; cel-python has no optional types"
    if entry.get("messageExpression") and problem is None:
        try:
            message_program = env.program(
                env.compile(str(entry["messageExpression"])), functions=KUBERNETES_FUNCTIONS
            )
        except CELParseError as exc:
            problem = f"messageExpression does not compile: {str(exc).splitlines()[0]}"
    return CelRule(
        group=group,
        version=version,
        kind=kind,
        path=path,
        rule=rule,
        message=message,
        transition=re.search(r"\boldSelf\b", rule) is not None,
        functions=functions,
        problem=problem,
        field_path=str(entry.get("fieldPath") or ""),
        program=program,
        message_program=message_program,
    )


def evaluate_rule(rule: CelRule, self_value: Any, old_value: Any) -> tuple[bool, str]:
    """(passed, message) for one rule on one value."""
    activation = {"self": self_value}
    if rule.transition:
        activation["oldSelf"] = old_value
    try:
        result = rule.program.evaluate(activation)
    except CELEvalError as exc:
        return False, f"could not be evaluated: {str(exc.args[0])[:200]}"
    except (TypeError, ValueError, KeyError, AttributeError, ArithmeticError) as exc:
        return False, f"could not be evaluated: {type(exc).__name__}: {str(exc)[:200]}"
    if isinstance(result, CELEvalError):
        return False, f"could not be evaluated: {str(result.args[0])[:200]}"
    if not isinstance(result, (celtypes.BoolType, bool)):
        return False, f"returned {type(result).__name__}, not a bool"
    if bool(result):
        return True, ""
    message = rule.message
    if rule.message_program is not None:
        try:
            custom = rule.message_program.evaluate(activation)
            if isinstance(custom, str) and custom:  # cel-python may return a plain str
                message = str(custom)
        except CELEvalError:
            pass  # the API server falls back to `message` too
    return False, message

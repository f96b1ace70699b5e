"""Services hold their parts; they do not inherit them (docs/contributing.md, ``services.py``).

No class of ``loyalty_core`` has three or more of the project's own classes among its bases, direct
or inherited: a tower of mixins makes a reader follow the MRO to find where a method, or the event it
records, comes from. Nor does a class of ``loyalty_core`` leave a method to a subclass with
``NotImplementedError``: what a part needs from another it is given in its constructor.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from pathlib import Path

import loyalty_core
from loyalty_core.till_sql import Params

PACKAGE = "loyalty_core"
MOST_OWN_BASES = 2
"""An error class sits under its kind and ``DomainError`` (``CustomerNotFound(NotFound)``)."""


def own_bases(cls: type) -> list[str]:
    """The project's classes among the bases of ``cls``, direct or inherited, nearest first. A till
    statement's parameters (``till_sql.Params``) are a flat record of fields with no methods: a
    variant that adds fields to another (a pending purchase's write) hides nothing in its MRO."""
    if Params in cls.__mro__:
        return []
    return [base.__qualname__ for base in cls.__mro__[1:] if base.__module__.split(".")[0] == PACKAGE]


def core_classes() -> list[type]:
    found: dict[str, type] = {}
    for info in pkgutil.walk_packages(loyalty_core.__path__, f"{PACKAGE}."):
        module = importlib.import_module(info.name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module.__name__:
                found[f"{cls.__module__}.{cls.__qualname__}"] = cls
    return list(found.values())


def unimplemented_hooks(source: str) -> list[str]:
    """The classes of a module whose bodies name ``NotImplementedError``."""
    return [
        node.name
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.ClassDef)
        and any(isinstance(n, ast.Name) and n.id == "NotImplementedError" for n in ast.walk(node))
    ]


def test_no_core_class_is_built_from_a_tower_of_its_own_classes() -> None:
    classes = core_classes()
    towers = {
        f"{cls.__module__}.{cls.__qualname__}": own_bases(cls)
        for cls in classes
        if len(own_bases(cls)) > MOST_OWN_BASES
    }
    assert towers == {}
    # the walk reaches the services it guards
    assert {"CustomerService", "WalletService", "MergeService"} <= {cls.__name__ for cls in classes}


def test_the_count_sees_bases_inherited_through_one_base() -> None:
    """A tower built one base at a time counts as much as one class with every base listed."""
    namespace = {"__module__": f"{PACKAGE}.example"}
    bottom = type("Bottom", (), dict(namespace))
    middle = type("Middle", (bottom,), dict(namespace))
    top = type("Top", (middle,), dict(namespace))
    service = type("Service", (top,), dict(namespace))
    assert own_bases(service) == ["Top", "Middle", "Bottom"]
    assert own_bases(type("Foreign", (Exception,), dict(namespace))) == []


def test_no_core_class_leaves_a_method_to_a_subclass() -> None:
    root = Path(loyalty_core.__file__).parent
    hooks = {
        str(path.relative_to(root)): names
        for path in sorted(root.rglob("*.py"))
        if (names := unimplemented_hooks(path.read_text()))
    }
    assert hooks == {}


def test_the_hook_scan_sees_a_hook() -> None:
    source = "class Writes:\n    async def get(self) -> None:\n        raise NotImplementedError\n"
    assert unimplemented_hooks(source) == ["Writes"]
    assert unimplemented_hooks("def helper() -> None:\n    raise NotImplementedError\n") == []

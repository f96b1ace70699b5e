"""The source of ``loyalty_client/operations.py``: one ``Operation`` per documented operation and the
methods of ``LoyaltyClient`` (blocking) and ``AsyncLoyaltyClient`` calling them."""

from __future__ import annotations

import re

from loyalty_client_gen.generate import HEADER, Operation, Param


def constant(op: Operation) -> str:
    return op.name.upper()


def iterator_name(op: Operation) -> str:
    return "iter_" + op.name.removeprefix("list_")


def signature(op: Operation, *, paging: bool) -> list[str]:
    params = ["self"]
    params.extend(f"{p.name}: {p.kind}" for p in op.path_params)
    if op.body is not None:
        params.append(f"body: {op.body} | None = None" if op.body_optional else f"body: {op.body}")
    query = [q for q in op.query if not (paging and q.name == "page")]
    if query:
        params.append("*")
        params.extend(query_param(q) for q in sorted(query, key=lambda q: not q.required))
    return params


def query_param(q: Param) -> str:
    if q.required:
        return f"{q.name}: {q.kind}"
    return f"{q.name}: {q.kind} = None" if q.kind.endswith("| None") else f"{q.name}: {q.kind} | None = None"


def call_arguments(op: Operation, *, paging: bool) -> str:
    path = "{" + ", ".join(f'"{p.name}": {p.name}' for p in op.path_params) + "}"
    query = "{" + ", ".join(f'"{q.name}": {q.name}' for q in op.query if not (paging and q.name == "page")) + "}"
    if paging:
        return f"{constant(op)}, {path}, {query}"
    if op.body is None:
        body = "None"
    elif op.body_optional:
        body = f"body if body is not None else {op.body}()"
    else:
        body = "body"
    return f"{constant(op)}, {path}, {query}, {body}"


def result_type(op: Operation) -> str:
    return f"bytes | {op.result}" if op.binary else op.result


def define(head: str, params: list[str], returns: str) -> list[str]:
    one_line = f"    {head}({', '.join(params)}) -> {returns}:"
    if len(one_line) <= 120:
        return [one_line]
    return [f"    {head}(", *(f"        {p}," for p in params), f"    ) -> {returns}:"]


def method(op: Operation, *, is_async: bool) -> list[str]:
    head = f"async def {op.name}" if is_async else f"def {op.name}"
    returns = result_type(op)
    lines = define(head, signature(op, paging=False), returns)
    lines.append(f'        """{op.method} {op.path} ({op.op_id})."""')
    awaited = "await " if is_async else ""
    call = f"{awaited}self._call({call_arguments(op, paging=False)})"
    lines.append(f"        {call}" if returns == "None" else f'        return cast("{returns}", {call})')
    if op.item is not None:
        kind = "AsyncIterator" if is_async else "Iterator"
        lines.append("")
        lines.extend(define(f"def {iterator_name(op)}", signature(op, paging=True), f"{kind}[{op.item}]"))
        lines.append(f'        """Every item of every page of ``{op.name}``, fetched page by page."""')
        lines.append(f'        return cast("{kind}[{op.item}]", self._pages({call_arguments(op, paging=True)}))')
    return lines


def model_names(kinds: str) -> list[str]:
    return sorted(set(re.findall(r"\b[A-Z]\w*", kinds)) - {"Literal", "None", "Any"})


def import_lines(module: str, names: list[str]) -> list[str]:
    return [f"from loyalty_client.{module} import (", *(f"    {n}," for n in names), ")"]


def operations_source(ops: list[Operation]) -> str:
    """``operations.py``: the operations as data, for the client and its tests."""
    results = " ".join(op.result for op in ops)
    out = [HEADER, "from __future__ import annotations\n"]
    if re.search(r"\bAny\b", results):
        out.append("from typing import Any\n")
    out.extend(import_lines("models", model_names(results)))
    out.append("from loyalty_client.operation import Operation\n")
    for op in ops:
        out.append(
            f"{constant(op)} = Operation("
            f'"{op.op_id}", "{op.method}", "{op.path}", auth={op.auth}, idempotent={op.idempotent}, '
            f"envelope={op.envelope}, binary={op.binary}, result={op.result})"
        )
    out.append("OPERATIONS: tuple[Operation, ...] = (")
    out.extend(f"    {constant(op)}," for op in ops)
    out.append(")")
    return "\n".join(out) + "\n"


def methods_source(ops: list[Operation], *, is_async: bool) -> str:
    """``blocking.py`` or ``awaitable.py``: one method per operation."""
    mentioned = " ".join(f"{op.result} {op.body} {op.item} {' '.join(q.kind for q in op.query)}" for op in ops)
    name = "AsyncOperations" if is_async else "Operations"
    kind = "AsyncIterator" if is_async else "Iterator"
    prefix = "async " if is_async else ""
    out = [HEADER, "from __future__ import annotations\n"]
    out.append(f"from collections.abc import {kind}")
    out.append("from typing import Any, Literal, cast\n")
    out.extend(import_lines("models", model_names(mentioned)))
    out.append("from loyalty_client.operation import Operation, PathValues, QueryValues, RequestBody")
    out.extend(import_lines("operations", [constant(op) for op in ops]))
    out.append(f"\n\nclass {name}:")
    blocking = "the awaitable" if is_async else "the blocking"
    out.append(f'    """One method per operation of the public API ({blocking} client\'s)."""\n')
    arguments = "self, op: Operation, path: PathValues, query: QueryValues, body: RequestBody"
    out.append(f"    {prefix}def _call({arguments}) -> Any:")
    out.append("        raise NotImplementedError\n")
    out.append(f"    def _pages(self, op: Operation, path: PathValues, query: QueryValues) -> {kind}[Any]:")
    out.append("        raise NotImplementedError")
    for op in ops:
        out.append("")
        out.extend(method(op, is_async=is_async))
    return "\n".join(out) + "\n"

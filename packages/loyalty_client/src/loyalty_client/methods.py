"""Turns the generated request functions of ``loyalty_client.operations`` into the methods of the
two clients, so each operation's signature, docstring and request live in one place and the
blocking and the awaitable client differ only by how they send.

``adjust_wallet = blocking(operations.customers.adjust_wallet)`` in a class body is a method with
the function's parameters after ``self`` that returns what the function's ``Call`` promises
(``awaitable``: a coroutine of it); ``blocking_pages``/``awaitable_pages`` make the ``iter_``
method of a list operation, which yields the items of every page from ``page`` (1 unless given) on.
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar, cast

from loyalty_client.models import Page
from loyalty_client.operation import Call, Operation, PathValues, QueryValues, RequestBody

P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])


class Sends(Protocol):
    """The blocking client as its generated methods see it."""

    def _call(self, op: Operation, path: PathValues, query: QueryValues, body: RequestBody) -> Any: ...

    def _pages(self, op: Operation, path: PathValues, query: QueryValues) -> Iterator[Any]: ...


class AwaitsSending(Protocol):
    """The awaitable client as its generated methods see it."""

    async def _call(self, op: Operation, path: PathValues, query: QueryValues, body: RequestBody) -> Any: ...

    def _pages(self, op: Operation, path: PathValues, query: QueryValues) -> AsyncIterator[Any]: ...


def blocking(build: Callable[P, Call[R]]) -> Callable[Concatenate[Sends, P], R]:
    def method(self: Sends, /, *args: P.args, **kwargs: P.kwargs) -> R:
        call = build(*args, **kwargs)
        return cast("R", self._call(call.op, call.path, call.query, call.body))

    return presented(method, build)


def awaitable(build: Callable[P, Call[R]]) -> Callable[Concatenate[AwaitsSending, P], Coroutine[Any, Any, R]]:
    async def method(self: AwaitsSending, /, *args: P.args, **kwargs: P.kwargs) -> R:
        call = build(*args, **kwargs)
        return cast("R", await self._call(call.op, call.path, call.query, call.body))

    return presented(method, build)


def blocking_pages(build: Callable[P, Call[Page[T]]]) -> Callable[Concatenate[Sends, P], Iterator[T]]:
    def method(self: Sends, /, *args: P.args, **kwargs: P.kwargs) -> Iterator[T]:
        call = build(*args, **kwargs)
        return cast("Iterator[T]", self._pages(call.op, call.path, call.query))

    return presented(method, build, pages=True)


def awaitable_pages(build: Callable[P, Call[Page[T]]]) -> Callable[Concatenate[AwaitsSending, P], AsyncIterator[T]]:
    def method(self: AwaitsSending, /, *args: P.args, **kwargs: P.kwargs) -> AsyncIterator[T]:
        call = build(*args, **kwargs)
        return cast("AsyncIterator[T]", self._pages(call.op, call.path, call.query))

    return presented(method, build, pages=True)


def presented(method: F, build: Callable[..., Any], *, pages: bool = False) -> F:
    """The method as ``help()`` and editors show it: the function's name, docstring and parameters
    after ``self``, answering what its ``Call`` holds (an ``iter_`` method: its own name and text)."""
    functools.update_wrapper(method, build)
    signature = inspect.signature(build)
    answer = re.fullmatch(r"Call\[(.*)\]", str(signature.return_annotation))
    shown: Any = method
    if pages:
        shown.__name__ = shown.__qualname__ = "iter_" + build.__name__.removeprefix("list_")
        shown.__doc__ = f"Every item of every page of ``{build.__name__}``, from ``page`` (1 unless given) on."
        answer = None
    self_parameter = inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)
    shown.__signature__ = signature.replace(
        parameters=[self_parameter, *signature.parameters.values()],
        return_annotation=answer.group(1) if answer else inspect.Signature.empty,
    )
    return method

"""A model's fields as flat named parameters, for the front ends whose idiom is a list of arguments (/v1 query
strings, MCP tool arguments, CLI options). The parameters are derived from the model, so a field added to it
reaches each of them; what a caller gives is gathered back into the model's shape, and the model, built from
it, alone holds the defaults' meaning, the bounds and the messages (the parameters are unbounded, so a broken
bound is the service's ``InvalidInput``, named as the front end names it).

A nested model's fields are parameters of their own names (``View.as_of`` is ``as_of``): no two concepts a
front end flattens share a field name (``tests/test_front_end_parity.py``)."""

from __future__ import annotations

import functools
import inspect
import operator
import types
import typing
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from graphmem.model.fields import Meaning, within

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class Flat:
    """One parameter: its name, the field it fills (a dotted path in the model's data), its type without
    bounds, its default, what it means (the field's description and range), and the field's metadata (its
    ``Meaning``, where it has one)."""

    name: str
    field: str
    annotation: Any
    default: Any
    description: str
    metadata: tuple[Any, ...] = ()

    @property
    def help(self) -> str:
        """The description, with what a plain value means where that is not its type's (epoch milliseconds),
        for the front ends that take the plain value."""
        told = [m.name for m in self.metadata if isinstance(m, Meaning) and m.told]
        return "; ".join(filter(None, [self.description, *told]))


def _loose(annotation: Any) -> tuple[Any, tuple[Any, ...]]:
    """The type without its ``Annotated`` bounds (inside a union too), and the metadata they carried."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        inner, *metadata = typing.get_args(annotation)
        loose, more = _loose(inner)
        return loose, (*metadata, *more)
    if origin in (typing.Union, types.UnionType):
        parts = [_loose(member) for member in typing.get_args(annotation)]
        return functools.reduce(operator.or_, [loose for loose, _ in parts]), tuple(m for _, ms in parts for m in ms)
    return annotation, ()


def _nested(annotation: Any) -> type[BaseModel] | None:
    return annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None


def flat_fields(model: type[BaseModel], prefix: str = "") -> list[Flat]:
    """Every leaf field of ``model``, nested models' fields in place of the nested model."""
    found: list[Flat] = []
    for name, info in model.model_fields.items():
        nested = _nested(info.annotation)
        if nested is not None:
            found.extend(flat_fields(nested, f"{prefix}{name}."))
            continue
        default = None if info.default is PydanticUndefined and info.default_factory is None \
            else info.get_default(call_default_factory=True)
        ranges = [f"from {m.low} to {m.high}" for m in info.metadata if isinstance(m, within)]
        description = "; ".join(filter(None, [info.description, *ranges]))
        annotation, inner = _loose(info.annotation)
        if default is None:
            annotation = annotation | None
        found.append(Flat(name, f"{prefix}{name}", annotation, default, description, (*info.metadata, *inner)))
    return found


def flat_names(model: type[BaseModel], at: str = "") -> dict[str, str]:
    """Where each flat parameter's value goes in a request (``at``: the model's field in it, if any), by the
    parameter's name: how a front end names the fields of an invalid input it flattened."""
    return {f"{at}.{flat.field}" if at else flat.field: flat.name for flat in flat_fields(model)}


def nest(values: dict[str, Any]) -> dict[str, Any]:
    """Dotted paths to nested dicts: ``{"view.as_of": 1}`` → ``{"view": {"as_of": 1}}``."""
    data: dict[str, Any] = {}
    for path, value in values.items():
        *parents, leaf = path.split(".")
        into = data
        for parent in parents:
            into = into.setdefault(parent, {})
        into[leaf] = value
    return data


def flattened(parameter: str, model: type[BaseModel], default: Callable[[Flat], Any],
              skip: Iterable[str] = ()) -> Callable[[F], F]:
    """Replace the decorated function's ``parameter`` by one keyword parameter per field of ``model`` (but
    ``skip``), each with the default ``default`` makes of it (a front end's ``Query``, ``Field`` or
    ``Option``); the function receives, as ``parameter``, the values given and not None, in the model's
    shape. The front end's framework reads the new signature (``__signature__``, resolved annotations)."""
    left_out = set(skip)
    fields = [flat for flat in flat_fields(model) if flat.name not in left_out]

    def decorate(function: F) -> F:
        hints = typing.get_type_hints(function, include_extras=True)
        signature = inspect.signature(function)
        kept = [p.replace(annotation=hints.get(p.name, p.annotation), kind=inspect.Parameter.KEYWORD_ONLY)
                for p in signature.parameters.values() if p.name != parameter]
        added = [inspect.Parameter(flat.name, inspect.Parameter.KEYWORD_ONLY, default=default(flat),
                                   annotation=flat.annotation) for flat in fields]

        @functools.wraps(function)
        def gathered(*args: Any, **kwargs: Any) -> Any:
            values = {flat.field: kwargs.pop(flat.name, None) for flat in fields}
            kwargs[parameter] = nest({path: value for path, value in values.items() if value is not None})
            return function(*args, **kwargs)

        parameters = kept + added
        gathered.__signature__ = signature.replace(  # type: ignore[attr-defined]
            parameters=parameters, return_annotation=hints.get("return", signature.return_annotation))
        gathered.__annotations__ = {p.name: p.annotation for p in parameters} | (
            {"return": hints["return"]} if "return" in hints else {})
        return typing.cast(F, gathered)

    return decorate

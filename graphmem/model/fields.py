"""The building blocks of the input models: patterns, bounds, field types, checks, and ``parse`` /
``checked``, the two ways a model meets the service's limits (``graphmem/model/__init__.py`` says why)."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Annotated, Any, Literal, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    ValidationError,
    ValidationInfo,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, ErrorDetails, PydanticCustomError, core_schema

from graphmem.config import Limits
from graphmem.errors import InvalidInput

NAMESPACE_PATTERN = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")  # ':' for seed names such as project:mnemolog
REQUEST_ID_PATTERN = re.compile(r"^[A-Za-z0-9._-]{8,100}$")
ID_PATTERN = re.compile(r"^[A-Za-z0-9._:-]{1,100}$")
PATH_PATTERN = re.compile(r"^[A-Za-z0-9._-]+(?:/[A-Za-z0-9._-]+)*$")
PATH_CHARS = 200
METADATA_KEY_CHARS = 128
INT64 = (-(2**63), 2**63 - 1)
MAX_QUERY_CHARS = 1000
MAX_OFFSET = 10_000  # offset paging stops here; deeper pages take the cursor
MAX_CURSOR_CHARS = 2048
MAX_NAMESPACES = 100
# A front end's words for its namespace argument (/v1 ``scope``, GraphQL and MCP ``namespace``): a read, or a
# call addressed by id, names one or covers every namespace the credential may read; a new memory, a handoff or
# an agent's statement goes to the one named, else to the credential's only namespace, else the default one.
READ_NAMESPACE = f"the namespace to read (default: every namespace the credential may read, at most {MAX_NAMESPACES})"
OWN_NAMESPACE = "the namespace (default: the credential's only namespace, else the default namespace)"
M = TypeVar("M", bound=BaseModel)

# Errors of values graphmem cannot store faithfully, or of a path that would leave its tree: the /v1 API answers
# them with 400 invalid_input even in a body (graphmem/http/errors.py), where other refusals of the route's
# schema keep FastAPI's 422. Two are pydantic's own types (a lone surrogate in a string; NaN or an infinity).
UNENCODABLE_TEXT = "string_unicode"
NOT_FINITE = "finite_number"
INVALID_PATH = "invalid_path"
REFUSED_VALUES = frozenset({UNENCODABLE_TEXT, NOT_FINITE, INVALID_PATH})
UNENCODABLE = "must be valid Unicode text (a lone surrogate such as \\ud800 cannot be stored)"


# ---- checks shared by models and plain arguments -------------------------------------------------------


@dataclass(frozen=True)
class within:
    """A range check whose message names the whole range (pydantic's names only the bound it broke), for
    the bounded counts of the API: limits, depths, caps, budgets. The range also shows in the JSON schema
    (``minimum``/``maximum``), so OpenAPI and the MCP tools' input schemas state it."""

    low: int
    high: int

    def check(self, value: int) -> int:
        if not self.low <= value <= self.high:
            raise ValueError(f"must be from {self.low} to {self.high}")
        return value

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.no_info_after_validator_function(self.check, handler(source))

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        found = handler(schema)
        found.update(minimum=self.low, maximum=self.high)
        return found


def _namespace(value: object) -> str:
    if not isinstance(value, str) or not NAMESPACE_PATTERN.fullmatch(value):
        raise ValueError("must be 1-64 characters of A-Z a-z 0-9 . _ : -")
    if value.startswith("_"):
        raise ValueError("names starting with '_' are reserved for the system")
    return value


def check_namespace(namespace: object) -> str:
    """A caller-nameable namespace: 1-64 of ``[A-Za-z0-9._-]``, and not one starting with ``_``.

    The ``_`` prefix is reserved for graphmem's own records (``_system`` today), so no caller can ever
    name a system namespace, now or after later additions.
    """
    try:
        return _namespace(namespace)
    except ValueError as exc:
        raise InvalidInput(f"namespace {exc}", field="namespace") from None


def check_segments(value: str, max_chars: int) -> str:
    """A path of folders (a memory's path, a handoff's project): 1-``max_chars`` characters, segments of
    ``[A-Za-z0-9._-]`` joined by '/', none empty, none '.' or '..', no '/' at either end. A path names a place
    in one tree: nothing in it may climb out or alias another place."""
    if (not 1 <= len(value) <= max_chars or not PATH_PATTERN.fullmatch(value)
            or any(segment in (".", "..") for segment in value.split("/"))):
        raise PydanticCustomError(INVALID_PATH, "must be 1-{max_chars} characters: segments of A-Z a-z 0-9 . _ - "
                                  "joined by '/', none empty, '.' or '..', no '/' at either end",
                                  {"max_chars": max_chars})
    return value


def _path(value: str) -> str:
    return check_segments(value, PATH_CHARS)


def _path_filter(value: str) -> str:
    """An exact path, a prefix with one trailing '%' ("a/b%": a/b and below), or '%' alone (everything)."""
    if value == "%":
        return value
    _path(value.removesuffix("%"))
    return value


def check_id(value: object) -> str:
    """Ids are app-generated (UUID4); this only bounds what a caller may send."""
    if not isinstance(value, str) or not ID_PATTERN.fullmatch(value):
        raise InvalidInput("id must be 1-100 characters of A-Z a-z 0-9 . _ : -", field="id")
    return value


def _metadata_value(key: str, value: object) -> None:
    if isinstance(value, bool | str):
        return
    if isinstance(value, int):
        if not INT64[0] <= value <= INT64[1]:
            raise ValueError(f"metadata[{key!r}] does not fit a 64-bit integer")
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise PydanticCustomError(NOT_FINITE, "metadata values must be finite numbers (not NaN or infinite)")
        return
    kind = "nested map" if isinstance(value, dict) else "list" if isinstance(value, list) else "value"
    raise ValueError(f"metadata[{key!r}] is a {kind}: values must be strings, integers, floats or booleans")


def _limits(info: ValidationInfo) -> Limits:
    limits = (info.context or {}).get("limits")
    return limits if isinstance(limits, Limits) else HARD_LIMITS


HARD_LIMITS = Limits.model_construct()  # the largest bounds the data model allows (Limits' defaults)


def limited(attribute: str, kind: Literal["chars", "count"]) -> AfterValidator:
    """A bound read from ``Limits.<attribute>`` at validation time (the operator may lower it)."""

    def check(value: Any, info: ValidationInfo) -> Any:
        limit = getattr(_limits(info), attribute)
        if value is None:
            return value
        if kind == "chars" and len(value) > limit:
            raise ValueError(f"is {len(value)} characters; at most {limit} are allowed")
        if kind == "count" and not 1 <= (len(value) if isinstance(value, list) else value) <= limit:
            raise ValueError(f"must be from 1 to {limit}")
        return value

    return AfterValidator(check)


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be blank")
    return value


def _encodable(value: str) -> None:
    """Text must be storable: UTF-8 cannot encode a lone surrogate (``\\ud800``, which JSON can carry).
    (String fields refuse one themselves, as pydantic's ``string_unicode``; metadata is checked here.)"""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise PydanticCustomError(UNENCODABLE_TEXT, UNENCODABLE) from None



def _metadata(value: object, info: ValidationInfo) -> object:
    """A flat map of string keys to scalars, at most ``metadata_bytes`` as JSON (stored as a JSON string)."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ValueError("must be a map of string keys to scalar values")
    for key, item in value.items():
        if not isinstance(key, str) or not 1 <= len(key) <= METADATA_KEY_CHARS:
            raise ValueError(f"keys must be strings of 1-{METADATA_KEY_CHARS} characters")
        _encodable(key)
        _metadata_value(key, item)
        if isinstance(item, str):
            _encodable(item)
    size = len(json.dumps(value, sort_keys=True, ensure_ascii=False).encode())
    limit = _limits(info).metadata_bytes
    if size > limit:
        raise ValueError(f"is {size} bytes as JSON; at most {limit} are allowed")
    return value


# ---- field types --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Meaning:
    """What a value means beyond its Python type, kept in a field's metadata for the front ends whose idiom
    has a type of its own for it (GraphQL's ``ID`` and ``DateTime``, its folder match). ``told``: the ones
    that take the plain value say what it is in their help."""

    name: str
    told: bool = False


IDENTIFIER = Meaning("identifier")
EPOCH_MS = Meaning("epoch milliseconds UTC", told=True)
FOLDER_FILTER = Meaning("folder filter")

Namespace = Annotated[str, BeforeValidator(_namespace)]
NamespaceOrAll = Annotated[str, BeforeValidator(lambda value: value if value == "*" else _namespace(value))]
Namespaces = Annotated[list[Namespace] | None, Field(min_length=1, max_length=MAX_NAMESPACES)]
Id = Annotated[str, Field(strict=True, pattern=ID_PATTERN.pattern), IDENTIFIER]
RequestId = Annotated[str | None, Field(strict=True, pattern=REQUEST_ID_PATTERN.pattern,
                                        description="8-100 of A-Z a-z 0-9 . _ -; makes the call retry-safe")]
Content = Annotated[str, Field(strict=True, max_length=HARD_LIMITS.content_chars),
                    AfterValidator(_not_blank), limited("content_chars", "chars")]
Title = Annotated[str | None, Field(strict=True, max_length=HARD_LIMITS.title_chars),
                  limited("title_chars", "chars")]
Source = Annotated[str | None, Field(strict=True, max_length=HARD_LIMITS.source_chars),
                   limited("source_chars", "chars")]
Metadata = Annotated[dict[str, str | int | float | bool] | None, BeforeValidator(_metadata)]
QueryText = Annotated[str, Field(strict=True, max_length=MAX_QUERY_CHARS), AfterValidator(_not_blank)]
Path = Annotated[str, Field(strict=True, description="a folder: segments of A-Z a-z 0-9 . _ - joined by '/'"),
                 AfterValidator(_path)]
PathFilter = Annotated[str, Field(strict=True, max_length=PATH_CHARS + 1,
                                  description="an exact path, 'a/b%' for a/b and everything below it, or '%'"),
                       AfterValidator(_path_filter), FOLDER_FILTER]
Phrase = Annotated[str, Field(strict=True, min_length=1, max_length=500)]  # a name, title or part of one
Flag = Annotated[bool, Field(strict=True)]
Fraction = Annotated[float, Field(strict=True, ge=0, le=1)]
Cursor = Annotated[str | None, Field(strict=True, min_length=1, max_length=MAX_CURSOR_CHARS,
                                     description="next_cursor of the previous page, unchanged")]
Millis = Annotated[int | None, Field(strict=True, ge=0, le=INT64[1], description="epoch milliseconds UTC"),
                   EPOCH_MS]


class Input(BaseModel):
    """Base of every input model: unknown fields are errors, values are immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def invalid_input(exc: ValidationError) -> InvalidInput:
    """Pydantic's report as one ``InvalidInput`` listing every problem (no input values echoed)."""
    errors = exc.errors(include_url=False, include_input=False)
    return InvalidInput.listing([(tuple(str(part) for part in e["loc"]), message(e)) for e in errors])


def message(error: ErrorDetails) -> str:
    """One error's message for a person, never its input (a lone surrogate is said as such)."""
    if error["type"] == UNENCODABLE_TEXT:
        return UNENCODABLE
    return str(error["msg"]).removeprefix("Value error, ")


def parse(model: type[M], data: object, limits: Limits = HARD_LIMITS) -> M:
    """Build ``model`` from plain data (a dict from the CLI or a JSONL line); any problem is one
    ``InvalidInput`` naming every field at fault."""
    try:
        return model.model_validate(data, context={"limits": limits})
    except ValidationError as exc:
        raise invalid_input(exc) from None


def checked(value: M, limits: Limits) -> M:
    """``value`` validated again under ``limits`` (the service's operator-configured bounds)."""
    if limits == HARD_LIMITS:
        return value
    return parse(type(value), value.model_dump(), limits)

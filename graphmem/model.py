"""Domain types: what callers send (validated here, at the edge) and what the service returns.

Input models are validated with the bounds of ``config.Limits`` (passed as validation context), by
Neo4j's value rules: a value the bundled engine would accept but Neo4j would reject (a mixed list, a
nested map, an integer beyond 64 bits, NaN) is refused here, so tests cannot pass on one server and fail
on the other.
"""

from __future__ import annotations

import json
import math
import re
from enum import StrEnum
from typing import Annotated, Any, Generic, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from graphmem.config import Limits
from graphmem.errors import InvalidInput

NAMESPACE_PATTERN = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
REQUEST_ID_PATTERN = re.compile(r"^[A-Za-z0-9._-]{8,100}$")
ID_PATTERN = re.compile(r"^[A-Za-z0-9._:-]{1,100}$")
METADATA_KEY_CHARS = 128
INT64 = (-(2**63), 2**63 - 1)


def within(low: int, high: int) -> AfterValidator:
    """A range check whose message names the whole range (pydantic's names only the bound it broke), for
    the bounded counts of the API: limits, depths, caps, budgets."""

    def check(value: int) -> int:
        if not low <= value <= high:
            raise ValueError(f"must be from {low} to {high}")
        return value

    return AfterValidator(check)


def check_namespace(namespace: object) -> str:
    """A caller-nameable namespace: 1-64 of ``[A-Za-z0-9._-]``, and not one starting with ``_``.

    The ``_`` prefix is reserved for graphmem's own records (``_system`` today), so no caller can ever
    name a system namespace, now or after later additions.
    """
    if not isinstance(namespace, str) or not NAMESPACE_PATTERN.fullmatch(namespace):
        raise InvalidInput("namespace must be 1-64 characters of A-Z a-z 0-9 . _ -", field="namespace")
    if namespace.startswith("_"):
        raise InvalidInput("namespaces starting with '_' are reserved for the system", field="namespace")
    return namespace


def check_id(value: object) -> str:
    """Ids are app-generated (UUID4); this only bounds what a caller may send."""
    if not isinstance(value, str) or not ID_PATTERN.fullmatch(value):
        raise InvalidInput("id must be 1-100 characters of A-Z a-z 0-9 . _ : -", field="id")
    return value


def check_request_id(request_id: object) -> str:
    if not isinstance(request_id, str) or not REQUEST_ID_PATTERN.fullmatch(request_id):
        raise InvalidInput("request_id must be 8-100 characters of A-Z a-z 0-9 . _ -", field="request_id")
    return request_id


def check_metadata(metadata: object, max_bytes: int) -> dict[str, str | int | float | bool]:
    """A flat map of string keys to scalars, at most ``max_bytes`` as JSON. Stored as a JSON string."""
    if not isinstance(metadata, dict):
        raise InvalidInput("metadata must be a map of string keys to scalar values", field="metadata")
    for key, value in metadata.items():
        if not isinstance(key, str) or not 1 <= len(key) <= METADATA_KEY_CHARS:
            raise InvalidInput(f"metadata keys must be strings of 1-{METADATA_KEY_CHARS} characters",
                               field="metadata")
        if isinstance(value, bool | str):
            continue
        if isinstance(value, int):
            if not INT64[0] <= value <= INT64[1]:
                raise InvalidInput(f"metadata[{key!r}] does not fit a 64-bit integer", field="metadata")
            continue
        if isinstance(value, float):
            if not math.isfinite(value):
                raise InvalidInput(f"metadata[{key!r}] must be a finite number", field="metadata")
            continue
        kind = "nested map" if isinstance(value, dict) else "list" if isinstance(value, list) else "value"
        raise InvalidInput(
            f"metadata[{key!r}] is a {kind}: values must be strings, integers, floats or booleans",
            field="metadata",
        )
    size = len(json.dumps(metadata, sort_keys=True, ensure_ascii=False).encode())
    if size > max_bytes:
        raise InvalidInput(f"metadata is {size} bytes as JSON; at most {max_bytes} are allowed",
                           field="metadata")
    return metadata


def _limits(info: ValidationInfo) -> Limits:
    limits = (info.context or {}).get("limits")
    return limits if isinstance(limits, Limits) else Limits()


def invalid_input(exc: ValidationError) -> InvalidInput:
    """Pydantic's report as one ``InvalidInput`` listing every problem (no input values echoed)."""
    errors = exc.errors(include_url=False, include_input=False)
    problems = [f"{'.'.join(str(p) for p in e['loc']) or 'input'}: {str(e['msg']).removeprefix('Value error, ')}"
                for e in errors]
    return InvalidInput("; ".join(problems), fields=[str(e["loc"][0]) for e in errors if e["loc"]])


class _Input(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    @classmethod
    def parse(cls, limits: Limits, **values: Any) -> _Input:
        """Validate against ``limits``; any problem is one ``InvalidInput``."""
        try:
            return cls.model_validate(values, context={"limits": limits})
        except ValidationError as exc:
            raise invalid_input(exc) from None


def _content(value: str, info: ValidationInfo) -> str:
    if not value.strip():
        raise ValueError("must not be blank")
    limit = _limits(info).content_chars
    if len(value) > limit:
        raise ValueError(f"is {len(value)} characters; at most {limit} are allowed")
    return value


def _bounded(attribute: str) -> AfterValidator:
    """A length bound read from ``Limits.<attribute>`` at validation time."""

    def check(value: str | None, info: ValidationInfo) -> str | None:
        limit = getattr(_limits(info), attribute)
        if value is not None and len(value) > limit:
            raise ValueError(f"is {len(value)} characters; at most {limit} are allowed")
        return value

    return AfterValidator(check)


def _metadata(value: object, info: ValidationInfo) -> object:
    if value is None:
        return None
    try:
        return check_metadata(value, _limits(info).metadata_bytes)
    except InvalidInput as exc:
        raise ValueError(exc.message) from None


def _request_id(value: str | None) -> str | None:
    if value is not None and not REQUEST_ID_PATTERN.fullmatch(value):
        raise ValueError("must be 8-100 characters of A-Z a-z 0-9 . _ -")
    return value


Content = Annotated[str, Field(strict=True), AfterValidator(_content)]
RequestId = Annotated[str | None, Field(strict=True), AfterValidator(_request_id)]


class DocumentInput(_Input):
    content: Content
    title: Annotated[str | None, Field(strict=True), _bounded("title_chars")] = None
    source: Annotated[str | None, Field(strict=True), _bounded("source_chars")] = None
    metadata: Annotated[dict[str, Any] | None, BeforeValidator(_metadata)] = None
    request_id: RequestId = None


class UpdateInput(_Input):
    content: Content
    expected_version: Annotated[int | None, Field(strict=True, ge=1)] = None
    request_id: RequestId = None


class ForgetMode(StrEnum):
    soft = "soft"
    hard = "hard"
    redact = "redact"


class CallerContext(BaseModel):
    """Who is calling, reduced to what the service needs: the namespaces it may read and write.

    Built by the identity module for real callers; tests build it directly. Writing implies reading.
    """

    model_config = ConfigDict(frozen=True)

    read: frozenset[str] = frozenset()
    write: frozenset[str] = frozenset()

    @field_validator("read", "write")
    @classmethod
    def _names(cls, value: frozenset[str]) -> frozenset[str]:
        for namespace in value:
            check_namespace(namespace)
        return value

    @classmethod
    def for_namespaces(cls, *namespaces: str, writable: bool = True) -> CallerContext:
        names = frozenset(namespaces)
        return cls(read=names, write=names if writable else frozenset())

    @property
    def readable(self) -> list[str]:
        """Sorted, so the same caller sends the same query parameters."""
        return sorted(self.read | self.write)

    def can_read(self, namespace: str) -> bool:
        return namespace in self.read or namespace in self.write

    def can_write(self, namespace: str) -> bool:
        return namespace in self.write


class DocumentInfo(BaseModel):
    """One version of a memory, without its content."""

    id: str
    namespace: str
    chain_id: str
    version: int | None = Field(None, description="None when unknown, never a made-up 1")
    is_latest: bool
    is_forgotten: bool
    is_redacted: bool = False
    title: str | None = None
    source: str | None = None
    metadata: dict[str, str | int | float | bool] | None = None
    fact_count: int | None = None
    created_at: int | None = Field(None, description="first version's time, epoch ms UTC")
    recorded_at: int
    superseded_at: int | None = None
    forgotten_at: int | None = None
    restored_at: int | None = None
    redacted_at: int | None = None
    parent_id: str | None = Field(None, description="the previous version's id")

    @field_validator("metadata", mode="before")
    @classmethod
    def _decode(cls, value: object) -> object:
        return json.loads(value) if isinstance(value, str) else value

    @classmethod
    def from_row(cls, row: dict[str, Any], **extra: Any) -> DocumentInfo:
        return cls.model_validate({**row["document"], "parent_id": row.get("parent_id"), **extra})


class Document(DocumentInfo):
    content: str | None = Field(None, description="None once redacted")
    latest_id: str | None = Field(None, description="id of the chain's latest version")


class DocumentSummary(DocumentInfo):
    preview: str | None = None


T = TypeVar("T")


class Page(BaseModel, Generic[T]):
    items: list[T]
    total: int
    page: int
    limit: int

    @property
    def has_more(self) -> bool:
        return self.page * self.limit < self.total


class ForgetResult(BaseModel):
    id: str
    chain_id: str
    mode: ForgetMode
    documents: int = Field(description="versions affected (hard: deleted)")
    facts: int = Field(description="facts affected (hard: deleted)")

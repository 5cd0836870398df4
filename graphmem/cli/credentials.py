"""``graphmem credentials create|list|revoke``: the owner's administration from a shell, with or without a
running server (the command attaches to the data directory's engine, or starts one for its own run)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated

import typer

from graphmem.cli.common import DataDir, fail, settings
from graphmem.errors import GraphmemError, InvalidInput

if TYPE_CHECKING:
    from graphmem.runtime import Runtime

credentials_app = typer.Typer(help="Credentials: tokens with scopes (read, or read,write) and namespaces.",
                              no_args_is_help=True, rich_markup_mode=None)


def _runtime(data_dir: DataDir) -> Runtime:
    from graphmem.runtime import Runtime

    try:
        runtime = Runtime.open(settings(data_dir))
    except GraphmemError as exc:
        fail(exc)
    owner = runtime.identity.ensure_owner(runtime.settings.data_dir)
    if owner is not None:
        typer.echo(f"created the owner credential; its token is in {owner}", err=True)
    return runtime


@credentials_app.command("create")
def create(
    name: Annotated[str, typer.Argument(help="Who or what uses it (letters, digits, space, . _ @ : -).")],
    scope: Annotated[str, typer.Option(help="read, or read,write.")] = "read",
    namespace: Annotated[list[str], typer.Option(
        help="A namespace it may use; repeat for more, or '*' for any that does not start with '_'.")] = [],  # noqa: B006
    admin: Annotated[bool, typer.Option(help="May manage credentials.")] = False,
    data_dir: DataDir = None,
) -> None:
    """Create a credential and print its token once (graphmem keeps only a digest)."""
    from graphmem.identity import OPERATOR, NewCredential
    from graphmem.model import parse

    scopes = [part.strip() for part in scope.split(",") if part.strip()]
    if not namespace:
        fail(InvalidInput("name at least one --namespace (or '*')"), code=2)
    try:
        new = parse(NewCredential, {"name": name, "scopes": scopes, "namespaces": namespace, "admin": admin})
    except InvalidInput as exc:
        fail(exc, code=2)
    with _runtime(data_dir) as runtime:
        try:
            credential, token = runtime.identity.create(new, by=OPERATOR)
        except GraphmemError as exc:
            fail(exc)
    typer.echo(f"created credential {credential.id} ({credential.name}); its token, shown once:", err=True)
    typer.echo(token)


@credentials_app.command("list")
def list_credentials(
    data_dir: DataDir = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """List credentials (never a token or a digest)."""
    from graphmem.identity import OPERATOR

    with _runtime(data_dir) as runtime:
        found = runtime.identity.list(by=OPERATOR)
    if as_json:
        typer.echo(json.dumps([c.model_dump(mode="json") for c in found]))
        return
    for c in found:
        where = "*" if c.all_namespaces else ",".join(c.namespaces)
        state = "revoked" if c.revoked else "active"
        typer.echo(f"{c.id}  {c.name:<20} {','.join(c.scopes):<10} {where:<30} {'admin' if c.admin else '':<5}"
                   f" {state}")


@credentials_app.command("revoke")
def revoke(credential_id: Annotated[str, typer.Argument(help="The credential's id.")],
           data_dir: DataDir = None) -> None:
    """Revoke a credential: at once in a server of this process, within 5 s in any other. This is how the owner
    credential, or the last admin over every namespace, is revoked (the HTTP API refuses both)."""
    from graphmem.identity import OPERATOR

    with _runtime(data_dir) as runtime:
        try:
            revoked = runtime.identity.revoke(credential_id, by=OPERATOR)
        except GraphmemError as exc:
            fail(exc)
    typer.echo(f"revoked {revoked.id} ({revoked.name})")

"""The API for people: `/api` says what is there, `/api/docs` is the reference, both offline.

FastAPI's stock docs pages load their scripts and styles from a CDN, so they are off
(`docs_url=None`); the reference is rendered here, on the server, from the app's own OpenAPI
schema (`/api/openapi.json`) — every route with its arguments, their types, bounds, defaults
and help (the ones `tideline.fields` declares once for the CLI, MCP and the API), its body and
its answers — as one HTML page with the panel's stylesheet and no script.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from tideline import __version__
from tideline.web._routes import API, API_DOCS
from tideline.web.panel import page

router = APIRouter(include_in_schema=False)
Schema = dict[str, Any]
METHODS = ("get", "post", "put", "patch", "delete")


@dataclass
class Argument:
    name: str
    where: str  # query, path or body
    kind: str  # "integer, 1–200", "one of hybrid, lex, vec", …
    required: bool
    default: str
    help: str


@dataclass
class Route:
    method: str
    path: str
    summary: str
    help: str
    arguments: list[Argument] = field(default_factory=list)
    answers: list[tuple[str, str]] = field(default_factory=list)  # (status, what)

    @property
    def anchor(self) -> str:
        return f"{self.method}-{self.path}".lower().replace("/", "-").strip("-")


def routes(schema: Schema) -> list[tuple[str, list[Route]]]:
    """The schema's operations by tag, in the order the API declares them."""
    by_tag: dict[str, list[Route]] = {}
    components = schema.get("components", {}).get("schemas", {})
    for path, operations in schema.get("paths", {}).items():
        for method in METHODS:
            op = operations.get(method)
            if op is None:
                continue
            route = _route(method.upper(), path, op, components)
            by_tag.setdefault((op.get("tags") or ["other"])[0], []).append(route)
    return list(by_tag.items())


def _route(method: str, path: str, op: Schema, components: Schema) -> Route:
    text = (op.get("description") or "").strip()
    summary, _, rest = text.partition("\n")
    route = Route(method, path, summary.strip() or op.get("summary", ""), " ".join(rest.split()))
    for p in op.get("parameters", []):
        s = p.get("schema", {})
        route.arguments.append(
            Argument(
                p["name"],
                p["in"],
                kind(s),
                bool(p.get("required")),
                _default(s),
                p.get("description") or s.get("description", ""),
            )
        )
    body = op.get("requestBody", {}).get("content", {}).get("application/json", {})
    model = _resolve(body.get("schema", {}), components)
    required = set(model.get("required", []))
    for name, s in model.get("properties", {}).items():
        route.arguments.append(
            Argument(name, "body", kind(s), name in required, _default(s), s.get("description", ""))
        )
    for status, answer in op.get("responses", {}).items():
        what = answer.get("description", "")
        if status == "422":
            what = 'the request does not match the schema: {"error": …} naming the fields'
        route.answers.append((status, what))
    return route


def _resolve(s: Schema, components: Schema) -> Schema:
    ref = s.get("$ref", "")
    return components.get(ref.rsplit("/", 1)[-1], {}) if ref else s


def kind(s: Schema) -> str:
    """A schema as a person reads it: `integer, 1–200`, `text or list of text`, `one of a, b`."""
    if "anyOf" in s:
        parts = [kind(x) for x in s["anyOf"] if x.get("type") != "null"]
        return " or ".join(dict.fromkeys(parts)) or "null"
    if "enum" in s:
        return "one of " + ", ".join(str(v) for v in s["enum"])
    t = s.get("type", "any")
    if t == "array":
        return f"list of {kind(s.get('items', {}))}"
    name = {"string": "text", "integer": "integer", "number": "number", "boolean": "true/false"}
    out = name.get(t, str(t))
    low, high = s.get("minimum"), s.get("maximum")
    if low is not None or high is not None:
        out += (
            f", {_num(low) if low is not None else '…'}–{_num(high) if high is not None else '…'}"
        )
    if s.get("maxLength") is not None:
        out += f", at most {s['maxLength']:,} characters"
    return out


def _num(x: float) -> str:
    return f"{x:,.0f}" if float(x).is_integer() else f"{x:g}"


def _default(s: Schema) -> str:
    if "default" not in s or s["default"] in (None, ""):
        return ""
    value = s["default"]
    return str(value).lower() if isinstance(value, bool) else str(value)


@router.get(API)
def index(request: Request) -> Response:
    """What is here: the routes, the reference and the schema (a browser gets the reference)."""
    if "text/html" in request.headers.get("accept", ""):
        return RedirectResponse(API_DOCS, status_code=303)
    state = request.app.state.web
    listed = [
        {"method": r.method, "path": r.path, "summary": r.summary, "tag": tag}
        for tag, found in routes(request.app.openapi())
        for r in found
    ]
    return JSONResponse(
        {
            "api": f"Tideline REST API for {state.app.settings.agent_name}'s memory",
            "version": __version__,
            "reference": API_DOCS,
            "openapi": f"{API}/openapi.json",
            "mcp": "/mcp",
            "panel": "/",
            "routes": listed,
        }
    )


@router.get(API_DOCS, response_class=HTMLResponse)
def reference(request: Request) -> Response:
    """Every route of the API with its arguments and answers, from the OpenAPI schema."""
    return page(request, "api.html", tags=routes(request.app.openapi()), api=API)

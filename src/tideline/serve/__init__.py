"""What the drivers that serve share, below all of them: the HTTP guard (token, Origin, Host,
body caps), which tokens open which namespace, the pydantic reading of `tideline.fields`, the
JSON a result becomes, binding and announcing a port, and the `Endpoint` one driver hands
another's server (the MCP endpoint beside the REST API and the panel) — so the CLI, MCP and web
drivers never import each other.
"""

from tideline.serve._accept import check_bind, own_key, server_tokens
from tideline.serve._body import KIB, MIB
from tideline.serve._endpoint import Endpoint
from tideline.serve._fields import annotated
from tideline.serve._guard import NAMESPACE, HttpGuard, Sessions, is_loopback
from tideline.serve._listen import DEFAULT_HOST, DEFAULT_PORT, run_http
from tideline.serve._tokens import Key, Tokens
from tideline.serve._wire import names, to_dict

__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "KIB",
    "MIB",
    "NAMESPACE",
    "Endpoint",
    "HttpGuard",
    "Key",
    "Sessions",
    "Tokens",
    "annotated",
    "check_bind",
    "is_loopback",
    "names",
    "own_key",
    "run_http",
    "server_tokens",
    "to_dict",
]

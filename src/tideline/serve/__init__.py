"""What the drivers that serve share, below all of them: the HTTP guard (token, Origin, Host,
body caps), which tokens open which namespace, the pydantic reading of `tideline.fields`, the
JSON a result becomes, a tool's one-line errors, its schema from `tideline.fields` and the
service call it makes (`CALLS`; a pipeline's run, `RUN_CALLS`), binding and announcing a port,
and the `Endpoint` one driver hands another's server (the MCP endpoint beside the REST API and
the panel) — so the CLI, MCP and web drivers never import each other.
"""

from tideline.serve._accept import check_bind, own_key, server_tokens
from tideline.serve._body import KIB, MIB
from tideline.serve._calls import (
    CALLS,
    RUN_CALLS,
    SEARCHES,
    Call,
    Kind,
    Report,
    RunCall,
    Using,
    Work,
    names,
    run_tool,
    to_dict,
)
from tideline.serve._exit_sleep import start_exit_sleep
from tideline.serve._fields import annotated, command_model, tool_arguments, tool_schema
from tideline.serve._guard import NAMESPACE, HttpGuard, Sessions, client_of, is_loopback
from tideline.serve._listen import DEFAULT_HOST, DEFAULT_PORT, Endpoint, run_http
from tideline.serve._throttle import Throttle
from tideline.serve._tokens import Key, Tokens
from tideline.serve._tool_errors import describe_validation, error_message, one_line, searched

__all__ = [
    "CALLS",
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "KIB",
    "MIB",
    "NAMESPACE",
    "RUN_CALLS",
    "SEARCHES",
    "Call",
    "Endpoint",
    "HttpGuard",
    "Key",
    "Kind",
    "Report",
    "RunCall",
    "Sessions",
    "Throttle",
    "Tokens",
    "Using",
    "Work",
    "annotated",
    "check_bind",
    "client_of",
    "command_model",
    "describe_validation",
    "error_message",
    "is_loopback",
    "names",
    "one_line",
    "own_key",
    "run_http",
    "run_tool",
    "searched",
    "server_tokens",
    "start_exit_sleep",
    "to_dict",
    "tool_arguments",
    "tool_schema",
]

"""The dream prompts: listed and rendered with a day's inputs, for the pipeline and by hand.

Each layer's prompt is a packaged markdown file (`prompts/dream_*.md`, loaded by the one prompt
loader of `consolidate`). Its front matter names the `layer`, the `inputs` it reads in order and a
one-line `description`; its body has three parts:

    instructions            what to do (shared)
    <!-- answer -->        the JSON answer the pipeline validates
    <!-- by hand -->       how an MCP client's own model writes its result back through the tools

`render_prompt(name, inputs)` is the one way a prompt becomes messages: the layers call it with
the day's inputs, and the MCP server serves the same text (`by_hand=True`) so a client's model
can run a layer itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from tideline.consolidate._prompts import Prompt, packaged, prompt
from tideline.errors import InvalidInput
from tideline.llm import Message

ANSWER = "<!-- answer -->"
BY_HAND = "<!-- by hand -->"
PREFIX = "dream_"


@dataclass(frozen=True)
class PromptInfo:
    """One dream prompt as a listing shows it."""

    name: str
    version: int
    layer: str
    inputs: tuple[str, ...]
    description: str


@dataclass(frozen=True)
class RenderedPrompt:
    name: str
    version: int
    system: str
    user: str

    @property
    def messages(self) -> list[Message]:
        return [{"role": "system", "content": self.system}, {"role": "user", "content": self.user}]

    @property
    def label(self) -> str:
        return f"{self.name}@{self.version}"

    def text(self) -> str:
        """System and inputs as one text (an MCP prompt's single user message)."""
        return f"{self.system}\n\n{self.user}"


def _info(p: Prompt) -> PromptInfo:
    inputs = tuple(i.strip() for i in p.meta.get("inputs", "").split(",") if i.strip())
    return PromptInfo(
        p.step, p.version, p.meta.get("layer", ""), inputs, p.meta.get("description", "")
    )


def list_prompts() -> list[PromptInfo]:
    """Every dream prompt (name, version, layer, inputs, description), by name."""
    return [_info(prompt(name)) for name in packaged() if name.startswith(PREFIX)]


def dream_prompt(name: str) -> PromptInfo:
    if not name.startswith(PREFIX) or name not in packaged():
        known = [p.name for p in list_prompts()]
        raise InvalidInput(f"no dream prompt {name!r}; use one of {known}")
    return _info(prompt(name))


def render_prompt(name: str, inputs: Mapping[str, str], *, by_hand: bool = False) -> RenderedPrompt:
    """The prompt `name` with `inputs` (every input it names, as text): the system message is
    the instructions plus the JSON answer format, or with `by_hand` the instructions for writing
    back through the MCP tools; the user message is one markdown section per input, in order."""
    info = dream_prompt(name)
    missing = [i for i in info.inputs if i not in inputs]
    unknown = sorted(set(inputs) - set(info.inputs))
    if missing or unknown:
        raise InvalidInput(
            f"prompt {name} takes inputs {list(info.inputs)}; "
            + (f"missing {missing}" if missing else f"unknown {unknown}")
        )
    body = prompt(name).text
    head, _, rest = body.partition(ANSWER)
    answer, _, hand = rest.partition(BY_HAND)
    system = f"{head.strip()}\n\n{(hand if by_hand else answer).strip()}".strip()
    user = "\n\n".join(
        f"## {i.replace('_', ' ')}\n{inputs[i].strip() or '(none)'}" for i in info.inputs
    )
    return RenderedPrompt(name, info.version, system, user)

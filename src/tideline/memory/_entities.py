"""Reading a narrative's `entities_role` field: the rule writes validate against and the entity
graph of the script layer counts with.

`entities_role` is semi-structured text such as ``A=判断+执行; B=审查``. Parts are separated by
``;``, ``,`` or a line break, an entity and its roles by ``=`` — or by ``:`` in a part without
``=`` (``Ana: companion``), so a part with ``=`` may hold ``:`` in its names
(``Dr. Who: the doctor=friend``) — and roles by ``+``, ``/`` or ``、``. Full-width forms
(；，＝：＋／) are accepted: the text is NFKC normalised first. A part that cannot be read is
reported with its narrative id and skipped.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Hashable
from dataclasses import dataclass

_PART_SEPARATORS = re.compile(r"[;,\n]")
_ROLE_SEPARATORS = re.compile(r"[+/、]")


@dataclass(frozen=True, slots=True)
class MalformedPart:
    """A part of an `entities_role` field that was skipped, and why."""

    narrative_id: Hashable
    part: str
    reason: str


def _clean(text: str) -> str:
    return " ".join(text.split())


def parse_entities_role(
    text: str | None, narrative_id: Hashable = None
) -> tuple[dict[str, list[str]], list[MalformedPart]]:
    """Read one `entities_role` field into {entity: [roles]} plus the parts it had to skip.

    An entity named twice gets the union of its roles, in first-seen order.
    """
    roles: dict[str, list[str]] = {}
    bad: list[MalformedPart] = []
    if not text:
        return roles, bad
    for raw_part in _PART_SEPARATORS.split(unicodedata.normalize("NFKC", text)):
        part = _clean(raw_part)
        if not part:
            continue
        assign = "=" if "=" in part else ":"
        pieces = part.split(assign)
        if len(pieces) != 2:
            reason = (
                "no '=' between entity and roles"
                if len(pieces) == 1
                else f"more than one {assign!r}"
                + ("; put '=' between the entity and its roles" * (assign == ":"))
            )
            bad.append(MalformedPart(narrative_id, part, reason))
            continue
        entity = _clean(pieces[0])
        part_roles = [r for r in (_clean(x) for x in _ROLE_SEPARATORS.split(pieces[1])) if r]
        if not entity:
            bad.append(MalformedPart(narrative_id, part, "empty entity name"))
            continue
        if not part_roles:
            bad.append(MalformedPart(narrative_id, part, "no role after '='"))
            continue
        known = roles.setdefault(entity, [])
        known.extend(r for r in part_roles if r not in known)
    return roles, bad

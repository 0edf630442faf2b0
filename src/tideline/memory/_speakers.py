"""Which speakers a question names: "What did Caroline research?" names Caroline.

A question about a conversation most often names the person whose words answer it (on
LoCoMo, 97% of the evidence turns of a question naming one speaker are that speaker's), so the
turns of a named speaker are lifted (`Policy.speaker_weight`, the `speaker` mark). A name is
matched whole and case-folded ("caroline's" names Caroline; "Carol" does not); a speaker of
one character names nothing.

A question in Russian writes a Latin name in Cyrillic, declined: "Что Джина спроектировала…",
"Чего Джон, как он говорит Джине…". A capitalised Cyrillic word (less a case ending) names a
speaker when both sound alike (`sound`: transliterated, spelling variants folded — "c" as "k",
"j" and "дж", doubled letters, every run of vowels as one — and a last vowel dropped); among
speakers that sound alike (Gina and Jon both sound "jan") the one spelled most like the word
wins. A stop word ("Там") never names anyone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from difflib import SequenceMatcher
from functools import lru_cache

from tideline.search import STOP_WORDS


@lru_cache(maxsize=1024)
def _pattern(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<!\w){re.escape(name)}(?!\w)")


_CYRILLIC = str.maketrans(
    {
        **dict(zip("абвгдеёзийклмнопрстуфхыэ", "abvgdeeziiklmnoprstufhye", strict=True)),
        **{"ж": "zh", "ц": "ts", "ч": "ch", "ш": "sh", "щ": "sh", "ю": "yu", "я": "ya"},
        **{"ъ": "", "ь": ""},
    }
)
#: Russian case endings a name may carry ("Джине", "Джоном"); the word is also tried without.
_ENDINGS = ("ами", "ями", "ом", "ем", "ой", "ей", "ам", "ям", "у", "ю", "а", "я", "ы", "и", "е")
#: English spellings of one sound, folded the way a Russian transliteration writes them.
_SPELLING = [
    (re.compile(pattern), to)
    for pattern, to in (
        (r"dzh|zh", "j"),
        (r"ph", "f"),
        (r"th", "t"),
        (r"ck|q", "k"),
        (r"c(?=[eiy])", "s"),
        (r"c", "k"),
        (r"x", "ks"),
        (r"w", "v"),
        (r"z", "s"),
        (r"g(?=[eiy])", "j"),
        (r"(?<!^)h", ""),
        (r"e(?=s$)", ""),
        (r"([a-z])\1", r"\1"),
    )
]
_VOWELS = re.compile(r"[aeiouy]+")
_CYRILLIC_WORD = re.compile(r"[А-ЯЁ][а-яё]+")


def spelled(latin: str) -> str:
    """A Latin word with the spelling variants folded ("Caroline" → "karoline")."""
    text = latin.casefold()
    for pattern, to in _SPELLING:
        text = pattern.sub(to, text)
    return text


def sound(spelling: str) -> str:
    """A folded spelling's sound: every run of vowels one "a", a last vowel dropped
    ("karoline" → "karalan"; "kerolain", Кэролайн, → "karalan")."""
    text = _VOWELS.sub("a", spelling)
    return text[:-1] if len(text) > 2 and text.endswith("a") else text


def _latin_forms(word: str) -> list[str]:
    """A Cyrillic word, and the word less a case ending, transliterated and folded."""
    low = word.casefold()
    forms = [low] + [low[: -len(e)] for e in _ENDINGS if low.endswith(e) and len(low) > len(e) + 1]
    return [spelled(f.translate(_CYRILLIC)) for f in forms]


def _by_sound(question: str, speakers: set[str]) -> set[str]:
    """The Latin-named `speakers` a capitalised Cyrillic word of `question` sounds like."""
    latin = {s: spelled(s) for s in speakers if s.isascii() and len(s) > 2 and " " not in s}
    out: set[str] = set()
    for word in _CYRILLIC_WORD.findall(question):
        if word.casefold() in STOP_WORDS:
            continue
        forms = _latin_forms(word)
        sounds = {sound(f) for f in forms}
        alike = [s for s, spelling in latin.items() if sound(spelling) in sounds]
        if alike:
            out.add(max(alike, key=lambda s: max(_like(latin[s], f) for f in forms)))
    return out


def _like(a: str, b: str) -> float:
    return SequenceMatcher(None, a, b).ratio()


def named(question: str, speakers: Iterable[str], by_sound: bool = False) -> set[str]:
    """The `speakers` that `question` names (as given); `by_sound`: in Cyrillic too (see the
    module docstring)."""
    text = " ".join(question.casefold().split())
    out: set[str] = set()
    every = set(speakers)
    for speaker in every:
        name = " ".join(speaker.casefold().split())
        if len(name) > 1 and _pattern(name).search(text):
            out.add(speaker)
    return out | _by_sound(question, every - out) if by_sound else out

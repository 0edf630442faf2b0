"""Synthetic corpora with planted topics, so the right answer is known."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Planted:
    """A corpus of 30 narratives: three themes of 6 narratives each, 12 fillers."""

    docs: list[tuple[str, str]]
    themes: dict[str, set[str]]  # expected topic key -> member ids
    generic: str  # a word in every narrative
    noise: str  # a word in only 2 narratives
    borderline: str  # a word in exactly 3 narratives (survives min_df=3, not 4)
    wide: str  # a word in 7 of 30 narratives (23%: over max_df=0.2, under 0.25)


_FILLERS = {
    "zh": [
        "苹果",
        "香蕉",
        "火车",
        "电脑",
        "河流",
        "山峰",
        "森林",
        "沙漠",
        "城市",
        "乡村",
        "月亮",
        "星星",
        "海洋",
        "草原",
        "钢琴",
        "吉他",
        "书桌",
        "窗户",
        "花园",
        "桥梁",
        "灯塔",
        "港口",
        "机场",
        "车站",
        "医院",
        "学校",
        "银行",
        "市场",
        "剧院",
        "博物馆",
    ],
    "ru": [
        "яблоко",
        "банан",
        "поезд",
        "компьютер",
        "река",
        "вершина",
        "лес",
        "пустыня",
        "город",
        "деревня",
        "луна",
        "звезда",
        "океан",
        "степь",
        "рояль",
        "гитара",
        "стол",
        "окно",
        "сад",
        "мост",
        "маяк",
        "порт",
        "аэропорт",
        "вокзал",
        "больница",
        "школа",
        "банк",
        "рынок",
        "театр",
        "музей",
    ],
    "en": [
        "apple",
        "banana",
        "train",
        "computer",
        "river",
        "summit",
        "forest",
        "desert",
        "city",
        "village",
        "moon",
        "star",
        "ocean",
        "prairie",
        "piano",
        "guitar",
        "desk",
        "window",
        "garden",
        "bridge",
        "lighthouse",
        "harbor",
        "airport",
        "station",
        "hospital",
        "school",
        "bank",
        "market",
        "theater",
        "museum",
    ],
}

# Per language: (theme surface forms cycled over its 6 narratives, expected key), generic, noise,
# borderline, wide. Inflected forms must collapse onto one key.
_SPEC = {
    "zh": (
        [(["边界"], "边界"), (["拒绝"], "拒绝"), (["逃避"], "逃避")],
        "记忆",
        "海豚",
        "瀑布",
        "咖啡",
    ),
    "ru": (
        [
            (["граница", "границы", "границах"], "границ"),
            (["отказ", "отказа", "отказом"], "отказ"),
            (["бегство", "бегства", "бегством"], "бегств"),
        ],
        "разговор",
        "дельфин",
        "водопад",
        "кофе",
    ),
    "en": (
        [
            (["boundary", "boundaries"], "boundari"),
            (["refused", "refusing", "refuse"], "refus"),
            (["escaping", "escape", "escaped"], "escap"),
        ],
        "memory",
        "dolphin",
        "waterfall",
        "coffee",
    ),
}


def planted(lang: str) -> Planted:
    """Texts are comma-separated words, which keeps jieba's segmentation unambiguous."""
    themes, generic, noise, borderline, wide = _SPEC[lang]
    sep = "，" if lang == "zh" else ", "
    docs: list[tuple[str, str]] = []
    expected: dict[str, set[str]] = {}
    for i in range(30):
        nid = f"{lang}-{i:02d}"
        words = [_FILLERS[lang][i], generic]
        theme = i // 6
        if theme < 3:
            forms, key = themes[theme]
            words.insert(1, forms[i % len(forms)])
            expected.setdefault(key, set()).add(nid)
        if i in (28, 29):
            words.append(noise)
        if i in (18, 19, 20):
            words.append(borderline)
        if i in (21, 22, 23, 24, 25, 26, 27):
            words.append(wide)
        docs.append((nid, sep.join(words) + ("。" if lang == "zh" else ".")))
    return Planted(docs, expected, generic, noise, borderline, wide)

"""Stop words: function words that carry no topic, per language.

The document-frequency filter removes generic words on large corpora anyway; these lists keep
small corpora clean and save work. Lower-case, unstemmed (they are checked before stemming).
"""

from __future__ import annotations


def _words(block: str) -> frozenset[str]:
    return frozenset(block.split())


ENGLISH = _words(
    """
a about above after again against all almost also although always am among an and another any
anybody anyone anything anyway are aren't around as at away back be became because become been
before being below between both but by can can't cannot could couldn't did didn't do does doesn't
doing don't done down during each either else enough even ever every everyone everything few for
from further get gets getting give given go goes going gone got had hadn't has hasn't have haven't
having he he'd he'll he's her here here's hers herself him himself his how how's however i i'd i'll
i'm i've if in into is isn't it it's its itself just keep kept know known let let's like likely
made make makes many may maybe me might mine more most mostly much must mustn't my myself near need
needs neither never new next no nobody none nor not nothing now of off often oh ok okay old on once
one only onto or other others otherwise ought our ours ourselves out over own per perhaps put quite
rather really said same say says see seem seemed seems shall shan't she she'd she'll she's should
shouldn't since so some somebody someone something sometimes somewhat soon still such sure take
than that that's the their theirs them themselves then there there's therefore these they they'd
they'll they're they've thing things this those though through thus till to too toward towards
under until up upon us use used using very via was wasn't way we we'd we'll we're we've well were
weren't what what's whatever when when's where where's whether which while who who's whoever whom
whose why why's will with within without won't would wouldn't yes yet you you'd you'll you're
you've your yours yourself yourselves
"""
)

RUSSIAN = _words(
    """
а без более больше будет будто бы был была были было быть в вам вас вдруг ведь во вот впрочем все
всегда всего всех всю вы где да даже два для до другой его ее ей ему если есть еще ж же за зачем
здесь и из или им иногда их к как какая какой когда конечно кто куда ли лучше между меня мне много
может можно мой моя мы на над надо наконец нас не него нее ней нельзя нет ни нибудь никогда ним них
ничего но ну о об один он она они опять от очень по под после потом потому почти при про раз разве
с сам свою себе себя сегодня сейчас сказал сказала сказать со совсем так такой там тебя тем теперь
то тогда того тоже только том тот три тут ты у уж уже хорошо хоть чего чем через что чтоб чтобы
чуть эти этого этой этом этот эту я это эта мочь весь свой который наш ваш её также либо ещё
"""
)

CHINESE = _words(
    """
没有 觉得 知道 可以 时候 一个 这个 那个 什么 怎么 自己 已经 还是 就是 应该 需要 进行 表示 认为 东西
事情 现在 因为 所以 但是 如果 可能 这样 那样 这些 那些 我们 你们 他们 她们 它们 不是 出来 起来
一下 一些 有些 很多 非常 真的 然后 以后 之后 之前 感到 开始 继续 发现 成为 得到 看到 听到 说话
"""
)

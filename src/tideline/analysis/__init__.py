"""The deterministic script layer: pure computations over plain data, no LLM.

Topics (keywords that survive a document-frequency filter), soft k-means clusters with an
adjacency matrix, the entity-role graph, and the timeline chunks of the unindexed-context scanner:
everything re-exported here takes lists and arrays and returns dataclasses. The narrative rules it
applies (weights, recurrence, anti-inflation, tags, `entities_role`) are `tideline.memory`'s.

The script layer's own tables are created by `ANALYSIS_MIGRATIONS` and read and written only by
`ScriptTables`. The modules that wire the computations to an agent's `Memory` are imported by their
own names: `tideline.analysis.scripts` (topics, recurrence, entity graph, `topic_map`, `run_all`),
`.cluster_routing` (soft clusters in the database, `route_clusters`; measured, not wired into search), `.attention`
(`log_hits`, `heatmap`), `.prefetch` (`prefetch_pool`), `.scanner` (`scan_unindexed`) and
`.backfill` (`backfill_source_links`). See docs/scripts.md.
"""

import typing as _typing

from tideline.lazy import lazy_exports as _lazy_exports

if _typing.TYPE_CHECKING:
    from tideline.analysis._store import ANALYSIS_MIGRATIONS, ScriptTables
    from tideline.analysis.entity_graph import EntityGraph, StableRole, build_entity_graph, to_dot
    from tideline.analysis.keywords import Keyword, KeywordExtractor
    from tideline.analysis.soft_clusters import (
        Membership,
        SoftClustering,
        build_soft_clusters,
        choose_k,
        nearest_clusters,
        neighbours,
    )
    from tideline.analysis.timeline import (
        Chunk,
        Turn,
        chunk_turns,
        chunks_to_json,
        chunks_to_markdown,
    )
    from tideline.analysis.topics import TopicCluster, build_topics, merge_topics, topic_bounds

__all__ = [
    "ANALYSIS_MIGRATIONS",
    "Chunk",
    "EntityGraph",
    "Keyword",
    "KeywordExtractor",
    "Membership",
    "ScriptTables",
    "SoftClustering",
    "StableRole",
    "TopicCluster",
    "Turn",
    "build_entity_graph",
    "build_soft_clusters",
    "build_topics",
    "choose_k",
    "chunk_turns",
    "chunks_to_json",
    "chunks_to_markdown",
    "merge_topics",
    "nearest_clusters",
    "neighbours",
    "to_dot",
    "topic_bounds",
]

__getattr__, __dir__ = _lazy_exports(__name__)

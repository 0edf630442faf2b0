"""The deterministic script layer: pure computations over plain data, no LLM, no database.

Topics (keywords that survive a document-frequency filter), recurrence and anti-inflation,
soft k-means clusters with an adjacency matrix, the entity-role graph, and the timeline chunks of
the unindexed-context scanner. Everything re-exported here takes lists and arrays and returns
dataclasses.

The modules that wire these computations to the agent database are imported by their own names,
not re-exported here (the memory store itself uses the pure layer, so re-exporting them would be an
import cycle): `tideline.analysis.scripts` (topics, recurrence, entity graph, `run_all`),
`.routing` (soft clusters in the database, `widen`), `.attention` (`log_hits`, `heatmap`),
`.prefetch` (`prefetch_pool`), `.scanner` (`scan_unindexed`) and `.backfill`
(`backfill_source_links`). See docs/scripts.md.
"""

from tideline.analysis.entity_graph import EntityGraph, StableRole, build_entity_graph, to_dot
from tideline.analysis.keywords import Keyword, KeywordExtractor, extract_keywords
from tideline.analysis.soft_clusters import (
    Membership,
    SoftClustering,
    build_soft_clusters,
    choose_k,
    expand_clusters,
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
from tideline.analysis.topics import TopicCluster, build_topics, merge_topics

__all__ = [
    "Chunk",
    "EntityGraph",
    "Keyword",
    "KeywordExtractor",
    "Membership",
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
    "expand_clusters",
    "extract_keywords",
    "merge_topics",
    "nearest_clusters",
    "neighbours",
    "to_dot",
]

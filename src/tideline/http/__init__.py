"""The one HTTP client for the model servers Tideline calls: OpenAI-compatible JSON APIs.

The embedder (`POST /embeddings`) and the LLM client (`POST /chat/completions`) send through
`JsonApi`, so both follow one retry policy (`Retries`) and one bound on answers. See `_json_api`.
"""

from tideline.http._json_api import MAX_BODY, Answer, JsonApi, Retries, Unanswered

__all__ = ["MAX_BODY", "Answer", "JsonApi", "Retries", "Unanswered"]

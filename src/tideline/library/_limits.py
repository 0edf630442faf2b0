"""The library's bounds on a request, apart from the code that enforces them: the drivers'
argument specs (`tideline.fields`) read them without importing the index and its parsers."""

MAX_K = 100  # results per search or route: more is a dump, not an answer
MAX_READ_LINES = 400  # lines one read returns

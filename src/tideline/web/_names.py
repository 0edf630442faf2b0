"""The web layer's fixed names: paths, cookies and form fields, in one place."""

API = "/api"
API_DOCS = "/api/docs"  # the API reference page, rendered here from the OpenAPI schema
STATIC = "/static"
LOGIN = "/login"
FAVICON = "/favicon.ico"
LOGOUT = "/logout"
SESSION_COOKIE = "tideline_session"  # a signed login session (`_session`), set by the login form
CSRF_COOKIE = "tideline_csrf"
CSRF_FIELD = "csrf"
CSRF_HEADER = "x-csrf-token"

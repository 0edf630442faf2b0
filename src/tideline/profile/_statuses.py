"""A fact's statuses: the choices the drivers offer (`tideline.fields`) without building the
profile's record classes (a CLI search imports the fields, never the profile)."""

STATUSES = ("suspected", "confirmed", "established", "rejected", "closed")
ACTIVE_STATUSES = ("suspected", "confirmed", "established")
FINAL_STATUSES = ("rejected", "closed")

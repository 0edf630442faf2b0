"""The names of DREAM's layers, in pipeline order: what the drivers offer as choices
(`tideline.fields`) without importing the pipeline. `_dream.LAYERS` is checked against them."""

LAYER_NAMES = ("solidify", "sleep", "scripts", "comb", "drift", "dream")

import re

_SPACES = re.compile(r"\s+")


def collapse_spaces(text):
    """Collapse runs of whitespace into one space and strip both ends."""
    return _SPACES.sub(" ", text).strip()

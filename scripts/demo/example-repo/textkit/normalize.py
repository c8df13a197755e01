from .clean import collapse_spaces


def slugify(text, sep="-", max_length=None):
    """Turn a title into a URL slug: lower case, alphanumeric words joined by `sep`."""
    words = collapse_spaces(text.lower()).split(" ")
    kept = [w for w in ("".join(c for c in word if c.isalnum()) for word in words) if w]
    slug = sep.join(kept)
    if max_length is not None and len(slug) > max_length:
        slug = slug[:max_length].rstrip(sep)
    return slug

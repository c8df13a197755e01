def word_frequencies(text, top=None):
    """Count words case-insensitively; return (word, count) pairs, most frequent first."""
    counts = {}
    for word in text.lower().split():
        word = word.strip(".,;:!?\"'()")
        if not word:
            continue
        counts[word] = counts.get(word, 0) + 1
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    if top is not None:
        ranked = ranked[:top]
    return ranked

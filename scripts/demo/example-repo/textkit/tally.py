from .clean import collapse_spaces


class Tally:
    """Counts words and remembers the order in which they were first seen."""

    def __init__(self, case_sensitive=False):
        self.case_sensitive = case_sensitive
        self.counts = {}
        self.order = []

    def add(self, text):
        """Count every word of `text`."""
        for word in collapse_spaces(text).split(" "):
            if not word:
                continue
            key = word if self.case_sensitive else word.lower()
            if key not in self.counts:
                self.counts[key] = 0
                self.order.append(key)
            self.counts[key] += 1

    def count(self, word):
        return self.counts.get(word if self.case_sensitive else word.lower(), 0)

    def most_common(self):
        """The most frequent word (the first seen among equals), or None when nothing was counted."""
        if not self.order:
            return None
        best = self.order[0]
        for word in self.order[1:]:
            if self.counts[word] > self.counts[best]:
                best = word
        return best

    def remove(self, word):
        """Forget a word; a word never counted raises KeyError."""
        key = word if self.case_sensitive else word.lower()
        del self.counts[key]
        self.order.remove(key)

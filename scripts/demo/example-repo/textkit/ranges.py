class Interval:
    """A closed interval of numbers."""

    def __init__(self, lo, hi):
        if lo > hi:
            lo, hi = hi, lo
        self.lo = lo
        self.hi = hi

    def merge(self, other):
        """The smallest interval covering both; they must share a point."""
        if self.hi < other.lo or other.hi < self.lo:
            raise ValueError("intervals do not overlap")
        return Interval(min(self.lo, other.lo), max(self.hi, other.hi))

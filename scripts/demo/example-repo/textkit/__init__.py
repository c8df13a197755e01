from .normalize import slugify
from .stats import word_frequencies
from .ranges import Interval

__all__ = ["slugify", "word_frequencies", "Interval"]

"""The questions asked of a CacheGraph, one module per answer, each a plain function over the
graph named for what it returns: ``specs`` (a spec by hash, selections of specs), ``counts``
(names, counts, totals), ``overlaps``, ``dependencies``, ``mirrors``, ``facets``, ``search``,
``impact``, ``tags`` (tags in time, tag diffs), ``likeness`` (diffs, lookalikes, nearest) and
``coverage`` (of a lockfile)."""

"""The benchmarks, the load test and the tools beside them, run from the checkout's root as
modules (``python -m bench.benchmark``): each imports the installed ``cachegraph`` and its
neighbours as ``bench.*`` (and ``tests.*``), no path edited."""

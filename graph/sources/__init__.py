"""Where the data comes from: cache pages, spec files, build-cache mirrors (v2 and v3) and
lockfiles, each read into a store's rows (``reader.Reader``), in one process or two
(``loader.load``)."""

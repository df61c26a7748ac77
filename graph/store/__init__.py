"""The loaded data, held once: columns (``columns.Store``), how they are built
(``build.StoreBuilder``), the NetworkX graph over them (``view.CacheGraph``), the walks
over their dependency edges (``walks``) and their snapshot (``snapshot``)."""

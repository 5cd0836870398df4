"""The named Cypher statements (and the bundled engine's index SQL), shipped inside the wheel as the package
``graphmem.cypher`` (``pyproject.toml`` maps this folder there); read by ``graphmem/store/queries.py``."""

"""The demo bundle generator (``python -m demo --out data/demo``): six STaRK- and LIST-shaped
datasets with runs of the library's baseline retrievers. Not part of the :mod:`analysis` library.
"""

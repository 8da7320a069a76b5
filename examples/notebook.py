"""From a notebook to the dashboard: runs held in Python, one call, a link.

Run it cell by cell (the ``# %%`` cells of VS Code or Jupyter) or as a script::

    python -m examples.notebook          # from the project folder: starts the dashboard,
                                         # prints its URL, stops it
    python -m examples.notebook --keep   # ... and keeps it running until Ctrl-C

It reads the demo bundle's STaRK-MAG files, so it needs nothing but this project
(``pip install -r requirements.txt``, or ``pip install 'retrieval-error-dashboard[app]'``).
"""

# %% Runs and qrels as a notebook holds them
import sys
import time
from pathlib import Path

import analysis

demo = Path(__file__).resolve().parents[1] / "data" / "demo" / "stark-mag"

# a run as a DataFrame (query_id, doc_id, score; PyTerrier's qid, docno, score work too)
bm25 = analysis.load_run(demo / "runs" / "bm25.parquet")
# a run as a dict {query_id: {doc_id: score}}, the shape of a ranx Run (a ranx Run works too)
ngram: dict[str, dict[str, float]] = {}
frame = analysis.load_run(demo / "runs" / "char-ngram-tfidf.parquet")
for query, doc, score in frame[["query_id", "doc_id", "score"]].itertuples(index=False):
    ngram.setdefault(query, {})[doc] = score
# qrels as a DataFrame (or a path, a ranx Qrels, an ir_datasets qrels_iter(), a dict)
qrels = analysis.load_qrels(demo / "qrels.parquet")

# %% The numbers, in the notebook
per_query = analysis.evaluate(analysis.as_run(ngram), qrels, ["hit@1", "mrr"])
print(per_query[["hit@1", "mrr"]].mean().round(4).to_dict())

# %% The dashboard on the same objects: one call
app = analysis.dashboard({"bm25": bm25, "ngram": ngram}, qrels, name="notebook-example")
print(app.url)  # in Jupyter, `app` alone shows a link, and `app.show()` embeds the app

# %% Stop it (also done when Python exits)
if "--keep" in sys.argv:
    try:
        while app.running:
            time.sleep(1)
    except KeyboardInterrupt:
        pass
app.stop()
print("stopped")

"""Search-QA: Search-R1-style retrieval QA over a generated encyclopedia (``sdgym/SearchQA-v0``)."""

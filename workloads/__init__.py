"""The Ray payloads: one folder each, holding the code that runs inside Ray, its pinned runtime
requirements and its spec (`spec.py`: kind, pod sets, GPUs, default priority, Blob containers).

Only the specs are imported by the program; payload code reaches the pods as files.
"""

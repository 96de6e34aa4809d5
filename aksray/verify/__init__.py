"""`aksray verify`: a live cluster read against the plan of its stack, one line per difference.

`expected.py` says what the plan holds (the stack's objects, its controllers and their versions,
KAI's actions, Kueue's configuration), `compare.py` compares declared and live values,
`cluster.py` reads the cluster and reports.
"""

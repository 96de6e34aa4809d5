"""A live cluster: the Kubernetes client the rehearsal, and anything that reads or writes a running
cluster, use."""

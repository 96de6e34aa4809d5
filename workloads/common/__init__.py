"""Helpers every payload uses inside Ray: Blob paths and transfers with workload identity."""

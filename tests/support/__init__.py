"""What the tests share: the mock-runtime harness, the policy harness, chart-value helpers and
the CRD/CEL conformance library."""

"""The CRD conformance library: structural schemas, CEL rules and the objects the tests build."""

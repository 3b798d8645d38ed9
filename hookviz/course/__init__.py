"""Course tooling: build exercises from solutions, and the check helpers used by check cells."""

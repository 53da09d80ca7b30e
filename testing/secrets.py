"""The secrets of the test session's clusters: one set, shared by every server and service
process a test starts (so that table replicas, gateways and test clients agree)."""

from __future__ import annotations

from services.common.cluster_auth.secrets import ClusterSecrets

#: The session's secrets (fresh for every test run, like a new production Secret).
SESSION_SECRETS = ClusterSecrets()

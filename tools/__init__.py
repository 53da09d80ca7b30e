"""Developer tools: stub generation, the Redis Cluster ACL file."""

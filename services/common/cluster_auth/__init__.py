"""Who may do what inside the cluster: the identities of the services towards NATS, Redis and
the table service, their permissions, and the secrets that prove them.

- :mod:`.secrets`: one set of secrets for a cluster (generated for `make run` and for each
  test cluster; a Kubernetes Secret in production) and the environment each service gets.
- :mod:`.nats`: NATS users and their subject / JetStream permissions, as server config.
- :mod:`.redis`: Redis ACL users and their key patterns and commands, as an ACL file.
"""

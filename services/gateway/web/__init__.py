"""The gateway's web edge: the public API for browsers over Connect and gRPC-Web, and the web
client's files, on a second HTTP port of the gateway process (``DOMINOS_WEB_PORT``)."""
